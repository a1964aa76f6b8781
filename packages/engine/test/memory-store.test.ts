import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as MemoryStore from "../src/adapters/memory/MemoryStore.ts"
import { type Doc, type Kind, type LedgerEntry, Store } from "../src/ports/Store.ts"

/**
 * The in-memory store's own mechanics, beyond the conformance suite (testkit):
 * freezing only what a new version does not share with the stored one, the
 * staged list of a unit of work turning into an index when the unit writes
 * many rows, and the ledger's copies in and out.
 */

const scope = { business_id: "biz_a", mode: "live" as const }

const doc = <D>(kind: Kind, id: string, data: D, over: Partial<Doc<D>> = {}): Doc<D> => ({
  kind,
  id,
  business_id: scope.business_id,
  mode: scope.mode,
  created_at: 1,
  version: 1,
  due_at: null,
  keys: [],
  data,
  ...over
})

/** Whether `mutate` fails to change anything (it must throw a TypeError: stored objects are frozen). */
const refused = (mutate: () => void): boolean => {
  try {
    mutate()
    return false
  } catch (e) {
    return e instanceof TypeError
  }
}

const get = (kind: Kind, id: string) =>
  Effect.gen(function* () {
    return yield* (yield* Store).transact((tx) => tx.get(kind, id))
  })

describe("MemoryStore: freezing what a new version does not share with the stored one", () => {
  it.effect("an update freezes new subtrees, including objects a caller froze only shallowly", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const shared = { rate: { units: 70n, scale: 0 } }
      const v1 = doc("conversion", "c1", { shared, timeline: [{ at: 1, tags: ["a"] }], note: { text: "x" } })
      yield* store.transact((tx) => tx.insert(v1))
      const stored = (yield* get("conversion", "c1")) as Doc<typeof v1.data>
      // the new version shares `shared` and the first timeline entry, and brings new objects
      const fresh = Object.freeze({ deep: { list: [1, 2] } }) // shallow: `deep` and `list` are not frozen
      const data2 = {
        ...stored.data,
        timeline: [...stored.data.timeline, { at: 2, tags: ["b"] }],
        note: fresh
      }
      yield* store.transact((tx) => tx.update({ ...stored, version: 2, data: data2 }))
      const v2 = (yield* get("conversion", "c1")) as Doc<typeof data2>
      assert.strictEqual(v2.version, 2)
      // shared subtrees are the very objects stored before (not copied), still frozen
      assert.strictEqual(v2.data.shared, stored.data.shared)
      assert.strictEqual(v2.data.timeline[0], stored.data.timeline[0])
      // every new object is deep-frozen, however the caller built it
      assert.isTrue(refused(() => ((v2.data.timeline[1] as { tags: Array<string> }).tags as Array<string>).push("c")))
      assert.isTrue(refused(() => (v2.data.note.deep.list as Array<number>).push(3)))
      assert.isTrue(refused(() => ((v2.data.note as { deep: unknown }).deep = null)))
      assert.isTrue(refused(() => ((v2.data.timeline as Array<unknown>).length = 0)))
      assert.isTrue(refused(() => ((v2 as { version: number }).version = 3)))
      assert.deepStrictEqual(yield* get("conversion", "c1"), v2)
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("a new version that puts an object of the old one at another place still gets it frozen", () =>
    Effect.gen(function* () {
      const store = yield* Store
      yield* store.transact((tx) => tx.insert(doc("invoice", "i1", { a: { n: 1 }, b: { n: 2 } })))
      const stored = (yield* get("invoice", "i1")) as Doc<{ a: { n: number }; b: { n: number } }>
      // swapped: each is compared with the old value under the same key, which is another (frozen) object
      const swapped = { a: stored.data.b, b: { n: 3 } }
      yield* store.transact((tx) => tx.update({ ...stored, version: 2, data: swapped }))
      const read = (yield* get("invoice", "i1")) as Doc<typeof swapped>
      assert.isTrue(refused(() => ((read.data.b as { n: number }).n = 4)))
      assert.isTrue(refused(() => ((read.data.a as { n: number }).n = 4)))
      assert.deepStrictEqual(read.data, { a: { n: 2 }, b: { n: 3 } })
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("stored rows keep only the port's fields, and rows without keys cannot gain one", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const given = { ...doc("payment_link", "l1", { title: "t" }), extra: "not a Doc field" }
      yield* store.transact((tx) => tx.insert(given))
      const read = (yield* get("payment_link", "l1")) as Doc
      assert.deepStrictEqual(Object.keys(read).sort(), [
        "business_id",
        "created_at",
        "data",
        "due_at",
        "id",
        "keys",
        "kind",
        "mode",
        "version"
      ])
      assert.isTrue(refused(() => (read.keys as Array<string>).push("k")))
      assert.isUndefined(yield* store.transact((tx) => tx.getByKey("payment_link", "k")))
    }).pipe(Effect.provide(MemoryStore.layer))
  )
})

describe("MemoryStore: a unit of work that writes many rows", () => {
  it("sees its own writes, once each, in get, getByKey, list and due, and commits them all", async () => {
    await fc.assert(
      fc.asyncProperty(
        // past the 16 rows a unit keeps in a plain list, to the index, and back over the same rows
        fc.array(fc.tuple(fc.integer({ min: 0, max: 39 }), fc.constantFrom<Kind>("invoice", "payment_link")), {
          minLength: 1,
          maxLength: 120,
          size: "max"
        }),
        async (writes) => {
          const program = Effect.gen(function* () {
            const store = yield* Store
            // one row stored before, which the unit rewrites among others
            yield* store.transact((tx) => tx.insert(doc("invoice", "r0", { n: -1 }, { due_at: 0 })))
            const expected = new Map<string, Doc>([["invoice/r0", doc("invoice", "r0", { n: -1 }, { due_at: 0 })]])
            const inUnit = yield* store.transact((tx) =>
              Effect.gen(function* () {
                for (const [n, kind] of writes) {
                  const id = `r${n}`
                  const current = yield* tx.get(kind, id)
                  const next =
                    current === undefined
                      ? doc(kind, id, { n }, { due_at: n, keys: [`key:${kind}:${id}`] })
                      : { ...current, version: current.version + 1, data: { n, again: true } }
                  yield* current === undefined ? tx.insert(next) : tx.update(next)
                  expected.set(`${kind}/${id}`, next)
                }
                // what the unit sees before it commits
                const seen: Array<Doc | undefined> = []
                for (const [key, d] of expected) {
                  const [kind, id] = key.split("/") as [Kind, string]
                  seen.push(yield* tx.get(kind, id))
                  if (d.keys[0] !== undefined) assert.strictEqual((yield* tx.getByKey(kind, d.keys[0]))?.id, id)
                }
                const listed = yield* tx.list("invoice", scope, { limit: 100, offset: 0 })
                const due = yield* tx.due("invoice", 1_000, 100)
                return { seen, listed, due }
              })
            )
            const invoices = [...expected.values()].filter((d) => d.kind === "invoice")
            assert.deepStrictEqual(inUnit.seen, [...expected.values()])
            assert.strictEqual(inUnit.listed.total, invoices.length)
            assert.sameMembers(
              inUnit.listed.docs.map((d) => d.id),
              invoices.map((d) => d.id)
            )
            assert.sameMembers(
              inUnit.due.map((d) => d.id),
              invoices.map((d) => d.id)
            )
            // and after it committed
            for (const [key, d] of expected) {
              const [kind, id] = key.split("/") as [Kind, string]
              assert.deepStrictEqual(yield* get(kind, id), d)
            }
          })
          await Effect.runPromise(program.pipe(Effect.provide(MemoryStore.layer)))
        }
      ),
      { numRuns: 60 }
    )
  })

  it.effect("a unit that fails after many writes leaves nothing behind", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const failed = yield* store
        .transact((tx) =>
          Effect.gen(function* () {
            for (let i = 0; i < 30; i++) yield* tx.insert(doc("invoice", `x${i}`, { i }, { keys: [`k${i}`] }))
            return yield* Effect.fail("boom" as const)
          })
        )
        .pipe(Effect.flip)
      assert.strictEqual(failed, "boom")
      assert.isUndefined(yield* get("invoice", "x0"))
      assert.isUndefined(yield* get("invoice", "x29"))
      assert.isUndefined(yield* store.transact((tx) => tx.getByKey("invoice", "k17")))
    }).pipe(Effect.provide(MemoryStore.layer))
  )
})

describe("MemoryStore: the ledger keeps its own copies", () => {
  const entry = (id: string, amount: bigint, account: string): LedgerEntry => ({
    id,
    transaction_id: "ltx_1",
    business_id: scope.business_id,
    mode: scope.mode,
    account,
    currency: "GMD",
    amount,
    created_at: 1,
    cause: "test"
  })

  it.effect("posted lines, and lines read back, are copies: changing them changes nothing stored", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const given = [entry("ltx_1:0", 500n, "conversion_clearing"), entry("ltx_1:1", -500n, "business_balance")]
      yield* store.transact((tx) => tx.post(given))
      ;(given[0] as { amount: bigint }).amount = 1n
      const read = yield* store.ledger
      assert.notStrictEqual(read[0], given[0])
      ;(read[1] as { amount: bigint }).amount = 7n
      const again = yield* store.ledger
      assert.deepStrictEqual(
        again.map((e) => e.amount),
        [500n, -500n]
      )
      const balances = yield* store.transact((tx) => tx.balances(scope))
      assert.sameDeepMembers(
        balances.map((b) => ({ account: b.account, amount: b.amount })),
        [
          { account: "conversion_clearing", amount: 500n },
          { account: "business_balance", amount: -500n }
        ]
      )
    }).pipe(Effect.provide(MemoryStore.layer))
  )
})
