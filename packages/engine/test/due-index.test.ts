import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { DueIndex } from "../src/adapters/memory/DueIndex.ts"
import * as MemoryStore from "../src/adapters/memory/MemoryStore.ts"
import { type Doc, type Kind, Store } from "../src/ports/Store.ts"

/**
 * The memory store's due index answers `Tx.due` without scanning a kind: it
 * must answer exactly what a scan of the rows would, oldest due first, then by
 * id, at most `limit`, with a unit's staged writes seen. Both are checked
 * against a plain scan: the index alone over long histories (stale entries,
 * compaction, rows going due and not due again), then the store across units
 * of work, committed and not.
 */

/** What a scan answers: rows with `due_at <= now`, by (due_at, id), at most `limit`. */
const scan = (rows: ReadonlyMap<string, number | null>, now: number, limit: number, skip?: ReadonlySet<string>) =>
  [...rows]
    .filter((e): e is [string, number] => e[1] !== null && e[1] <= now && skip?.has(e[0]) !== true)
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, Math.max(0, limit))
    .map(([id]) => id)

const idArb = fc.integer({ min: 0, max: 59 }).map((n) => `r${n}`)
const dueArb = fc.option(fc.integer({ min: 0, max: 30 }), { nil: null, freq: 4 })
const queryArb = fc.record({ now: fc.integer({ min: -1, max: 32 }), limit: fc.integer({ min: 0, max: 70 }) })

describe("DueIndex", () => {
  it("answers exactly what a scan of the rows answers, after any history of due_at changes", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            { weight: 4, arbitrary: fc.record({ set: idArb, due_at: dueArb }) },
            { weight: 1, arbitrary: fc.record({ query: queryArb, skip: fc.uniqueArray(idArb, { maxLength: 5 }) }) }
          ),
          { maxLength: 400 }
        ),
        queryArb,
        (ops, last) => {
          const index = new DueIndex()
          const rows = new Map<string, number | null>()
          for (const op of ops) {
            if ("set" in op) {
              index.set(op.set, op.due_at)
              rows.set(op.set, op.due_at)
            } else {
              const skip = new Set(op.skip)
              expect(index.due(op.query.now, op.query.limit, skip)).toStrictEqual(
                scan(rows, op.query.now, op.query.limit, skip)
              )
            }
          }
          expect(index.due(last.now, last.limit)).toStrictEqual(scan(rows, last.now, last.limit))
          expect(index.size).toBe([...rows.values()].filter((d) => d !== null).length)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("stays exact through compactions (thousands of stale entries) and keeps its live rows", () => {
    const index = new DueIndex()
    const rows = new Map<string, number | null>()
    let seed = 7
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed
    }
    for (let i = 0; i < 20_000; i++) {
      const id = `r${next() % 500}`
      const due_at = next() % 5 === 0 ? null : next() % 1000
      index.set(id, due_at)
      rows.set(id, due_at)
      if (i % 997 === 0) expect(index.due(500, 40)).toStrictEqual(scan(rows, 500, 40))
    }
    expect(index.due(Number.MAX_SAFE_INTEGER, 1000)).toStrictEqual(scan(rows, Number.MAX_SAFE_INTEGER, 1000))
    expect(index.size).toBe([...rows.values()].filter((d) => d !== null).length)
  })
})

const scope = { business_id: "biz_a", mode: "live" as const }
const row = (kind: Kind, id: string, due_at: number | null, version = 1): Doc => ({
  kind,
  id,
  business_id: scope.business_id,
  mode: scope.mode,
  created_at: 1,
  version,
  due_at,
  keys: [],
  data: { n: version }
})

describe("MemoryStore: due through the index", () => {
  it("answers what a scan of the unit's view answers, staged writes included, committed or rolled back", async () => {
    const write = fc.record({
      kind: fc.constantFrom<Kind>("invoice", "outbox"),
      id: fc.integer({ min: 0, max: 24 }).map((n) => `r${n}`),
      due_at: dueArb
    })
    // units of work: each writes some rows, asks `due` (now, limit) in the middle and at the end, and maybe fails
    const unit = fc.record({
      writes: fc.array(write, { maxLength: 30 }),
      ask: fc.integer({ min: 0, max: 30 }),
      query: queryArb,
      fails: fc.boolean()
    })
    await fc.assert(
      fc.asyncProperty(fc.array(unit, { minLength: 1, maxLength: 12 }), async (units) => {
        const program = Effect.gen(function* () {
          const store = yield* Store
          /** Committed rows, by kind then id: their due_at. */
          const committed = new Map<Kind, Map<string, Doc>>([
            ["invoice", new Map()],
            ["outbox", new Map()]
          ])
          const view = (rows: Map<Kind, Map<string, Doc>>, kind: Kind) =>
            new Map([...(rows.get(kind) as Map<string, Doc>)].map(([id, d]) => [id, d.due_at]))
          for (const u of units) {
            const mine = new Map([...committed].map(([k, m]) => [k, new Map(m)]))
            const check = (tx: Parameters<Parameters<typeof store.transact>[0]>[0]) =>
              Effect.forEach(["invoice", "outbox"] as const, (kind) =>
                Effect.map(tx.due(kind, u.query.now, u.query.limit), (docs) => {
                  expect(docs.map((d) => d.id)).toStrictEqual(scan(view(mine, kind), u.query.now, u.query.limit))
                  // the rows themselves, as the unit sees them
                  for (const d of docs) expect(d).toBe(mine.get(kind)?.get(d.id))
                })
              )
            const work = store.transact((tx) =>
              Effect.gen(function* () {
                for (let i = 0; i < u.writes.length; i++) {
                  if (i === u.ask) yield* check(tx)
                  const w = u.writes[i] as (typeof u.writes)[number]
                  const current = yield* tx.get(w.kind, w.id)
                  if (current === undefined) yield* tx.insert(row(w.kind, w.id, w.due_at))
                  else yield* tx.update({ ...current, version: current.version + 1, due_at: w.due_at })
                  mine.get(w.kind)?.set(w.id, (yield* tx.get(w.kind, w.id)) as Doc)
                }
                yield* check(tx)
                if (u.fails) return yield* Effect.fail("rolled back" as const)
              })
            )
            const outcome = yield* Effect.result(work)
            if (outcome._tag === "Success") for (const [k, m] of mine) committed.set(k, m)
          }
          // after the last unit: a fresh unit sees exactly the committed rows
          yield* store.transact((tx) =>
            Effect.forEach(["invoice", "outbox"] as const, (kind) =>
              Effect.map(tx.due(kind, Number.MAX_SAFE_INTEGER, 1000), (docs) => {
                expect(docs.map((d) => d.id)).toStrictEqual(scan(view(committed, kind), Number.MAX_SAFE_INTEGER, 1000))
              })
            )
          )
        })
        await Effect.runPromise(program.pipe(Effect.provide(MemoryStore.layer)))
      }),
      { numRuns: 150 }
    )
  })
})
