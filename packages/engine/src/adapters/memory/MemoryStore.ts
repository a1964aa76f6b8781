import { Effect, Exit, Layer, Semaphore } from "effect"
import {
  type Doc,
  DuplicateKey,
  type Kind,
  type LedgerEntry,
  Store,
  StoreError,
  type Tx,
  unbalanced,
  VersionConflict
} from "../../ports/Store.ts"

interface Tables {
  /** Rows by kind, then id: scans (list, due) touch one kind only. */
  docs: Map<Kind, Map<string, Doc>>
  keys: Map<string, string>
  ledger: Array<LedgerEntry>
}

/** Objects this module has deep-frozen (a caller's `Object.freeze` is only shallow). */
const deepFrozen = new WeakSet<object>()

/**
 * Deep-freezes a value in place and returns it. Subtrees this module already
 * deep-froze are skipped, so re-storing a record that shares most of its
 * structure with the previous version (a timeline grown by one entry) costs only
 * the new parts.
 */
const freeze = <T>(value: T): T => {
  if (value === null || typeof value !== "object" || deepFrozen.has(value) || ArrayBuffer.isView(value)) return value
  for (const v of Object.values(value)) freeze(v)
  Object.freeze(value)
  deepFrozen.add(value)
  return value
}

const rowKey = (kind: Kind, id: string) => `${kind}\u0000${id}`
const kindOf = (key: string) => key.slice(0, key.indexOf("\u0000")) as Kind
const uniqueKey = (kind: Kind, key: string) => `${kind}\u0000${key}`

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
        const staged = new Map<string, Doc | undefined>()
        const stagedKeys = new Map<string, string | undefined>()
        const posted: Array<LedgerEntry> = []

        const base = (kind: Kind): Map<string, Doc> => {
          let m = tables.docs.get(kind)
          if (m === undefined) {
            m = new Map()
            tables.docs.set(kind, m)
          }
          return m
        }
        const read = (k: string): Doc | undefined =>
          staged.has(k) ? staged.get(k) : tables.docs.get(kindOf(k))?.get(k.slice(k.indexOf("\u0000") + 1))
        const readKey = (k: string): string | undefined => (stagedKeys.has(k) ? stagedKeys.get(k) : tables.keys.get(k))
        /** The rows of one kind as this unit of work sees them (stored, overlaid with staged). */
        const docsOf = (kind: Kind): Array<Doc> => {
          const rows: Array<Doc> = []
          for (const [id, d] of base(kind)) if (!staged.has(rowKey(kind, id))) rows.push(d)
          for (const d of staged.values()) if (d !== undefined && d.kind === kind) rows.push(d)
          return rows
        }
        /** Claims `doc`'s unique keys (releasing `previous`'s); the clashing key, if any, claims nothing. */
        const claimKeys = (doc: Doc, previous: Doc | undefined): DuplicateKey | undefined => {
          for (const key of doc.keys) {
            const owner = readKey(uniqueKey(doc.kind, key))
            if (owner !== undefined && owner !== doc.id) return new DuplicateKey({ kind: doc.kind, key })
          }
          for (const key of previous?.keys ?? []) stagedKeys.set(uniqueKey(doc.kind, key), undefined)
          for (const key of doc.keys) stagedKeys.set(uniqueKey(doc.kind, key), doc.id)
          return undefined
        }

        const tx: Tx = {
          get: (kind, id) => Effect.sync(() => read(rowKey(kind, id))),
          getByKey: (kind, key) =>
            Effect.sync(() => {
              const id = readKey(uniqueKey(kind, key))
              return id === undefined ? undefined : read(rowKey(kind, id))
            }),
          insert: (doc) =>
            Effect.suspend((): Effect.Effect<void, DuplicateKey> => {
              const k = rowKey(doc.kind, doc.id)
              if (read(k) !== undefined) return Effect.fail(new DuplicateKey({ kind: doc.kind, key: `id:${doc.id}` }))
              const clash = claimKeys(doc, undefined)
              if (clash !== undefined) return Effect.fail(clash)
              staged.set(k, freeze({ ...doc, version: 1 }))
              return Effect.void
            }),
          update: (doc) =>
            Effect.suspend((): Effect.Effect<void, VersionConflict | DuplicateKey> => {
              const k = rowKey(doc.kind, doc.id)
              const current = read(k)
              if (current === undefined || current.version !== doc.version - 1) {
                return Effect.fail(new VersionConflict({ kind: doc.kind, id: doc.id }))
              }
              const clash = claimKeys(doc, current)
              if (clash !== undefined) return Effect.fail(clash)
              staged.set(k, freeze({ ...doc }))
              return Effect.void
            }),
          list: (kind, scope, page) =>
            Effect.sync(() => {
              const rows = docsOf(kind)
                .filter((d) => d.business_id === scope.business_id && d.mode === scope.mode)
                .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
              return { docs: rows.slice(page.offset, page.offset + page.limit), total: rows.length }
            }),
          due: (kind, now, limit) =>
            Effect.sync(() =>
              docsOf(kind)
                .filter((d) => d.due_at !== null && d.due_at <= now)
                .sort((a, b) => (a.due_at as number) - (b.due_at as number))
                .slice(0, limit)
            ),
          post: (entries) =>
            Effect.suspend(() => {
              const broken = unbalanced(entries)
              if (broken.length > 0) {
                return Effect.fail(new StoreError({ message: `unbalanced ledger transaction ${broken.join(", ")}` }))
              }
              posted.push(...entries.map((e) => freeze({ ...e })))
              return Effect.void
            }),
          balances: (scope) =>
            Effect.sync(() => {
              const sums = new Map<string, { account: string; currency: "GMD" | "USD"; amount: bigint }>()
              for (const e of [...tables.ledger, ...posted]) {
                if (e.business_id !== scope.business_id || e.mode !== scope.mode) continue
                const k = `${e.account}/${e.currency}`
                const row = sums.get(k) ?? { account: e.account, currency: e.currency, amount: 0n }
                row.amount += e.amount
                sums.set(k, row)
              }
              return [...sums.values()]
            })
        }

        return Effect.exit(work(tx)).pipe(
          Effect.flatMap((exit) => {
            if (Exit.isSuccess(exit)) {
              for (const [, d] of staged) if (d !== undefined) base(d.kind).set(d.id, d)
              for (const [k, id] of stagedKeys) {
                if (id === undefined) tables.keys.delete(k)
                else tables.keys.set(k, id)
              }
              tables.ledger.push(...posted)
            }
            return exit
          })
        )
      })
    )

  return Store.of({
    transact,
    ledger: Effect.sync(() => [...tables.ledger])
  })
})

/** Layer of the in-memory Store: a fresh, empty store per build. */
export const layer: Layer.Layer<Store> = Layer.effect(Store, makeMemoryStore)
