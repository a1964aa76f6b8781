/**
 * The Store conformance suite. Every Store adapter (in-memory, PostgreSQL,
 * SQLite…) runs the same tests:
 *
 * ```ts
 * import { runsFromEnv, storeConformance } from "@xaalis/testkit"
 * storeConformance("postgres", () => PgStore.layer(url), { runs: runsFromEnv(50) })
 * ```
 *
 * Each test builds a fresh store from `makeLayer()` and expects it to start
 * empty (no rows, no ledger lines). Tests within the suite run one after the
 * other, so a durable adapter may truncate its tables when the layer is built;
 * but vitest runs test FILES in parallel: give every file that runs a suite its
 * own database or schema (or set `fileParallelism: false`). The layer may fail
 * to build (`Layer<Store, E>`): the test fails with its error.
 *
 * What the suite fixes beyond the port's types (so every adapter agrees):
 * - `list` ties on `created_at` are broken by `id`, descending (newest first on both).
 * - `due` looks at every scope (it feeds the scheduler); its order among equal `due_at` is free.
 * - `balances` may or may not report accounts whose sum is zero; the suite ignores zero rows.
 * - The order of `ledger` is free; the suite compares it by entry id.
 * - `ledger` and errors are compared by value and `_tag`, never by `instanceof`.
 */

import {
  type Doc,
  type Kind,
  type LedgerEntry,
  type Scope,
  Store,
  type StoreError,
  StorePurge,
  store_text_length_max,
  type Tx,
  type VersionConflict
} from "@xaalis/engine"
import { Cause, Deferred, Effect, Exit, Fiber, type Layer, Option, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

export interface StoreConformanceOptions {
  /** Units of work run at once by the concurrency tests (default 8). */
  readonly concurrency?: number | undefined
  /** fast-check runs of the model-based property (default 50; see `runsFromEnv`). */
  readonly runs?: number | undefined
  /** Replays a failure of the model-based property: the `seed` and `path` fast-check printed. */
  readonly seed?: number | undefined
  readonly path?: string | undefined
}

/** Runs per property: `base` normally, 50× when `XAALIS_DEEP=1` (`npm run test:deep`). */
export const runsFromEnv = (base: number): number => {
  const env = (globalThis as { readonly process?: { readonly env?: Record<string, string | undefined> } }).process?.env
  return env?.XAALIS_DEEP === "1" ? base * 50 : base
}

type StoreShape = (typeof Store)["Service"]
type Currency = LedgerEntry["currency"]
type Balance = { readonly account: string; readonly currency: Currency; readonly amount: bigint }

// ---------------------------------------------------------------------------
// Fixtures

const T0 = 1_700_000_000_000
const A_TEST: Scope = { business_id: "biz_a", mode: "test" }
const A_LIVE: Scope = { business_id: "biz_a", mode: "live" }
const B_TEST: Scope = { business_id: "biz_b", mode: "test" }
const B_LIVE: Scope = { business_id: "biz_b", mode: "live" }
const NOBODY: Scope = { business_id: "biz_nobody", mode: "test" }
const ALL = { limit: 1000, offset: 0 }

const mk = (over: Partial<Doc> & Pick<Doc, "id">): Doc => ({
  kind: "invoice",
  business_id: A_TEST.business_id,
  mode: A_TEST.mode,
  created_at: T0,
  version: 1,
  due_at: null,
  keys: [],
  data: null,
  ...over
})

const inScope = (scope: Scope | null): Pick<Doc, "business_id" | "mode"> =>
  scope === null ? { business_id: null, mode: null } : { business_id: scope.business_id, mode: scope.mode }

/** One ledger transaction: entry ids are `<transaction_id>:<n>`. */
const ledgerTx = (
  transaction_id: string,
  scope: Scope,
  lines: ReadonlyArray<readonly [account: string, currency: Currency, amount: bigint]>
): Array<LedgerEntry> =>
  lines.map(([account, currency, amount], n) => ({
    id: `${transaction_id}:${n}`,
    transaction_id,
    business_id: scope.business_id,
    mode: scope.mode,
    account,
    currency,
    amount,
    created_at: T0 + n,
    cause: `conversion/${transaction_id}`
  }))

/** A conversion: the customer pays GMD, the merchant is credited less a fee, and USD moves on-chain. */
const conversion = (transaction_id: string, scope: Scope, gmd: bigint, fee: bigint, usd: bigint) =>
  ledgerTx(transaction_id, scope, [
    ["customer_cash", "GMD", -gmd],
    ["merchant_available", "GMD", gmd - fee],
    ["fees", "GMD", fee],
    ["treasury_usdc", "USD", usd],
    ["customer_usd", "USD", -usd]
  ])

const boom = { _tag: "Boom", message: "the unit of work gave up" } as const

// ---------------------------------------------------------------------------
// Helpers

const tagOf = (u: unknown): unknown =>
  typeof u === "object" && u !== null && "_tag" in u ? (u as { readonly _tag: unknown })._tag : undefined

const show = (u: unknown): string => {
  try {
    return JSON.stringify(u, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))
  } catch {
    return String(u)
  }
}

/** Runs `self`, which must fail with a typed error, and returns that error. */
const failureOf = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.map(Effect.exit(self), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got success ${show(exit.value)}`)
    const error = Cause.findError(exit.cause)
    if (Result.isFailure(error)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
    return error.success
  })

/** Runs a unit again on `VersionConflict`, as the port allows callers to. */
const retrying = <A, E>(unit: () => Effect.Effect<A, E>, left = 1000): Effect.Effect<A, E> =>
  Effect.catch(unit(), (e) => (tagOf(e) === "VersionConflict" && left > 0 ? retrying(unit, left - 1) : Effect.fail(e)))

/**
 * @internal A unit that only reads, run again while the store reports that it lost a race
 * (`VersionConflict`, which the port allows on any read), as the engine runs its units.
 */
export const readUnit = <A, E>(store: StoreShape, work: (tx: Tx) => Effect.Effect<A, E>) =>
  retrying(() => store.transact(work))

const insertAll = (store: StoreShape, docs: ReadonlyArray<Doc>) =>
  store.transact((tx) => Effect.forEach(docs, (d) => tx.insert(d), { discard: true }))

const getDoc = (store: StoreShape, kind: Kind, id: string) => store.transact((tx) => tx.get(kind, id))

const byId = <T extends { readonly id: string }>(rows: ReadonlyArray<T>): Array<T> =>
  [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

/** Balances in a canonical order, zero sums dropped. */
const canonBalances = (rows: ReadonlyArray<Balance>): Array<Balance> =>
  rows
    .filter((r) => r.amount !== 0n)
    .map((r) => ({ account: r.account, currency: r.currency, amount: r.amount }))
    .sort((a, b) => `${a.account}/${a.currency}`.localeCompare(`${b.account}/${b.currency}`))

/** What the ledger says per account and currency, computed from entries. */
const expectedBalances = (entries: ReadonlyArray<LedgerEntry>, scope: Scope): Array<Balance> => {
  const sums = new Map<string, Balance>()
  for (const e of entries) {
    if (e.business_id !== scope.business_id || e.mode !== scope.mode) continue
    const k = `${e.account}/${e.currency}`
    sums.set(k, { account: e.account, currency: e.currency, amount: (sums.get(k)?.amount ?? 0n) + e.amount })
  }
  return canonBalances([...sums.values()])
}

interface Probe {
  readonly rows: ReadonlyArray<readonly [Kind, string]>
  readonly keys: ReadonlyArray<readonly [Kind, string]>
  readonly lists: ReadonlyArray<readonly [Kind, Scope]>
  readonly scopes: ReadonlyArray<Scope>
}

/** Everything observable about the probed rows, keys, lists, due rows, balances and the ledger. */
const snapshot = (store: StoreShape, probe: Probe) =>
  Effect.gen(function* () {
    const seen = yield* store.transact((tx) =>
      Effect.gen(function* () {
        const rows = yield* Effect.forEach(probe.rows, ([kind, id]) => tx.get(kind, id))
        const keys = yield* Effect.forEach(probe.keys, ([kind, key]) =>
          Effect.map(tx.getByKey(kind, key), (d) => (d === undefined ? null : `${d.kind}/${d.id}`))
        )
        const lists = yield* Effect.forEach(probe.lists, ([kind, scope]) => tx.list(kind, scope, ALL))
        const due = yield* Effect.forEach(probe.lists, ([kind]) =>
          Effect.map(tx.due(kind, Number.MAX_SAFE_INTEGER, 1000), byId)
        )
        const balances = yield* Effect.forEach(probe.scopes, (scope) => Effect.map(tx.balances(scope), canonBalances))
        return { rows, keys, lists, due, balances }
      })
    )
    const ledger = byId(yield* store.ledger)
    return { ...seen, ledger }
  })

// ---------------------------------------------------------------------------
// The model of the property test

type Outcome = "ok" | "DuplicateKey" | "VersionConflict" | "Boom"

interface InsertOp {
  readonly op: "insert"
  readonly doc: Doc
}
interface UpdateOp {
  readonly op: "update"
  readonly kind: Kind
  readonly id: string
  /** 1 writes the next version; 0 (stale) and 2 (skipped) must conflict. */
  readonly delta: number
  readonly keys: ReadonlyArray<string>
  readonly due_at: number | null
  readonly data: unknown
}
type Op = InsertOp | UpdateOp
interface Unit {
  readonly ops: ReadonlyArray<Op>
  readonly fail: boolean
}

const MODEL_KINDS: ReadonlyArray<Kind> = ["invoice", "transfer"]
const MODEL_IDS = ["a", "b", "c"]
const MODEL_KEYS = ["k1", "k2", "k3"]
const MODEL_SCOPES: ReadonlyArray<Scope | null> = [A_TEST, A_LIVE, B_TEST, null]
const MODEL_NOW = 2

const rowKey = (kind: Kind, id: string) => `${kind}/${id}`

const keyOwner = (docs: ReadonlyMap<string, Doc>, kind: Kind, key: string): string | undefined => {
  for (const d of docs.values()) if (d.kind === kind && d.keys.includes(key)) return d.id
  return undefined
}

/** Applies a unit to the model: the outcomes the store may report, and the rows if it commits. */
const applyModel = (
  docs: ReadonlyMap<string, Doc>,
  unit: Unit
): { readonly outcomes: ReadonlyArray<Outcome>; readonly next: ReadonlyMap<string, Doc> } => {
  const staged = new Map(docs)
  const taken = (kind: Kind, id: string, keys: ReadonlyArray<string>) =>
    keys.some((key) => {
      const owner = keyOwner(staged, kind, key)
      return owner !== undefined && owner !== id
    })
  for (const op of unit.ops) {
    if (op.op === "insert") {
      const { doc } = op
      if (staged.has(rowKey(doc.kind, doc.id)) || taken(doc.kind, doc.id, doc.keys)) {
        return { outcomes: ["DuplicateKey"], next: docs }
      }
      staged.set(rowKey(doc.kind, doc.id), { ...doc, version: 1 })
    } else {
      const current = staged.get(rowKey(op.kind, op.id))
      const versionBad = current === undefined || op.delta !== 1
      const keyBad = taken(op.kind, op.id, op.keys)
      // When both apply, either error is a faithful report.
      if (versionBad && keyBad) return { outcomes: ["VersionConflict", "DuplicateKey"], next: docs }
      if (versionBad) return { outcomes: ["VersionConflict"], next: docs }
      if (keyBad) return { outcomes: ["DuplicateKey"], next: docs }
      staged.set(rowKey(op.kind, op.id), {
        ...current,
        version: current.version + 1,
        keys: op.keys,
        due_at: op.due_at,
        data: op.data
      })
    }
  }
  return unit.fail ? { outcomes: ["Boom"], next: docs } : { outcomes: ["ok"], next: staged }
}

const modelList = (docs: ReadonlyMap<string, Doc>, kind: Kind, scope: Scope) =>
  [...docs.values()]
    .filter((d) => d.kind === kind && d.business_id === scope.business_id && d.mode === scope.mode)
    .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))

/** Plain objects only: a stored row comes back with the ordinary prototype. */
const plain = { noNullPrototype: true } as const
const dataArb = fc.record(
  {
    n: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
    s: fc.string({ maxLength: 6 }),
    nested: fc.record({ flag: fc.boolean(), v: fc.option(fc.integer(), { nil: null }) }, plain),
    list: fc.array(fc.option(fc.integer({ min: -5, max: 5 }), { nil: null }), { maxLength: 3 })
  },
  plain
)
const keysArb = fc.uniqueArray(fc.constantFrom(...MODEL_KEYS), { maxLength: 2 })
const dueArb = fc.option(fc.integer({ min: 0, max: 3 }), { nil: null })

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc
    .record({
      kind: fc.constantFrom(...MODEL_KINDS),
      id: fc.constantFrom(...MODEL_IDS),
      scope: fc.constantFrom(...MODEL_SCOPES),
      created_at: fc.integer({ min: 0, max: 3 }),
      due_at: dueArb,
      keys: keysArb,
      data: dataArb
    })
    .map(({ scope, ...rest }): Op => ({ op: "insert", doc: mk({ ...rest, ...inScope(scope) }) })),
  fc.record({
    op: fc.constant("update" as const),
    kind: fc.constantFrom(...MODEL_KINDS),
    id: fc.constantFrom(...MODEL_IDS),
    delta: fc.constantFrom(1, 1, 1, 0, 2),
    keys: keysArb,
    due_at: dueArb,
    data: dataArb
  })
)

const unitArb: fc.Arbitrary<Unit> = fc.record({
  ops: fc.array(opArb, { minLength: 1, maxLength: 4 }),
  fail: fc.integer({ min: 0, max: 3 }).map((n) => n === 0)
})

/** Runs one unit of the property against the store; returns its outcome tag. */
const runUnit = (store: StoreShape, unit: Unit) =>
  Effect.map(
    Effect.exit(
      store.transact((tx) =>
        Effect.gen(function* () {
          for (const op of unit.ops) {
            if (op.op === "insert") {
              yield* tx.insert(op.doc)
            } else {
              const current = yield* tx.get(op.kind, op.id)
              yield* tx.update(
                current === undefined
                  ? mk({ kind: op.kind, id: op.id, version: op.delta, keys: op.keys, due_at: op.due_at, data: op.data })
                  : { ...current, version: current.version + op.delta, keys: op.keys, due_at: op.due_at, data: op.data }
              )
            }
          }
          if (unit.fail) return yield* Effect.fail(boom)
        })
      )
    ),
    (exit): unknown => {
      if (Exit.isSuccess(exit)) return "ok"
      const error = Cause.findError(exit.cause)
      return Result.isSuccess(error) ? tagOf(error.success) : `defect: ${Cause.pretty(exit.cause)}`
    }
  )

/** Compares every observable read of the store with the model. */
const compareWithModel = (store: StoreShape, docs: ReadonlyMap<string, Doc>) =>
  store.transact((tx) =>
    Effect.gen(function* () {
      for (const kind of MODEL_KINDS) {
        for (const id of MODEL_IDS) {
          expect(yield* tx.get(kind, id), `get ${kind}/${id}`).toStrictEqual(docs.get(rowKey(kind, id)))
        }
        for (const key of MODEL_KEYS) {
          const found = yield* tx.getByKey(kind, key)
          expect(found?.id, `getByKey ${kind}/${key}`).toBe(keyOwner(docs, kind, key))
          if (found !== undefined) expect(found).toStrictEqual(docs.get(rowKey(kind, found.id)))
        }
        for (const scope of MODEL_SCOPES) {
          if (scope === null) continue
          const expected = modelList(docs, kind, scope)
          const all = yield* tx.list(kind, scope, { limit: 50, offset: 0 })
          expect(all, `list ${kind} ${scope.business_id}/${scope.mode}`).toStrictEqual({
            docs: expected,
            total: expected.length
          })
          const page = yield* tx.list(kind, scope, { limit: 2, offset: 1 })
          expect(page, `list page ${kind} ${scope.business_id}/${scope.mode}`).toStrictEqual({
            docs: expected.slice(1, 3),
            total: expected.length
          })
        }
        const due = yield* tx.due(kind, MODEL_NOW, 50)
        const dueAt = due.map((d) => d.due_at ?? Number.NaN)
        expect(dueAt, `due ${kind} oldest first`).toStrictEqual([...dueAt].sort((a, b) => a - b))
        expect(byId(due), `due ${kind}`).toStrictEqual(
          byId([...docs.values()].filter((d) => d.kind === kind && d.due_at !== null && d.due_at <= MODEL_NOW))
        )
      }
    })
  )

// ---------------------------------------------------------------------------
// The suite

/**
 * Registers the Store conformance suite as a vitest `describe` block.
 * `makeLayer` must give a fresh, empty store on every build.
 */
export const storeConformance = (
  name: string,
  makeLayer: () => Layer.Layer<Store, unknown>,
  options?: StoreConformanceOptions
): void => {
  const concurrency = Math.max(2, options?.concurrency ?? 8)
  const runs = Math.max(1, options?.runs ?? 50)

  const withStore = <A, E>(body: (store: StoreShape) => Effect.Effect<A, E>): Promise<A> =>
    Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* Store
        return yield* body(store)
      }).pipe(Effect.provide(makeLayer()))
    )

  const test = (title: string, body: (store: StoreShape) => Effect.Effect<void, unknown>, timeout?: number) =>
    it(title, () => withStore(body), timeout)

  describe(`Store conformance: ${name}`, () => {
    test("each build of the layer starts empty", (store) =>
      Effect.gen(function* () {
        expect(yield* getDoc(store, "invoice", "inv_1")).toBeUndefined()
        expect(yield* store.transact((tx) => tx.list("invoice", A_TEST, ALL))).toStrictEqual({ docs: [], total: 0 })
        expect(yield* store.ledger).toStrictEqual([])
        yield* insertAll(store, [mk({ id: "inv_1" })])
      }))

    describe("documents", () => {
      test("insert then get returns every field exactly (bigint, nested objects, arrays, nulls)", (store) =>
        Effect.gen(function* () {
          const doc = mk({
            kind: "conversion",
            id: "cnv_01",
            business_id: "biz_a",
            mode: "live",
            created_at: T0 + 123,
            due_at: T0 + 60_000,
            keys: ["addr:gm1qxyz", "transfer:tr_77"],
            data: {
              amount_minor: 1_234_567n,
              huge: 2n ** 80n + 1n,
              negative: -(2n ** 63n),
              zero: 0n,
              rate: 0.015,
              count: 3,
              label: "Kër Jëf-Jël ✓ dalasi",
              empty: "",
              on: true,
              off: false,
              nothing: null,
              nested: { deep: { deeper: { value: 7n, note: null } }, list: [1, "two", null, { three: 3n }] },
              empties: { object: {}, array: [] }
            }
          })
          yield* insertAll(store, [doc])
          expect(yield* getDoc(store, "conversion", "cnv_01")).toStrictEqual(doc)
        }))

      test("a system row (null business, mode and due_at, no keys) round-trips", (store) =>
        Effect.gen(function* () {
          const doc = mk({ kind: "outbox", id: "evt_1", ...inScope(null), data: { topic: "invoice.paid" } })
          yield* insertAll(store, [doc])
          expect(yield* getDoc(store, "outbox", "evt_1")).toStrictEqual(doc)
        }))

      test("insert stores version 1 whatever version the caller passed", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, [mk({ id: "inv_v", version: 7 })])
          expect((yield* getDoc(store, "invoice", "inv_v"))?.version).toBe(1)
        }))

      test("ids and keys are compared exactly: case, trailing spaces and Unicode forms make different ones", (store) =>
        Effect.gen(function* () {
          // a MySQL/MariaDB default collation folds case, and `_bin` collations with PAD SPACE ignore
          // trailing spaces: idempotency keys and deposit addresses are case-sensitive, every byte counts
          const spellings = ["a", "A", "a ", " a", "a\u0301", "\u00e1", "\u00c1", "ß", "ss"]
          yield* insertAll(
            store,
            spellings.map((id, i) => mk({ id, keys: [`k:${id}`], data: { n: i } }))
          )
          for (const [i, id] of spellings.entries()) {
            expect((yield* getDoc(store, "invoice", id))?.data, `get ${JSON.stringify(id)}`).toStrictEqual({ n: i })
            const byKey = yield* store.transact((tx) => tx.getByKey("invoice", `k:${id}`))
            expect(byKey?.id, `getByKey ${JSON.stringify(`k:${id}`)}`).toBe(id)
          }
          expect(yield* getDoc(store, "invoice", "a  ")).toBeUndefined()
          expect(yield* store.transact((tx) => tx.getByKey("invoice", "K:a"))).toBeUndefined()
        }))

      test(`ids and keys of ${store_text_length_max} characters (any Unicode) are kept whole`, (store) =>
        Effect.gen(function* () {
          // the longest the engine writes: an idempotency record, <business id>:<mode>:<key of up to 255>
          const long = (c: string) => c.repeat(store_text_length_max)
          const ascii = mk({ id: long("i"), keys: [long("k")] })
          const wide = mk({ id: long("ë"), keys: [long("✓")] })
          yield* insertAll(store, [ascii, wide])
          expect(yield* getDoc(store, "invoice", ascii.id)).toStrictEqual(ascii)
          expect(yield* getDoc(store, "invoice", wide.id)).toStrictEqual(wide)
          expect((yield* store.transact((tx) => tx.getByKey("invoice", long("k"))))?.id).toBe(ascii.id)
          expect((yield* store.transact((tx) => tx.getByKey("invoice", long("✓"))))?.id).toBe(wide.id)
          // one character less is another id and another key
          expect(yield* getDoc(store, "invoice", ascii.id.slice(1))).toBeUndefined()
          expect(yield* store.transact((tx) => tx.getByKey("invoice", long("k").slice(1)))).toBeUndefined()
        }))

      test("get of an unknown id, or of an id stored under another kind, is undefined", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, [mk({ id: "inv_1" })])
          expect(yield* getDoc(store, "invoice", "inv_2")).toBeUndefined()
          expect(yield* getDoc(store, "transfer", "inv_1")).toBeUndefined()
        }))

      test("get and getByKey of an id or key no row can have (a NUL in it: any text from a URL) are undefined, not a failure", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, [mk({ id: "inv_1", keys: ["ref:1"] })])
          const [byId, byKey] = yield* store.transact((tx) =>
            Effect.all([tx.get("invoice", "inv_1\u0000"), tx.getByKey("invoice", "ref:\u00001")])
          )
          expect(byId).toBeUndefined()
          expect(byKey).toBeUndefined()
        }))

      test("insert of an existing id fails with DuplicateKey and keeps the first row", (store) =>
        Effect.gen(function* () {
          const first = mk({ id: "inv_1", data: { n: 1n } })
          yield* insertAll(store, [first])
          const error = yield* failureOf(insertAll(store, [mk({ id: "inv_1", data: { n: 2n } })]))
          expect(tagOf(error)).toBe("DuplicateKey")
          expect(error).toMatchObject({ kind: "invoice" })
          expect(yield* getDoc(store, "invoice", "inv_1")).toStrictEqual(first)
          // …also when both inserts are in the same unit of work
          const again = yield* failureOf(insertAll(store, [mk({ id: "inv_2" }), mk({ id: "inv_2" })]))
          expect(tagOf(again)).toBe("DuplicateKey")
          expect(yield* getDoc(store, "invoice", "inv_2")).toBeUndefined()
        }))

      test("a refused insert writes nothing even when its unit catches the refusal and commits", (store) =>
        Effect.gen(function* () {
          const first = mk({ kind: "transfer", id: "tr_1", keys: ["chain:0xabc"], data: { n: 1n } })
          yield* insertAll(store, [first])
          // the engine's chain transfers: insert the identity row, a refusal means "seen before", commit the rest
          const refused = yield* store.transact((tx) =>
            Effect.gen(function* () {
              const byId = yield* failureOf(tx.insert(mk({ kind: "transfer", id: "tr_1", keys: ["k:a"], data: 2n })))
              const byKey = yield* failureOf(
                tx.insert(mk({ kind: "transfer", id: "tr_2", keys: ["k:b", "chain:0xabc"], data: 3n }))
              )
              yield* tx.insert(mk({ id: "inv_after" }))
              return [tagOf(byId), tagOf(byKey)]
            })
          )
          expect(refused).toStrictEqual(["DuplicateKey", "DuplicateKey"])
          expect(yield* getDoc(store, "transfer", "tr_1")).toStrictEqual(first)
          expect(yield* getDoc(store, "transfer", "tr_2")).toBeUndefined()
          const [a, b, chain] = yield* store.transact((tx) =>
            Effect.all([
              tx.getByKey("transfer", "k:a"),
              tx.getByKey("transfer", "k:b"),
              tx.getByKey("transfer", "chain:0xabc")
            ])
          )
          expect(a, "the refused row's keys must stay free").toBeUndefined()
          expect(b, "the refused row's keys must stay free").toBeUndefined()
          expect(chain?.id).toBe("tr_1")
          expect((yield* getDoc(store, "invoice", "inv_after"))?.id, "the unit's other writes commit").toBe("inv_after")
        }))

      test("the same id in another kind is a different row", (store) =>
        Effect.gen(function* () {
          const invoice = mk({ id: "x_1", data: { of: "invoice" } })
          const link = mk({ kind: "payment_link", id: "x_1", data: { of: "link" } })
          yield* insertAll(store, [invoice, link])
          expect(yield* getDoc(store, "invoice", "x_1")).toStrictEqual(invoice)
          expect(yield* getDoc(store, "payment_link", "x_1")).toStrictEqual(link)
        }))

      test("getByKey finds a row by each of its keys; an unknown key is undefined", (store) =>
        Effect.gen(function* () {
          const doc = mk({ kind: "api_key", id: "key_1", keys: ["hash:abc", "prefix:sk_test_1"] })
          yield* insertAll(store, [doc, mk({ kind: "api_key", id: "key_2", keys: ["hash:def"] })])
          const [byHash, byPrefix, unknown, otherKind] = yield* store.transact((tx) =>
            Effect.all([
              tx.getByKey("api_key", "hash:abc"),
              tx.getByKey("api_key", "prefix:sk_test_1"),
              tx.getByKey("api_key", "hash:zzz"),
              tx.getByKey("invoice", "hash:abc")
            ])
          )
          expect(byHash).toStrictEqual(doc)
          expect(byPrefix).toStrictEqual(doc)
          expect(unknown).toBeUndefined()
          expect(otherKind).toBeUndefined()
        }))

      test("a second row with the same key in the same kind fails with DuplicateKey", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, [mk({ kind: "transfer", id: "tr_1", keys: ["chain:0xabc"] })])
          const error = yield* failureOf(
            insertAll(store, [mk({ kind: "transfer", id: "tr_2", keys: ["other", "chain:0xabc"] })])
          )
          expect(tagOf(error)).toBe("DuplicateKey")
          expect(error).toMatchObject({ kind: "transfer", key: "chain:0xabc" })
          expect(yield* getDoc(store, "transfer", "tr_2")).toBeUndefined()
          // the refused row claimed none of its keys
          expect(yield* store.transact((tx) => tx.getByKey("transfer", "other"))).toBeUndefined()
          expect((yield* store.transact((tx) => tx.getByKey("transfer", "chain:0xabc")))?.id).toBe("tr_1")
        }))

      test("the same key in another kind is allowed", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, [
            mk({ kind: "transfer", id: "tr_1", keys: ["shared"] }),
            mk({ kind: "late_funds", id: "lf_1", keys: ["shared"] })
          ])
          const [t, l] = yield* store.transact((tx) =>
            Effect.all([tx.getByKey("transfer", "shared"), tx.getByKey("late_funds", "shared")])
          )
          expect(t?.id).toBe("tr_1")
          expect(l?.id).toBe("lf_1")
        }))

      test("an update that drops a key frees it for another row", (store) =>
        Effect.gen(function* () {
          const first = mk({ kind: "payment_intent", id: "pi_1", keys: ["addr:1", "keep"] })
          yield* insertAll(store, [first])
          yield* store.transact((tx) => tx.update({ ...first, version: 2, keys: ["keep"] }))
          expect(yield* store.transact((tx) => tx.getByKey("payment_intent", "addr:1"))).toBeUndefined()
          expect((yield* store.transact((tx) => tx.getByKey("payment_intent", "keep")))?.id).toBe("pi_1")
          yield* insertAll(store, [mk({ kind: "payment_intent", id: "pi_2", keys: ["addr:1"] })])
          expect((yield* store.transact((tx) => tx.getByKey("payment_intent", "addr:1")))?.id).toBe("pi_2")
        }))

      test("an update may keep and add keys, but taking another row's key fails with DuplicateKey", (store) =>
        Effect.gen(function* () {
          const one = mk({ kind: "payment_intent", id: "pi_1", keys: ["a"] })
          const two = mk({ kind: "payment_intent", id: "pi_2", keys: ["b"] })
          yield* insertAll(store, [one, two])
          yield* store.transact((tx) => tx.update({ ...one, version: 2, keys: ["a", "c"] }))
          expect((yield* store.transact((tx) => tx.getByKey("payment_intent", "c")))?.id).toBe("pi_1")
          const error = yield* failureOf(store.transact((tx) => tx.update({ ...two, version: 2, keys: ["b", "a"] })))
          expect(tagOf(error)).toBe("DuplicateKey")
          expect(error).toMatchObject({ kind: "payment_intent", key: "a" })
          expect(yield* getDoc(store, "payment_intent", "pi_2")).toStrictEqual(two)
          expect((yield* store.transact((tx) => tx.getByKey("payment_intent", "a")))?.id).toBe("pi_1")
        }))
    })

    describe("versions", () => {
      test("update with version = stored + 1 succeeds and bumps the version", (store) =>
        Effect.gen(function* () {
          const doc = mk({ id: "inv_1", data: { status: "draft" } })
          yield* insertAll(store, [doc])
          const v2 = { ...doc, version: 2, data: { status: "open" }, due_at: T0 + 5 }
          yield* store.transact((tx) => tx.update(v2))
          expect(yield* getDoc(store, "invoice", "inv_1")).toStrictEqual(v2)
          const v3 = { ...v2, version: 3, data: { status: "paid" }, due_at: null }
          yield* store.transact((tx) => tx.update(v3))
          expect(yield* getDoc(store, "invoice", "inv_1")).toStrictEqual(v3)
        }))

      test("update with a stale or skipped version fails with VersionConflict and changes nothing", (store) =>
        Effect.gen(function* () {
          const doc = mk({ id: "inv_1", data: { n: 1 } })
          yield* insertAll(store, [doc])
          const v2 = { ...doc, version: 2, data: { n: 2 } }
          yield* store.transact((tx) => tx.update(v2))
          for (const version of [0, 1, 2, 4, 100]) {
            const error = yield* failureOf(
              store.transact((tx) => tx.update({ ...doc, version, data: { n: 99 }, keys: ["stolen"] }))
            )
            expect(tagOf(error), `version ${version}`).toBe("VersionConflict")
            expect(error).toMatchObject({ kind: "invoice", id: "inv_1" })
          }
          expect(yield* getDoc(store, "invoice", "inv_1")).toStrictEqual(v2)
          expect(yield* store.transact((tx) => tx.getByKey("invoice", "stolen"))).toBeUndefined()
        }))

      test("update of a row that does not exist fails with VersionConflict and creates nothing", (store) =>
        Effect.gen(function* () {
          const error = yield* failureOf(store.transact((tx) => tx.update(mk({ id: "ghost", version: 2 }))))
          expect(tagOf(error)).toBe("VersionConflict")
          const again = yield* failureOf(store.transact((tx) => tx.update(mk({ id: "ghost", version: 1 }))))
          expect(tagOf(again)).toBe("VersionConflict")
          expect(yield* getDoc(store, "invoice", "ghost")).toBeUndefined()
        }))

      test("a read-modify-write based on a stale read fails with VersionConflict", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, [mk({ id: "inv_1", data: { n: 0 } })])
          const staleRead = yield* getDoc(store, "invoice", "inv_1")
          if (staleRead === undefined) return yield* Effect.die("row vanished")
          const fresh = yield* getDoc(store, "invoice", "inv_1")
          if (fresh === undefined) return yield* Effect.die("row vanished")
          yield* store.transact((tx) => tx.update({ ...fresh, version: fresh.version + 1, data: { n: 1 } }))
          const error = yield* failureOf(
            store.transact((tx) => tx.update({ ...staleRead, version: staleRead.version + 1, data: { n: 10 } }))
          )
          expect(tagOf(error)).toBe("VersionConflict")
          expect((yield* getDoc(store, "invoice", "inv_1"))?.data).toStrictEqual({ n: 1 })
        }))

      test(
        `no lost update: concurrent read-modify-write units (concurrency ${concurrency}) with retry end at exactly N`,
        (store) =>
          Effect.gen(function* () {
            const n = concurrency * 5
            yield* insertAll(store, [mk({ kind: "counter", id: "ctr", ...inScope(null), data: { n: 0 } })])
            let attempts = 0
            const increment = () =>
              store.transact((tx) =>
                Effect.gen(function* () {
                  attempts++
                  const current = yield* tx.get("counter", "ctr")
                  if (current === undefined) return yield* Effect.die("counter vanished")
                  yield* Effect.yieldNow
                  const value = (current.data as { readonly n: number }).n
                  yield* tx.update({ ...current, version: current.version + 1, data: { n: value + 1 } })
                  yield* Effect.yieldNow // widen the window between write and commit
                })
              )
            yield* Effect.forEach(Array.from({ length: n }), () => retrying(increment), { concurrency, discard: true })
            const final = yield* getDoc(store, "counter", "ctr")
            expect(final?.data).toStrictEqual({ n })
            expect(final?.version).toBe(n + 1)
            expect(attempts).toBeGreaterThanOrEqual(n)
          }),
        60_000
      )

      test(
        `concurrent inserts of one unique key (concurrency ${concurrency}): exactly one wins`,
        (store) =>
          Effect.gen(function* () {
            const outcomes = yield* Effect.forEach(
              Array.from({ length: concurrency * 2 }, (_, i) => i),
              (i) =>
                Effect.map(
                  Effect.exit(
                    retrying(() => insertAll(store, [mk({ kind: "transfer", id: `tr_${i}`, keys: ["hot"] })]))
                  ),
                  (exit) => (Exit.isSuccess(exit) ? "ok" : tagOf(Result.getOrUndefined(Cause.findError(exit.cause))))
                ),
              { concurrency }
            )
            expect(outcomes.filter((o) => o === "ok")).toHaveLength(1)
            expect(outcomes.filter((o) => o !== "ok").every((o) => o === "DuplicateKey")).toBe(true)
            const winner = outcomes.indexOf("ok")
            expect((yield* store.transact((tx) => tx.getByKey("transfer", "hot")))?.id).toBe(`tr_${winner}`)
            expect((yield* store.transact((tx) => tx.list("transfer", A_TEST, ALL))).total).toBe(1)
          }),
        60_000
      )

      test(
        `units that read, then insert what is absent, racing (concurrency ${concurrency}): the losers fail with VersionConflict, and run again find the winner's row`,
        (store) =>
          Effect.gen(function* () {
            // the engine's pattern (a chain transfer's first reports, a counter's first write): look the
            // row up, insert it when absent; the engine runs a unit again on VersionConflict only
            const race = (
              find: (tx: Tx) => Effect.Effect<Doc | undefined, StoreError | VersionConflict>,
              row: (i: number) => Doc
            ) =>
              Effect.forEach(
                Array.from({ length: concurrency * 2 }, (_, i) => i),
                (i) =>
                  Effect.map(
                    Effect.exit(
                      retrying(() =>
                        store.transact((tx) =>
                          Effect.flatMap(find(tx), (found) =>
                            found === undefined ? Effect.as(tx.insert(row(i)), "inserted") : Effect.succeed("found")
                          )
                        )
                      )
                    ),
                    (exit) =>
                      Exit.isSuccess(exit) ? exit.value : tagOf(Result.getOrUndefined(Cause.findError(exit.cause)))
                  ),
                { concurrency }
              )
            const losers =
              "a unit that lost the race must fail with VersionConflict (not DuplicateKey), at the insert or at the commit: the engine runs it again only then, and it finds the winner's row; with DuplicateKey, the second of two first reports of one chain transfer would answer an error"
            const byKey = yield* race(
              (tx) => tx.getByKey("transfer", "first-report"),
              (i) => mk({ kind: "transfer", id: `tr_key_${i}`, keys: ["first-report"] })
            )
            expect(
              byKey.filter((o) => o !== "inserted" && o !== "found"),
              `same unique key: ${losers}`
            ).toStrictEqual([])
            expect(
              byKey.filter((o) => o === "inserted"),
              "same unique key: exactly one unit inserts"
            ).toHaveLength(1)
            const byId = yield* race(
              (tx) => tx.get("transfer", "tr_first"),
              () => mk({ kind: "transfer", id: "tr_first" })
            )
            expect(
              byId.filter((o) => o !== "inserted" && o !== "found"),
              `same id: ${losers}`
            ).toStrictEqual([])
            expect(
              byId.filter((o) => o === "inserted"),
              "same id: exactly one unit inserts"
            ).toHaveLength(1)
          }),
        60_000
      )

      test(
        `concurrent inserts of distinct rows (concurrency ${concurrency}) all commit`,
        (store) =>
          Effect.gen(function* () {
            const n = concurrency * 3
            yield* Effect.forEach(
              Array.from({ length: n }, (_, i) => i),
              (i) => retrying(() => insertAll(store, [mk({ id: `inv_${i}`, created_at: T0 + i, keys: [`k${i}`] })])),
              { concurrency, discard: true }
            )
            const { docs, total } = yield* store.transact((tx) => tx.list("invoice", A_TEST, ALL))
            expect(total).toBe(n)
            expect(docs.map((d) => d.id)).toStrictEqual(Array.from({ length: n }, (_, i) => `inv_${n - 1 - i}`))
          }),
        60_000
      )
    })

    describe("units of work", () => {
      const probe: Probe = {
        rows: [
          ["invoice", "inv_a"],
          ["invoice", "inv_b"],
          ["payment_link", "pl_1"]
        ],
        keys: [
          ["invoice", "ka"],
          ["invoice", "ka2"],
          ["invoice", "kb"]
        ],
        lists: [
          ["invoice", A_TEST],
          ["invoice", A_LIVE],
          ["payment_link", A_TEST]
        ],
        scopes: [A_TEST, A_LIVE]
      }
      const setup = (store: StoreShape) =>
        Effect.gen(function* () {
          const a = mk({ id: "inv_a", keys: ["ka"], due_at: T0 + 10, data: { total: 100n } })
          yield* insertAll(store, [a])
          yield* store.transact((tx) => tx.post(conversion("ltx_0", A_TEST, 10_000n, 300n, 5_000_000n)))
          return a
        })
      /** Insert, update (moving keys and due_at), post in two scopes: everything a unit can write. */
      const writeEverything = (a: Doc) => (tx: Tx) =>
        Effect.gen(function* () {
          yield* tx.insert(mk({ id: "inv_b", keys: ["kb"], due_at: T0, data: { total: 5n } }))
          yield* tx.insert(mk({ kind: "payment_link", id: "pl_1", data: null }))
          yield* tx.update({ ...a, version: 2, keys: ["ka2"], due_at: null, data: { total: 999n } })
          yield* tx.post(conversion("ltx_1", A_TEST, 20_000n, 600n, 9_000_000n))
          yield* tx.post(conversion("ltx_2", A_LIVE, 1_000n, 30n, 400_000n))
          expect(yield* tx.get("invoice", "inv_b")).toBeDefined()
        })
      /** After a failed unit: its keys are free and its versions were never bumped. */
      const stillUsable = (store: StoreShape, a: Doc) =>
        Effect.gen(function* () {
          yield* insertAll(store, [mk({ id: "inv_c", keys: ["kb", "ka2"] })])
          yield* store.transact((tx) => tx.update({ ...a, version: 2 }))
          expect((yield* getDoc(store, "invoice", "inv_a"))?.version).toBe(2)
        })

      test("a unit's reads see its own writes (get, getByKey, list, due, balances, version chain)", (store) =>
        Effect.gen(function* () {
          const y = mk({ id: "inv_y", created_at: T0 - 1, keys: ["ky0"], due_at: T0, data: { n: 0n } })
          const older = ledgerTx("ltx_0", A_TEST, [
            ["treasury", "GMD", 5n],
            ["fees", "GMD", -5n]
          ])
          yield* insertAll(store, [y])
          yield* store.transact((tx) => tx.post(older))
          const x = mk({ id: "inv_x", keys: ["kx"], due_at: T0, data: { n: 1n } })
          const entries = conversion("ltx_1", A_TEST, 1_000n, 10n, 50n)
          const y2 = { ...y, version: 2, keys: ["ky1"], due_at: null, data: { n: 10n } }
          const x3 = { ...x, version: 3, keys: ["kx2"], due_at: T0 + 1, data: { n: 3n } }
          yield* store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.insert(x)
              expect(yield* tx.get("invoice", "inv_x")).toStrictEqual(x)
              expect(yield* tx.getByKey("invoice", "kx")).toStrictEqual(x)
              expect(yield* tx.list("invoice", A_TEST, ALL)).toStrictEqual({ docs: [x, y], total: 2 })
              expect(byId(yield* tx.due("invoice", T0, 10))).toStrictEqual([x, y])
              yield* tx.post(entries)
              expect(canonBalances(yield* tx.balances(A_TEST))).toStrictEqual(
                expectedBalances([...older, ...entries], A_TEST)
              )
              // a row committed earlier, updated in this unit, is seen once, in its new version
              yield* tx.update(y2)
              expect(yield* tx.get("invoice", "inv_y")).toStrictEqual(y2)
              expect(yield* tx.getByKey("invoice", "ky0")).toBeUndefined()
              expect(yield* tx.getByKey("invoice", "ky1")).toStrictEqual(y2)
              expect(yield* tx.list("invoice", A_TEST, ALL)).toStrictEqual({ docs: [x, y2], total: 2 })
              expect(yield* tx.due("invoice", T0, 10)).toStrictEqual([x])
              // a row inserted in this unit can be updated twice in it
              yield* tx.update({ ...x, version: 2, keys: ["kx1"], data: { n: 2n } })
              expect(yield* tx.getByKey("invoice", "kx")).toBeUndefined()
              expect((yield* tx.getByKey("invoice", "kx1"))?.version).toBe(2)
              yield* tx.update(x3)
              expect(yield* tx.get("invoice", "inv_x")).toStrictEqual(x3)
              expect(yield* tx.list("invoice", A_TEST, ALL)).toStrictEqual({ docs: [x3, y2], total: 2 })
              expect(yield* tx.due("invoice", T0, 10)).toStrictEqual([])
              expect(yield* tx.due("invoice", T0 + 1, 10)).toStrictEqual([x3])
            })
          )
          expect(yield* getDoc(store, "invoice", "inv_x")).toStrictEqual(x3)
          expect(yield* getDoc(store, "invoice", "inv_y")).toStrictEqual(y2)
          expect(byId(yield* store.ledger)).toStrictEqual(byId([...older, ...entries]))
        }))

      test("transact returns the unit's value and passes its typed failure through unchanged", (store) =>
        Effect.gen(function* () {
          expect(yield* store.transact(() => Effect.succeed({ answer: 42n }))).toStrictEqual({ answer: 42n })
          const error = yield* failureOf(store.transact(() => Effect.fail(boom)))
          expect(error).toBe(boom)
        }))

      test("a unit that fails after insert, update and post leaves nothing behind", (store) =>
        Effect.gen(function* () {
          const a = yield* setup(store)
          const before = yield* snapshot(store, probe)
          const error = yield* failureOf(
            store.transact((tx) => Effect.andThen(writeEverything(a)(tx), Effect.fail(boom)))
          )
          expect(error).toBe(boom)
          expect(yield* snapshot(store, probe)).toStrictEqual(before)
          yield* stillUsable(store, a)
        }))

      test("a unit that dies (Effect.die) after insert, update and post leaves nothing behind", (store) =>
        Effect.gen(function* () {
          const a = yield* setup(store)
          const before = yield* snapshot(store, probe)
          const defect = new Error("bug in the unit of work")
          const exit = yield* Effect.exit(
            store.transact((tx) => Effect.andThen(writeEverything(a)(tx), Effect.die(defect)))
          )
          expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
          if (Exit.isFailure(exit)) expect(Result.getOrUndefined(Cause.findDefect(exit.cause))).toBe(defect)
          expect(yield* snapshot(store, probe)).toStrictEqual(before)
          yield* stillUsable(store, a)
        }))

      test("a unit interrupted after insert, update and post leaves nothing behind", (store) =>
        Effect.gen(function* () {
          // a request cut off mid-unit (a client gone, a server stopping): the engine reports a chain
          // transfer again after an interruption, and finds it applied if the store kept half a unit
          const a = yield* setup(store)
          const before = yield* snapshot(store, probe)
          const written = yield* Deferred.make<void>()
          const fiber = yield* Effect.forkChild(
            store.transact((tx) =>
              Effect.gen(function* () {
                yield* writeEverything(a)(tx)
                yield* Deferred.succeed(written, undefined)
                return yield* Effect.never
              })
            )
          )
          yield* Deferred.await(written)
          yield* Fiber.interrupt(fiber)
          const exit = yield* Fiber.await(fiber)
          expect(Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause), "the unit ended interrupted").toBe(true)
          expect(yield* snapshot(store, probe), "an interrupted unit commits nothing").toStrictEqual(before)
          yield* stillUsable(store, a)
        }))

      test("a unit that hits VersionConflict midway commits none of its earlier writes", (store) =>
        Effect.gen(function* () {
          const a = yield* setup(store)
          const before = yield* snapshot(store, probe)
          const error = yield* failureOf(
            store.transact((tx) =>
              Effect.andThen(writeEverything(a)(tx), tx.update({ ...a, version: 2, data: { total: 1n } }))
            )
          )
          expect(tagOf(error)).toBe("VersionConflict")
          expect(yield* snapshot(store, probe)).toStrictEqual(before)
          yield* stillUsable(store, a)
        }))

      test("no dirty reads: a concurrent unit never sees the writes of a unit that later fails", (store) =>
        Effect.gen(function* () {
          const a = yield* setup(store)
          const before = yield* snapshot(store, probe)
          const written = yield* Deferred.make<void>()
          const writer = yield* Effect.forkChild(
            Effect.exit(
              store.transact((tx) =>
                Effect.gen(function* () {
                  yield* writeEverything(a)(tx)
                  yield* Deferred.succeed(written, undefined)
                  yield* Effect.sleep("50 millis")
                  return yield* Effect.fail(boom)
                })
              )
            )
          )
          yield* Deferred.await(written)
          const during = yield* snapshot(store, probe)
          const exit = yield* Fiber.join(writer)
          expect(Exit.isFailure(exit)).toBe(true)
          expect(during).toStrictEqual(before)
        }))
    })

    describe("isolation of returned and given data", () => {
      type Mutable = {
        version: number
        due_at: number | null
        keys: Array<string>
        data: { amount: bigint; nested: { list: Array<number>; note: string | null } }
      }
      const fresh = () =>
        mk({ id: "inv_1", keys: ["k1"], due_at: T0, data: { amount: 100n, nested: { list: [1, 2], note: null } } })
      const original = fresh()
      /**
       * An adapter may hand out copies (mutations are harmless) or frozen rows
       * (mutations throw a TypeError); either way stored state must not change.
       */
      const attempt = (mutate: () => void) => {
        try {
          mutate()
        } catch (e) {
          if (!(e instanceof TypeError)) throw e
        }
      }
      const vandalise = (doc: Doc | undefined) => {
        if (doc === undefined) throw new Error("expected a row")
        const m = doc as unknown as Mutable
        attempt(() => (m.version = 99))
        attempt(() => (m.due_at = null))
        attempt(() => m.keys.push("k_stolen"))
        attempt(() => (m.data.amount = 1n))
        attempt(() => m.data.nested.list.push(3))
        attempt(() => (m.data.nested.note = "changed"))
      }

      test("mutating a row returned by get does not change the stored row", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, [original])
          vandalise(yield* getDoc(store, "invoice", "inv_1"))
          expect(yield* getDoc(store, "invoice", "inv_1")).toStrictEqual(original)
          expect(yield* store.transact((tx) => tx.getByKey("invoice", "k_stolen"))).toBeUndefined()
          // …nor a row staged in the same unit of work
          yield* store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.insert({ ...original, id: "inv_2", keys: ["k2"] })
              vandalise(yield* tx.get("invoice", "inv_2"))
              expect(yield* tx.get("invoice", "inv_2")).toStrictEqual({ ...original, id: "inv_2", keys: ["k2"] })
            })
          )
          expect(yield* getDoc(store, "invoice", "inv_2")).toStrictEqual({ ...original, id: "inv_2", keys: ["k2"] })
        }))

      test("mutating rows returned by getByKey, list and due does not change stored rows", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, [original])
          vandalise(yield* store.transact((tx) => tx.getByKey("invoice", "k1")))
          const listed = yield* store.transact((tx) => tx.list("invoice", A_TEST, ALL))
          vandalise(listed.docs[0])
          attempt(() => (listed.docs as Array<Doc>).pop())
          vandalise((yield* store.transact((tx) => tx.due("invoice", T0, 10)))[0])
          expect(yield* getDoc(store, "invoice", "inv_1")).toStrictEqual(original)
          expect(yield* store.transact((tx) => tx.list("invoice", A_TEST, ALL))).toStrictEqual({
            docs: [original],
            total: 1
          })
          expect(yield* store.transact((tx) => tx.due("invoice", T0, 10))).toStrictEqual([original])
        }))

      test("mutating a doc after handing it to insert or update does not change the stored row", (store) =>
        Effect.gen(function* () {
          const given = fresh()
          yield* store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.insert(given)
              vandalise(given) // before commit
            })
          )
          expect(yield* getDoc(store, "invoice", "inv_1")).toStrictEqual(original)
          const v2 = { ...fresh(), version: 2 }
          yield* store.transact((tx) => tx.update(v2))
          vandalise(v2) // after commit
          expect(yield* getDoc(store, "invoice", "inv_1")).toStrictEqual({ ...original, version: 2 })
        }))

      test("a shallowly frozen object inside data does not let its children be mutated in the store", (store) =>
        Effect.gen(function* () {
          // Object.freeze is shallow: `limits` is frozen, `limits.daily` is not.
          const make = () => ({ limits: Object.freeze({ daily: { GMD: 500_000n } }) })
          const data = make()
          yield* insertAll(store, [mk({ kind: "business", id: "biz_a", data })])
          attempt(() => (data.limits.daily.GMD = 1n))
          expect((yield* getDoc(store, "business", "biz_a"))?.data, "after mutating the given data").toStrictEqual(
            make()
          )
          const read = yield* getDoc(store, "business", "biz_a")
          if (read === undefined) return yield* Effect.die("row vanished")
          attempt(() => ((read.data as ReturnType<typeof make>).limits.daily.GMD = 2n))
          expect((yield* getDoc(store, "business", "biz_a"))?.data, "after mutating a read").toStrictEqual(make())
        }))

      test("mutating posted entries, or entries returned by ledger and balances, does not change the ledger", (store) =>
        Effect.gen(function* () {
          const entries = conversion("ltx_1", A_TEST, 10_000n, 300n, 5_000_000n)
          const given = entries.map((e) => ({ ...e }))
          yield* store.transact((tx) => tx.post(given))
          for (const e of given) attempt(() => ((e as { amount: bigint }).amount = 0n))
          const read = yield* store.ledger
          for (const e of read) attempt(() => ((e as { amount: bigint }).amount = 1n))
          attempt(() => ((read as Array<LedgerEntry>).length = 0))
          const balances = yield* store.transact((tx) => tx.balances(A_TEST))
          for (const b of balances) attempt(() => ((b as { amount: bigint }).amount = 7n))
          expect(byId(yield* store.ledger)).toStrictEqual(byId(entries))
          expect(canonBalances(yield* store.transact((tx) => tx.balances(A_TEST)))).toStrictEqual(
            expectedBalances(entries, A_TEST)
          )
        }))
    })

    describe("list", () => {
      test("list is scoped by business_id and mode: test and live, and other businesses, never mix", (store) =>
        Effect.gen(function* () {
          const rows = [
            mk({ id: "at_1", ...inScope(A_TEST) }),
            mk({ id: "at_2", ...inScope(A_TEST), created_at: T0 + 1 }),
            mk({ id: "at_3", ...inScope(A_TEST), created_at: T0 + 2 }),
            mk({ id: "al_1", ...inScope(A_LIVE) }),
            mk({ id: "al_2", ...inScope(A_LIVE), created_at: T0 + 1 }),
            mk({ id: "bt_1", ...inScope(B_TEST) }),
            mk({ id: "sys_1", ...inScope(null) }),
            mk({ kind: "payment_link", id: "pl_1", ...inScope(A_TEST) })
          ]
          yield* insertAll(store, rows)
          const list = (kind: Kind, scope: Scope) =>
            Effect.map(
              store.transact((tx) => tx.list(kind, scope, ALL)),
              ({ docs, total }) => ({ ids: docs.map((d) => d.id), total })
            )
          expect(yield* list("invoice", A_TEST)).toStrictEqual({ ids: ["at_3", "at_2", "at_1"], total: 3 })
          expect(yield* list("invoice", A_LIVE)).toStrictEqual({ ids: ["al_2", "al_1"], total: 2 })
          expect(yield* list("invoice", B_TEST)).toStrictEqual({ ids: ["bt_1"], total: 1 })
          expect(yield* list("invoice", B_LIVE)).toStrictEqual({ ids: [], total: 0 })
          expect(yield* list("payment_link", A_TEST)).toStrictEqual({ ids: ["pl_1"], total: 1 })
          expect(yield* list("invoice", NOBODY)).toStrictEqual({ ids: [], total: 0 })
        }))

      test("list is newest first by created_at, then by id descending, with every field", (store) =>
        Effect.gen(function* () {
          const rows = [
            mk({ id: "inv_c", created_at: T0 + 2 }),
            mk({ id: "inv_a", created_at: T0 + 5, data: { n: 1n } }),
            mk({ id: "inv_z", created_at: T0 + 1 }),
            mk({ id: "inv_b", created_at: T0 + 5, keys: ["kb"], due_at: T0 }),
            mk({ id: "inv_aa", created_at: T0 + 5 }),
            mk({ id: "inv_d", created_at: T0 + 10 })
          ]
          yield* insertAll(store, rows)
          const { docs, total } = yield* store.transact((tx) => tx.list("invoice", A_TEST, ALL))
          expect(docs.map((d) => d.id)).toStrictEqual(["inv_d", "inv_b", "inv_aa", "inv_a", "inv_c", "inv_z"])
          expect(total).toBe(6)
          expect(byId(docs)).toStrictEqual(byId(rows))
        }))

      test("limit and offset page through the scope; total always counts the whole scope", (store) =>
        Effect.gen(function* () {
          yield* insertAll(
            store,
            Array.from({ length: 7 }, (_, i) => mk({ id: `inv_${i}`, created_at: T0 + i }))
          )
          const page = (limit: number, offset: number) =>
            Effect.map(
              store.transact((tx) => tx.list("invoice", A_TEST, { limit, offset })),
              ({ docs, total }) => ({ ids: docs.map((d) => d.id), total })
            )
          expect(yield* page(3, 0)).toStrictEqual({ ids: ["inv_6", "inv_5", "inv_4"], total: 7 })
          expect(yield* page(3, 3)).toStrictEqual({ ids: ["inv_3", "inv_2", "inv_1"], total: 7 })
          expect(yield* page(3, 6)).toStrictEqual({ ids: ["inv_0"], total: 7 })
          expect(yield* page(3, 7)).toStrictEqual({ ids: [], total: 7 })
          expect(yield* page(5, 100)).toStrictEqual({ ids: [], total: 7 })
          // the deepest offset the API takes (any exact JSON whole number)
          expect(yield* page(100, Number.MAX_SAFE_INTEGER)).toStrictEqual({ ids: [], total: 7 })
          expect(yield* page(1, 2)).toStrictEqual({ ids: ["inv_4"], total: 7 })
        }))
    })

    describe("due", () => {
      const rows = [
        mk({ id: "d_100", due_at: T0 + 100, ...inScope(A_TEST) }),
        mk({ id: "d_50", due_at: T0 + 50, ...inScope(B_LIVE) }),
        mk({ id: "d_200", due_at: T0 + 200, ...inScope(A_LIVE) }),
        mk({ id: "d_null", due_at: null, ...inScope(A_TEST) }),
        mk({ id: "d_150", due_at: T0 + 150, ...inScope(null) }),
        mk({ kind: "payment_link", id: "pl_10", due_at: T0 + 10 })
      ]
      const dueIds = (store: StoreShape, kind: Kind, now: number, limit: number) =>
        Effect.map(
          store.transact((tx) => tx.due(kind, now, limit)),
          (docs) => docs.map((d) => d.id)
        )

      test("due returns rows of the kind with due_at <= now from every scope, oldest due first, at most limit", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, rows)
          expect(yield* dueIds(store, "invoice", T0 + 150, 10)).toStrictEqual(["d_50", "d_100", "d_150"])
          expect(yield* dueIds(store, "invoice", T0 + 150, 2)).toStrictEqual(["d_50", "d_100"])
          expect(yield* dueIds(store, "invoice", T0 + 49, 10)).toStrictEqual([])
          expect(yield* dueIds(store, "invoice", T0 + 50, 10)).toStrictEqual(["d_50"])
          expect(yield* dueIds(store, "payment_link", T0 + 1_000, 10)).toStrictEqual(["pl_10"])
          expect(yield* dueIds(store, "transfer", T0 + 1_000, 10)).toStrictEqual([])
          expect(yield* store.transact((tx) => tx.due("invoice", T0 + 50, 10))).toStrictEqual([rows[1]])
        }))

      test("due orders before it limits: with rows stored latest-due first, limit 1 is the earliest due", (store) =>
        Effect.gen(function* () {
          yield* insertAll(
            store,
            [300, 100, 200, 50].map((d) => mk({ id: `late_${d}`, due_at: T0 + d, ...inScope(A_TEST) }))
          )
          expect(yield* dueIds(store, "invoice", T0 + 1_000, 1), "limit 1").toStrictEqual(["late_50"])
          expect(yield* dueIds(store, "invoice", T0 + 1_000, 2), "limit 2").toStrictEqual(["late_50", "late_100"])
          expect(yield* dueIds(store, "invoice", T0 + 150, 3), "limit 3, two due").toStrictEqual([
            "late_50",
            "late_100"
          ])
        }))

      test("rows with null due_at are never due; updates of due_at are followed", (store) =>
        Effect.gen(function* () {
          yield* insertAll(store, rows)
          expect(yield* dueIds(store, "invoice", Number.MAX_SAFE_INTEGER, 100)).toStrictEqual([
            "d_50",
            "d_100",
            "d_150",
            "d_200"
          ])
          yield* store.transact((tx) =>
            Effect.gen(function* () {
              const nullDue = yield* tx.get("invoice", "d_null")
              const first = yield* tx.get("invoice", "d_50")
              if (nullDue === undefined || first === undefined) return yield* Effect.die("rows vanished")
              yield* tx.update({ ...nullDue, version: 2, due_at: T0 + 75 })
              yield* tx.update({ ...first, version: 2, due_at: null })
            })
          )
          expect(yield* dueIds(store, "invoice", Number.MAX_SAFE_INTEGER, 100)).toStrictEqual([
            "d_null",
            "d_100",
            "d_150",
            "d_200"
          ])
        }))
    })

    describe("purge (StorePurge, when the layer provides one)", () => {
      it("deletes the due rows of one kind, oldest due first, at most `limit`, with their keys; nothing else", (ctx) =>
        Effect.runPromise(
          Effect.gen(function* () {
            const store = yield* Store
            const purge = yield* Effect.serviceOption(StorePurge)
            if (Option.isNone(purge)) return ctx.skip("this store has no StorePurge")
            const key = (id: string, due_at: number | null, keys: ReadonlyArray<string> = []) =>
              mk({ kind: "idempotency", id, due_at, keys, data: { id } })
            yield* insertAll(store, [
              key("k1", T0 + 10),
              key("kx", T0 + 15, ["ik:x"]),
              key("k2", T0 + 20),
              key("k3", T0 + 30),
              key("k4", null),
              mk({ id: "inv_due", due_at: T0 + 5, keys: ["inv:key"] })
            ])
            const k3 = yield* getDoc(store, "idempotency", "k3")
            expect(yield* purge.value.purgeDue("idempotency", T0 + 20, 10)).toBe(3)
            for (const id of ["k1", "kx", "k2"]) expect(yield* getDoc(store, "idempotency", id), id).toBeUndefined()
            expect((yield* getDoc(store, "idempotency", "k3"))?.id).toBe("k3")
            expect((yield* getDoc(store, "idempotency", "k4"))?.id).toBe("k4")
            expect((yield* getDoc(store, "invoice", "inv_due"))?.keys, "another kind untouched").toStrictEqual([
              "inv:key"
            ])
            // the purged row's key is free again, and so is its id
            expect(yield* store.transact((tx) => tx.getByKey("idempotency", "ik:x"))).toBeUndefined()
            yield* insertAll(store, [key("ky", null, ["ik:x"]), key("k1", null)])
            expect((yield* store.transact((tx) => tx.getByKey("idempotency", "ik:x")))?.id).toBe("ky")
            // at most `limit`, oldest due first: k5 is due before k3 but comes after it by id and by
            // insertion, so a purge that takes `limit` rows before ordering them by due_at deletes k3
            yield* insertAll(store, [key("k5", T0 + 25)])
            expect(yield* purge.value.purgeDue("idempotency", T0 + 1_000, 1)).toBe(1)
            expect(yield* getDoc(store, "idempotency", "k5"), "the row due first is purged first").toBeUndefined()
            expect((yield* getDoc(store, "idempotency", "k3"))?.id, "the row due later waits").toBe("k3")
            expect(yield* purge.value.purgeDue("idempotency", T0 + 1_000, 10)).toBe(1)
            expect(yield* purge.value.purgeDue("idempotency", T0 + 1_000, 10)).toBe(0)
            // a unit that read a purged row and updates it meets a VersionConflict
            const lost = yield* Effect.exit(store.transact((tx) => tx.update({ ...(k3 as Doc), version: 2 })))
            expect(Exit.isFailure(lost) && Cause.pretty(lost.cause)).toContain("VersionConflict")
          }).pipe(Effect.provide(makeLayer()))
        ))
    })

    describe("ledger", () => {
      test("a balanced multi-currency transaction is accepted and balances sum per account and currency", (store) =>
        Effect.gen(function* () {
          const t1 = conversion("ltx_1", A_TEST, 10_000n, 300n, 5_000_000n)
          const t2 = ledgerTx("ltx_2", A_TEST, [
            ["merchant_available", "GMD", -1_000n],
            ["payouts_pending", "GMD", 1_000n]
          ])
          yield* store.transact((tx) => tx.post(t1))
          yield* store.transact((tx) => tx.post(t2))
          expect(canonBalances(yield* store.transact((tx) => tx.balances(A_TEST)))).toStrictEqual(
            canonBalances([
              { account: "customer_cash", currency: "GMD", amount: -10_000n },
              { account: "customer_usd", currency: "USD", amount: -5_000_000n },
              { account: "fees", currency: "GMD", amount: 300n },
              { account: "merchant_available", currency: "GMD", amount: 8_700n },
              { account: "payouts_pending", currency: "GMD", amount: 1_000n },
              { account: "treasury_usdc", currency: "USD", amount: 5_000_000n }
            ])
          )
        }))

      test("one account may hold both currencies; they are summed apart", (store) =>
        Effect.gen(function* () {
          const entries = ledgerTx("ltx_1", A_TEST, [
            ["treasury", "GMD", 700n],
            ["treasury", "USD", -10n],
            ["customer", "GMD", -700n],
            ["customer", "USD", 10n]
          ])
          yield* store.transact((tx) => tx.post(entries))
          expect(canonBalances(yield* store.transact((tx) => tx.balances(A_TEST)))).toStrictEqual(
            expectedBalances(entries, A_TEST)
          )
          expect(expectedBalances(entries, A_TEST)).toHaveLength(4)
        }))

      test("balances are scoped by business_id and mode", (store) =>
        Effect.gen(function* () {
          const all = [
            ...conversion("ltx_1", A_TEST, 10_000n, 300n, 5_000_000n),
            ...conversion("ltx_2", A_LIVE, 7_000n, 210n, 3_000_000n),
            ...conversion("ltx_3", B_TEST, 4_000n, 120n, 1_000_000n),
            ...conversion("ltx_4", A_TEST, 1_000n, 30n, 400_000n)
          ]
          yield* store.transact((tx) => tx.post(all))
          for (const scope of [A_TEST, A_LIVE, B_TEST, B_LIVE, NOBODY]) {
            expect(
              canonBalances(yield* store.transact((tx) => tx.balances(scope))),
              `${scope.business_id}/${scope.mode}`
            ).toStrictEqual(expectedBalances(all, scope))
          }
          expect(canonBalances(yield* store.transact((tx) => tx.balances(B_LIVE)))).toStrictEqual([])
        }))

      const refused: ReadonlyArray<readonly [string, ReadonlyArray<LedgerEntry>]> = [
        [
          "GMD off by one butut",
          ledgerTx("bad", A_TEST, [
            ["a", "GMD", 100n],
            ["b", "GMD", -99n]
          ])
        ],
        [
          "GMD balanced but USD not",
          ledgerTx("bad", A_TEST, [
            ["a", "GMD", 100n],
            ["b", "GMD", -100n],
            ["c", "USD", 1n]
          ])
        ],
        [
          "one currency compensating another",
          ledgerTx("bad", A_TEST, [
            ["a", "GMD", 10n],
            ["b", "USD", -10n]
          ])
        ],
        [
          "two transactions compensating each other",
          [...ledgerTx("bad_1", A_TEST, [["a", "GMD", 10n]]), ...ledgerTx("bad_2", A_TEST, [["b", "GMD", -10n]])]
        ],
        [
          "a balanced transaction next to an unbalanced one",
          [
            ...conversion("good", A_TEST, 500n, 5n, 20n),
            ...ledgerTx("bad", A_TEST, [
              ["a", "USD", 2n],
              ["b", "USD", -1n]
            ])
          ]
        ],
        ["a single one-sided line", ledgerTx("bad", A_TEST, [["a", "GMD", -1n]])]
      ]
      for (const [label, entries] of refused) {
        test(`an unbalanced set is refused with StoreError and nothing of the unit commits: ${label}`, (store) =>
          Effect.gen(function* () {
            const base = conversion("ltx_0", A_TEST, 10_000n, 300n, 5_000_000n)
            yield* store.transact((tx) => tx.post(base))
            const p: Probe = {
              rows: [["invoice", "inv_1"]],
              keys: [["invoice", "k1"]],
              lists: [["invoice", A_TEST]],
              scopes: [A_TEST]
            }
            const before = yield* snapshot(store, p)
            const error = yield* failureOf(
              store.transact((tx) =>
                Effect.gen(function* () {
                  yield* tx.insert(mk({ id: "inv_1", keys: ["k1"], due_at: T0 }))
                  yield* tx.post(conversion("ltx_ok", A_TEST, 2_000n, 60n, 1_000_000n))
                  yield* tx.post(entries)
                })
              )
            )
            expect(tagOf(error)).toBe("StoreError")
            expect(yield* snapshot(store, p)).toStrictEqual(before)
            expect(byId(yield* store.ledger)).toStrictEqual(byId(base))
          }))
      }

      test("ledger lists every entry of every scope exactly, and balances sums them exactly (signed bigint amounts beyond 2^53)", (store) =>
        Effect.gen(function* () {
          const big = 9_007_199_254_740_993n // 2^53 + 1: lost by any trip through a JS number
          const all = [
            ...conversion("ltx_1", A_TEST, 10_000n, 300n, 5_000_000n),
            ...ledgerTx("ltx_2", A_LIVE, [
              ["treasury_usdc", "USD", big],
              ["customer_usd", "USD", -big]
            ]),
            ...ledgerTx("ltx_3", B_TEST, [
              ["a", "GMD", 1n],
              ["b", "GMD", -1n]
            ])
          ]
          yield* store.transact((tx) => tx.post(all.slice(0, 5)))
          yield* store.transact((tx) => Effect.andThen(tx.post(all.slice(5, 7)), tx.post(all.slice(7))))
          expect(byId(yield* store.ledger), "ledger: every entry, amounts exact").toStrictEqual(byId(all))
          expect(
            canonBalances(yield* store.transact((tx) => tx.balances(A_LIVE))),
            "balances: the sum per account and currency, exact beyond 2^53 (no trip through a JS number)"
          ).toStrictEqual(expectedBalances(all, A_LIVE))
        }))
    })

    describe("model", () => {
      it(
        `random units of inserts, updates and failures agree with a Map model (${runs} runs)`,
        async () => {
          await fc.assert(
            fc.asyncProperty(fc.array(unitArb, { minLength: 1, maxLength: 12 }), (units) =>
              withStore((store) =>
                Effect.gen(function* () {
                  let model: ReadonlyMap<string, Doc> = new Map()
                  for (const [n, unit] of units.entries()) {
                    const { outcomes, next } = applyModel(model, unit)
                    const outcome = yield* runUnit(store, unit)
                    expect(outcomes, `unit ${n}: store said ${String(outcome)}`).toContain(outcome)
                    model = next
                    yield* compareWithModel(store, model)
                  }
                })
              )
            ),
            {
              numRuns: runs,
              ...(options?.seed === undefined ? {} : { seed: options.seed }),
              ...(options?.path === undefined ? {} : { path: options.path })
            }
          )
        },
        Math.max(30_000, runs * 1_000)
      )
    })
  })
}
