import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryNotifier, MemoryStore, Sandbox, Store, type Tx } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { timeLimitUnder } from "../src/EngineModel.ts"
import { runEngineModel } from "../src/index.ts"

/**
 * The model suite must catch broken engines. Each mutant wraps the memory store's
 * units of work so that the engine misbehaves in one way a real adapter could,
 * and the suite must reject it, naming the broken invariant.
 */

type Mutation = (tx: Tx, state: { n: number }) => Tx

const mutant = (mutate: Mutation) => () => {
  const store = Layer.effect(
    Store,
    Effect.map(MemoryStore.makeMemoryStore, (inner) => {
      const state = { n: 0 }
      return Store.of({ transact: (work) => inner.transact((tx) => work(mutate(tx, state))), ledger: inner.ledger })
    })
  )
  return Layer.mergeAll(
    store,
    Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(
      Layer.provideMerge(IdsAdapter.layerDeterministic(7))
    ),
    MemoryNotifier.layer
  )
}

const detects = async (mutate: Mutation, message: RegExp) => {
  const failure = await runEngineModel(mutant(mutate), { runs: 300, maxCommands: 25 }).then(
    () => undefined,
    (e: unknown) => e as Error
  )
  expect(failure, "the suite passed a broken engine").toBeDefined()
  // fast-check's report: seed, path and the shrunk commands; the failed check is its cause
  expect(failure?.message).toMatch(/seed: -?\d+, path: "[\d:]+"/)
  expect(failure?.message).toMatch(/Counterexample: \[/)
  expect(String((failure?.cause as Error | undefined)?.message)).toMatch(message)
}

describe("the engine model suite catches broken engines", () => {
  it(
    "a store that loses some outbox rows (a lost webhook)",
    () =>
      detects(
        (tx, state) => ({
          ...tx,
          insert: (doc) => (doc.kind === "outbox" && ++state.n % 3 === 0 ? Effect.void : tx.insert(doc))
        }),
        /outbox rows/
      ),
    60_000
  )

  it(
    "a store whose due rows miss the ones due exactly now (expiries and overdue marks late)",
    () =>
      detects(
        (tx) => ({ ...tx, due: (kind, now, limit) => tx.due(kind, now - 1, limit) }),
        /what the scheduler did|status|balance/
      ),
    60_000
  )

  it(
    "a store whose lists ignore the mode (test and live objects mix)",
    () =>
      detects(
        (tx) => ({
          ...tx,
          list: (kind, scope, page) =>
            kind === "outbox"
              ? tx.list(kind, scope, page)
              : Effect.map(
                  Effect.all([
                    tx.list(kind, scope, page),
                    tx.list(kind, { ...scope, mode: scope.mode === "live" ? "test" : "live" }, page)
                  ]),
                  ([a, b]) => ({ docs: [...a.docs, ...b.docs], total: a.total + b.total })
                )
        }),
        /listed in exactly its own business and mode/
      ),
    60_000
  )

  it(
    "a store that drops the ledger transactions of payouts (money leaves without a trace)",
    () =>
      detects(
        (tx) => ({
          ...tx,
          post: (entries) => (entries.some((e) => e.cause.startsWith("payout/")) ? Effect.void : tx.post(entries))
        }),
        /balance/
      ),
    60_000
  )

  it(
    "a store that books conversion credits twice (credited above Settlement.credited)",
    () =>
      detects(
        (tx) => ({
          ...tx,
          post: (entries) =>
            entries.some((e) => e.cause.startsWith("conversion/"))
              ? Effect.andThen(
                  tx.post(entries),
                  tx.post(entries.map((e) => ({ ...e, id: `${e.id}'`, transaction_id: `${e.transaction_id}'` })))
                )
              : tx.post(entries)
        }),
        /credited/
      ),
    60_000
  )
})

describe("the engine model suite out of time", () => {
  it("starts no run past timeLimitMs and fails with the seed, so nothing goes on behind the next test", async () => {
    let builds = 0
    const counted = () => {
      builds += 1
      return mutant((tx) => tx)()
    }
    const started = performance.now()
    const failure = await runEngineModel(counted, { runs: 100_000, maxCommands: 25, timeLimitMs: 300 }).then(
      () => undefined,
      (e: unknown) => e as Error
    )
    expect(failure?.message).toMatch(/Property interrupted after \d+ tests\s*\{ seed: -?\d+ \}/)
    expect(performance.now() - started).toBeLessThan(20_000)
    const atFailure = builds
    expect(atFailure).toBeGreaterThan(0)
    expect(atFailure).toBeLessThan(100_000)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(builds).toBe(atFailure) // no run started after the failure
  }, 30_000)

  it("engineModelSuite leaves a tenth of its timeout (at least 5 s, at most half) for the run under way", () => {
    expect(timeLimitUnder(60_000)).toBe(54_000)
    expect(timeLimitUnder(20_000)).toBe(15_000)
    expect(timeLimitUnder(860_000)).toBe(774_000)
    // a short timeout keeps half of it for the runs (a correct engine must not fail for want of time)
    expect(timeLimitUnder(5_000)).toBe(2_500)
    expect(timeLimitUnder(8_000)).toBe(4_000)
  })
})
