import { Context, Effect, Layer, Semaphore } from "effect"
import {
  type Doc,
  DuplicateKey,
  type Kind,
  type LedgerEntry,
  type Scope,
  Store,
  StoreError,
  StorePurge,
  type Tx,
  unbalanced,
  VersionConflict
} from "../../ports/Store.ts"
import { DueIndex } from "./DueIndex.ts"

interface Tables {
  /** Rows by kind, then id: scans (list, due) touch one kind only. */
  readonly docs: Map<Kind, Map<string, Doc>>
  /** Unique keys by kind, then key: the id of the row that holds the key. */
  readonly keys: Map<Kind, Map<string, string>>
  /** Rows with a `due_at`, by kind, in due order: `due` reads them without scanning the kind. */
  readonly due: Map<Kind, DueIndex>
  readonly ledger: Array<LedgerEntry>
}

/**
 * Deep-freezes `value` in place: every own enumerable property, recursively,
 * except the subtrees it shares with `stored`, walked side by side (same index
 * of an array, same key of an object).
 *
 * `stored` is the row's current version, and every object reachable from a
 * stored (or staged) row was deep-frozen by this store when it was written: a
 * subtree of the new version that *is* the object at the same place in the
 * current one is already deep-frozen, whatever froze it, so the walk skips it.
 * That is what the core's updates look like (`{...state, timeline: [...state.timeline, entry]}`):
 * only what is new gets walked and frozen. Any other object is walked in full,
 * frozen or not, since a caller's `Object.freeze` is shallow. Pass `undefined`
 * as `stored` for a new row.
 *
 * (Keeping a WeakSet of every deep-frozen subtree was tried: its upkeep, an
 * ephemeron table holding every stored object, cost far more than the walk it
 * saves. `Object.values` allocates an array per object walked; `for…in` over
 * the enum cache allocates nothing and reads only the object-valued keys of
 * `stored`.)
 */
const freeze = (value: unknown, stored: unknown): void => {
  if (value === stored || value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return
  if (Array.isArray(value)) {
    const before = Array.isArray(stored) ? (stored as ReadonlyArray<unknown>) : undefined
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i]
      if (v !== null && typeof v === "object") freeze(v, before?.[i])
    }
  } else {
    const record = value as Record<string, unknown>
    const before = stored !== null && typeof stored === "object" ? (stored as Record<string, unknown>) : undefined
    for (const k in record) {
      const v = record[k]
      if (v !== null && typeof v === "object" && Object.hasOwn(record, k)) {
        freeze(v, before !== undefined && Object.hasOwn(before, k) ? before[k] : undefined)
      }
    }
  }
  Object.freeze(value)
}

/** The unique keys of a row that has none, shared by all of them. */
const noKeys: ReadonlyArray<string> = Object.freeze([])

/**
 * The stored form of `doc`: a new envelope of the port's fields only (one
 * shape for every row), with `version`, deep-frozen; `data` and `keys` are
 * frozen in place except what they share with `current` (see `freeze`).
 */
const storedDoc = (doc: Doc, version: number, current: Doc | undefined): Doc => {
  const keys = doc.keys.length === 0 ? noKeys : doc.keys
  if (keys !== noKeys) freeze(keys, current?.keys)
  freeze(doc.data, current?.data)
  return Object.freeze({
    kind: doc.kind,
    id: doc.id,
    business_id: doc.business_id,
    mode: doc.mode,
    created_at: doc.created_at,
    version,
    due_at: doc.due_at,
    keys,
    data: doc.data
  })
}

/**
 * A copy of a ledger line: the port's fields only, all primitives. The ledger
 * keeps its own copy of every posted line and hands out copies (`ledger`), and
 * `balances` builds new rows: no caller ever holds an object the ledger keeps,
 * so its lines need no freezing (rows, read far more often, are frozen and
 * handed out as they are).
 */
const entryCopy = (e: LedgerEntry): LedgerEntry => ({
  id: e.id,
  transaction_id: e.transaction_id,
  business_id: e.business_id,
  mode: e.mode,
  account: e.account,
  currency: e.currency,
  amount: e.amount,
  created_at: e.created_at,
  cause: e.cause
})

/** The map of `kind` in `tables`, created on first use. */
const mapOf = <V>(tables: Map<Kind, Map<string, V>>, kind: Kind): Map<string, V> => {
  let m = tables.get(kind)
  if (m === undefined) {
    m = new Map()
    tables.set(kind, m)
  }
  return m
}

/** Same unique keys, in the same order. */
const sameKeys = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  if (a === b) return true
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * Whether `entries` balance: `unbalanced(entries)` is empty. Small sets (a
 * posting has a handful of lines) are summed in place, without the keys and
 * the Map `unbalanced` builds; larger ones go to `unbalanced` itself.
 */
const balanced = (entries: ReadonlyArray<LedgerEntry>): boolean => {
  if (entries.length > 16) return unbalanced(entries).length === 0
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as LedgerEntry
    let first = true
    for (let j = 0; j < i && first; j++) {
      const o = entries[j] as LedgerEntry
      if (o.transaction_id === e.transaction_id && o.currency === e.currency) first = false
    }
    if (!first) continue // its group was summed with its first line
    let sum = 0n
    for (let j = i; j < entries.length; j++) {
      const o = entries[j] as LedgerEntry
      if (o.transaction_id === e.transaction_id && o.currency === e.currency) sum += o.amount
    }
    if (sum !== 0n) return false
  }
  return true
}

/** Due order: oldest `due_at` first (both set), then by id, as `DueIndex` orders rows. */
const dueOrder = (a: Doc, b: Doc): number =>
  (a.due_at as number) - (b.due_at as number) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** The staged rows of a unit that wrote none (never written to: the first write replaces it). */
const noDocs = Object.freeze([]) as unknown as Array<Doc>

/** Rows a unit of work keeps in a list before it indexes them by kind and id. */
const staged_list_max = 16

/**
 * What one unit of work has done so far: the rows it wrote and the unique keys it
 * claimed or released (overlaid on the tables when it reads), and the ledger
 * lines it posted. Nothing reaches the tables before `commit`.
 *
 * A unit writes a handful of rows, so they are kept in a list searched from
 * the end (no Map to build per unit) until there are `staged_list_max` of
 * them; past that, an index by kind then id takes over.
 */
class Unit {
  private readonly tables: Tables
  /** Rows written, the latest version of each once (replaced in place on a second write). */
  private staged: Array<Doc> = noDocs
  /** Position of each row of `staged` by kind then id, once there are many. */
  private index: Map<Kind, Map<string, number>> | undefined = undefined
  /** Unique keys claimed (the id) or released (undefined), by kind then key (created on first claim). */
  private stagedKeys: Map<Kind, Map<string, string | undefined>> | undefined = undefined
  /** Ledger lines posted (each `post` call's copies, in order). */
  private posted: ReadonlyArray<LedgerEntry> = []

  constructor(tables: Tables) {
    this.tables = tables
  }

  /** Where the row `kind`/`id` is in `staged`, or -1. */
  private position(kind: Kind, id: string): number {
    const staged = this.staged
    if (this.index !== undefined) return this.index.get(kind)?.get(id) ?? -1
    for (let i = staged.length - 1; i >= 0; i--) {
      const d = staged[i] as Doc
      if (d.id === id && d.kind === kind) return i
    }
    return -1
  }

  read(kind: Kind, id: string): Doc | undefined {
    if (this.staged.length > 0) {
      const at = this.position(kind, id)
      if (at >= 0) return this.staged[at]
    }
    return this.tables.docs.get(kind)?.get(id)
  }

  readKey(kind: Kind, key: string): string | undefined {
    const s = this.stagedKeys?.get(kind)
    return s?.has(key) ? s.get(key) : this.tables.keys.get(kind)?.get(key)
  }

  stage(doc: Doc): void {
    const at = this.position(doc.kind, doc.id)
    if (at >= 0) {
      this.staged[at] = doc
      return
    }
    // a literal on the first write: a first `push` on `[]` reserves 17 slots
    if (this.staged.length === 0) this.staged = [doc]
    else this.staged.push(doc)
    const staged = this.staged
    if (this.index !== undefined) mapOf(this.index, doc.kind).set(doc.id, staged.length - 1)
    else if (staged.length > staged_list_max) {
      const index = new Map<Kind, Map<string, number>>()
      for (let i = 0; i < staged.length; i++) {
        const d = staged[i] as Doc
        mapOf(index, d.kind).set(d.id, i)
      }
      this.index = index
    }
  }

  /**
   * At most `limit` rows of `kind` due at `now` as this unit of work sees them,
   * oldest due first, then by id: the stored ones from the kind's due index
   * (leaving out rows this unit rewrote), merged with the staged ones.
   */
  due(kind: Kind, now: number, limit: number): Array<Doc> {
    if (limit <= 0) return []
    let mine: Array<Doc> | undefined
    for (let i = 0; i < this.staged.length; i++) {
      const d = this.staged[i] as Doc
      if (d.kind !== kind) continue
      if (mine === undefined) mine = [d]
      else mine.push(d)
    }
    const rows: Array<Doc> = []
    const index = this.tables.due.get(kind)
    if (index !== undefined && index.size > 0) {
      const stored = this.tables.docs.get(kind) as Map<string, Doc>
      const skip = mine === undefined ? undefined : new Set(mine.map((d) => d.id))
      for (const id of index.due(now, limit, skip)) rows.push(stored.get(id) as Doc)
    }
    if (mine === undefined) return rows
    for (const d of mine) if (d.due_at !== null && d.due_at <= now) rows.push(d)
    return rows.sort(dueOrder).slice(0, limit)
  }

  /** The rows of one kind as this unit of work sees them (stored, overlaid with staged). */
  docsOf(kind: Kind): Array<Doc> {
    const mine = this.staged.filter((d) => d.kind === kind)
    const rows: Array<Doc> = []
    const stored = this.tables.docs.get(kind)
    if (stored !== undefined) {
      if (mine.length === 0) for (const d of stored.values()) rows.push(d)
      else {
        const ids = new Set(mine.map((d) => d.id))
        for (const [id, d] of stored) if (!ids.has(id)) rows.push(d)
      }
    }
    for (const d of mine) rows.push(d)
    return rows
  }

  /** Claims `doc`'s unique keys (releasing `previous`'s); the clashing key, if any, claims nothing. */
  claimKeys(doc: Doc, previous: Doc | undefined): DuplicateKey | undefined {
    // the current row holds its keys, so the same keys again claim and release nothing
    if (previous !== undefined && sameKeys(doc.keys, previous.keys)) return undefined
    for (const key of doc.keys) {
      const owner = this.readKey(doc.kind, key)
      if (owner !== undefined && owner !== doc.id) return new DuplicateKey({ kind: doc.kind, key })
    }
    if (previous === undefined && doc.keys.length === 0) return undefined
    this.stagedKeys ??= new Map()
    const claims = mapOf(this.stagedKeys, doc.kind)
    for (const key of previous?.keys ?? []) claims.set(key, undefined)
    for (const key of doc.keys) claims.set(key, doc.id)
    return undefined
  }

  balances(scope: Scope) {
    const sums = new Map<string, { account: string; currency: "GMD" | "USD"; amount: bigint }>()
    for (const e of [...this.tables.ledger, ...this.posted]) {
      if (e.business_id !== scope.business_id || e.mode !== scope.mode) continue
      const k = `${e.account}/${e.currency}`
      const row = sums.get(k) ?? { account: e.account, currency: e.currency, amount: 0n }
      row.amount += e.amount
      sums.set(k, row)
    }
    return [...sums.values()]
  }

  post(entries: ReadonlyArray<LedgerEntry>): void {
    this.posted = this.posted.length === 0 ? entries : [...this.posted, ...entries]
  }

  /** Applies everything this unit of work did to the tables. */
  commit(): void {
    const tables = this.tables
    const staged = this.staged
    for (let i = 0; i < staged.length; i++) {
      const d = staged[i] as Doc
      const rows = mapOf(tables.docs, d.kind)
      const before = rows.get(d.id)
      rows.set(d.id, d)
      if ((before === undefined ? null : before.due_at) !== d.due_at) {
        let index = tables.due.get(d.kind)
        if (index === undefined) {
          index = new DueIndex()
          tables.due.set(d.kind, index)
        }
        index.set(d.id, d.due_at)
      }
    }
    this.stagedKeys?.forEach((claims, kind) => {
      const stored = mapOf(tables.keys, kind)
      claims.forEach((id, key) => {
        if (id === undefined) stored.delete(key)
        else stored.set(key, id)
      })
    })
    const posted = this.posted
    for (let i = 0; i < posted.length; i++) tables.ledger.push(posted[i] as LedgerEntry)
  }
}

/**
 * The operations of a unit of work over `unit`. A plain object of functions
 * (as the port describes it), so a caller may decorate it with `{ ...tx, insert }`.
 * Each operation does its work when its Effect runs, not when it is built.
 */
const txOf = (unit: Unit): Tx => ({
  get: (kind, id) => Effect.sync(() => unit.read(kind, id)),
  getByKey: (kind, key) =>
    Effect.sync(() => {
      const id = unit.readKey(kind, key)
      return id === undefined ? undefined : unit.read(kind, id)
    }),
  insert: (doc) =>
    Effect.suspend((): Effect.Effect<void, DuplicateKey> => {
      if (unit.read(doc.kind, doc.id) !== undefined) {
        return Effect.fail(new DuplicateKey({ kind: doc.kind, key: `id:${doc.id}` }))
      }
      const clash = unit.claimKeys(doc, undefined)
      if (clash !== undefined) return Effect.fail(clash)
      unit.stage(storedDoc(doc, 1, undefined))
      return Effect.void
    }),
  update: (doc) =>
    Effect.suspend((): Effect.Effect<void, VersionConflict | DuplicateKey> => {
      const current = unit.read(doc.kind, doc.id)
      if (current === undefined || current.version !== doc.version - 1) {
        return Effect.fail(new VersionConflict({ kind: doc.kind, id: doc.id }))
      }
      const clash = unit.claimKeys(doc, current)
      if (clash !== undefined) return Effect.fail(clash)
      unit.stage(storedDoc(doc, doc.version, current))
      return Effect.void
    }),
  list: (kind, scope, page) =>
    Effect.sync(() => {
      const rows = unit
        .docsOf(kind)
        .filter((d) => d.business_id === scope.business_id && d.mode === scope.mode)
        .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      return { docs: rows.slice(page.offset, page.offset + page.limit), total: rows.length }
    }),
  due: (kind, now, limit) => Effect.sync(() => unit.due(kind, now, limit)),
  post: (entries) =>
    Effect.suspend(() => {
      if (!balanced(entries)) {
        const broken = unbalanced(entries)
        return Effect.fail(new StoreError({ message: `unbalanced ledger transaction ${broken.join(", ")}` }))
      }
      unit.post(entries.map(entryCopy))
      return Effect.void
    }),
  balances: (scope) => Effect.sync(() => unit.balances(scope))
})

/**
 * The in-memory reference Store. Units of work run one at a time (a one-permit
 * semaphore), against a staged overlay that is applied only when the work
 * succeeds, so a failed unit leaves nothing behind. Stored rows are deep-frozen:
 * reads hand out the stored object itself (no copy), and any attempt to mutate it
 * throws instead of silently changing stored state. With it, its `StorePurge`
 * over the same tables (a purge takes the same lock as a unit of work).
 */
export const makeWithPurge: Effect.Effect<{
  readonly store: Store["Service"]
  readonly purge: StorePurge["Service"]
}> = Effect.gen(function* () {
  const lock = yield* Semaphore.make(1)
  const tables: Tables = { docs: new Map(), keys: new Map(), due: new Map(), ledger: [] }

  const transact = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    lock.withPermit(
      Effect.suspend(() => {
        const unit = new Unit(tables)
        return Effect.map(work(txOf(unit)), (a) => {
          unit.commit()
          return a
        })
      })
    )

  const store = Store.of({
    transact,
    ledger: Effect.sync(() => tables.ledger.map(entryCopy))
  })
  // between units of work (the same lock): a unit never sees a row go in the middle of it
  const purge = StorePurge.of({
    purgeDue: (kind, before, limit) =>
      lock.withPermit(
        Effect.sync(() => {
          const index = tables.due.get(kind)
          if (index === undefined) return 0
          const rows = tables.docs.get(kind) as Map<string, Doc>
          const keys = tables.keys.get(kind)
          const ids = index.due(before, limit)
          for (const id of ids) {
            for (const key of (rows.get(id) as Doc).keys) keys?.delete(key)
            rows.delete(id)
            index.set(id, null)
          }
          return ids.length
        })
      )
  })
  return { store, purge }
})

/** The in-memory Store alone (its `StorePurge` is in `layer`). */
export const makeMemoryStore: Effect.Effect<Store["Service"]> = Effect.map(makeWithPurge, ({ store }) => store)

/** The in-memory Store and its `StorePurge`: a fresh, empty store per build. */
export const layerWithPurge: Layer.Layer<Store | StorePurge> = Layer.effectContext(
  Effect.map(makeWithPurge, ({ store, purge }) => Context.make(Store, store).pipe(Context.add(StorePurge, purge)))
)

/** Layer of the in-memory Store (with its `StorePurge`): a fresh, empty store per build. */
export const layer: Layer.Layer<Store> = layerWithPurge
