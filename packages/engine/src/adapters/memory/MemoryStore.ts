import { Effect, Layer, Semaphore } from "effect"
import {
  type Doc,
  DuplicateKey,
  type Kind,
  type LedgerEntry,
  type Scope,
  Store,
  StoreError,
  type Tx,
  unbalanced,
  VersionConflict
} from "../../ports/Store.ts"

interface Tables {
  /** Rows by kind, then id: scans (list, due) touch one kind only. */
  readonly docs: Map<Kind, Map<string, Doc>>
  /** Unique keys by kind, then key: the id of the row that holds the key. */
  readonly keys: Map<Kind, Map<string, string>>
  readonly ledger: Array<LedgerEntry>
}

/**
 * Deep-freezes a value in place and returns it: every own enumerable property
 * (`Object.values`), recursively. The whole tree is walked on every write,
 * subtrees that are already frozen included, since a caller's `Object.freeze`
 * is shallow. A write costs the size of the row, the order of the copy the core
 * makes of the state it changes. (Keeping a WeakSet of the subtrees already
 * deep-frozen was tried: its upkeep, an ephemeron table holding every stored
 * object, cost far more than the walk it saves. A `for…in` walk was tried too:
 * over rows of many shapes its property loads go megamorphic.)
 */
const freeze = <T>(value: T): T => {
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return value
  for (const v of Object.values(value)) if (v !== null && typeof v === "object") freeze(v)
  return Object.freeze(value)
}

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

/**
 * What one unit of work has done so far: the rows it wrote and the unique keys
 * it claimed or released (overlaid on the tables when it reads), and the
 * ledger lines it posted. Nothing reaches the tables before `commit`.
 */
class Unit {
  /** Rows written, by kind then id (created on first write). */
  private staged: Map<Kind, Map<string, Doc>> | undefined = undefined
  /** Unique keys claimed (the id) or released (undefined), by kind then key. */
  private stagedKeys: Map<Kind, Map<string, string | undefined>> | undefined = undefined
  readonly posted: Array<LedgerEntry> = []
  private readonly tables: Tables

  constructor(tables: Tables) {
    this.tables = tables
  }

  read(kind: Kind, id: string): Doc | undefined {
    return this.staged?.get(kind)?.get(id) ?? this.tables.docs.get(kind)?.get(id)
  }

  readKey(kind: Kind, key: string): string | undefined {
    const s = this.stagedKeys?.get(kind)
    return s?.has(key) ? s.get(key) : this.tables.keys.get(kind)?.get(key)
  }

  stage(doc: Doc): void {
    this.staged ??= new Map()
    mapOf(this.staged, doc.kind).set(doc.id, doc)
  }

  /** The rows of one kind as this unit of work sees them (stored, overlaid with staged). */
  docsOf(kind: Kind): Array<Doc> {
    const rows: Array<Doc> = []
    const s = this.staged?.get(kind)
    const stored = this.tables.docs.get(kind)
    if (stored !== undefined) for (const [id, d] of stored) if (s === undefined || !s.has(id)) rows.push(d)
    if (s !== undefined) for (const d of s.values()) rows.push(d)
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

  /** Applies everything this unit of work did to the tables. */
  commit(): void {
    const tables = this.tables
    this.staged?.forEach((rows, kind) => {
      const stored = mapOf(tables.docs, kind)
      rows.forEach((d, id) => {
        stored.set(id, d)
      })
    })
    this.stagedKeys?.forEach((claims, kind) => {
      const stored = mapOf(tables.keys, kind)
      claims.forEach((id, key) => {
        if (id === undefined) stored.delete(key)
        else stored.set(key, id)
      })
    })
    for (const e of this.posted) tables.ledger.push(e)
  }
}

/** The operations of a unit of work over `unit`. */
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
      unit.stage(freeze({ ...doc, version: 1 }))
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
      unit.stage(freeze({ ...doc }))
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
  due: (kind, now, limit) =>
    Effect.sync(() =>
      unit
        .docsOf(kind)
        .filter((d) => d.due_at !== null && d.due_at <= now)
        .sort((a, b) => (a.due_at as number) - (b.due_at as number))
        .slice(0, limit)
    ),
  post: (entries) =>
    Effect.suspend(() => {
      if (!balanced(entries)) {
        const broken = unbalanced(entries)
        return Effect.fail(new StoreError({ message: `unbalanced ledger transaction ${broken.join(", ")}` }))
      }
      for (const e of entries) unit.posted.push(freeze({ ...e }))
      return Effect.void
    }),
  balances: (scope) => Effect.sync(() => unit.balances(scope))
})

/**
 * The in-memory reference Store. Units of work run one at a time (a one-permit
 * semaphore), against a staged overlay that is applied only when the work
 * succeeds, so a failed unit leaves nothing behind. Stored rows are deep-frozen:
 * reads hand out the stored object itself (no copy), and any attempt to mutate it
 * throws instead of silently changing stored state.
 */
export const makeMemoryStore = Effect.gen(function* () {
  const lock = yield* Semaphore.make(1)
  const tables: Tables = { docs: new Map(), keys: new Map(), ledger: [] }

  const transact = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Semaphore.withPermit(
      lock,
      Effect.suspend(() => {
        const unit = new Unit(tables)
        return Effect.map(work(txOf(unit)), (a) => {
          unit.commit()
          return a
        })
      })
    )

  return Store.of({
    transact,
    ledger: Effect.sync(() => [...tables.ledger])
  })
})

/** Layer of the in-memory Store: a fresh, empty store per build. */
export const layer: Layer.Layer<Store> = Layer.effect(Store, makeMemoryStore)
