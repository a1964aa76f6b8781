import { MemoryStore, SandboxClock, Store } from "@xaalis/engine"
import { Clock, Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"

/**
 * Runs `body` with the sandbox clock over a TestClock (at 0) and the given
 * store; `adjust` moves the TestClock underneath (the sandbox clock hides it).
 */
const withSandboxClock = <A, E>(
  store: Store["Service"],
  body: (adjust: (ms: number) => Effect.Effect<void>) => Effect.Effect<A, E, SandboxClock.SandboxClockControl>
) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const testClock = yield* Clock.Clock
        const adjust = (ms: number) => Effect.provideService(TestClock.adjust(ms), Clock.Clock, testClock)
        const context = yield* Layer.build(SandboxClock.layer.pipe(Layer.provide(Layer.succeed(Store, store))))
        return yield* Effect.provideContext(body(adjust), context)
      })
    ).pipe(Effect.provide(TestClock.layer()))
  )

describe("SandboxClock", () => {
  it("is the underlying clock plus every advance, persisted in the store for the next start", async () => {
    const store = Effect.runSync(MemoryStore.makeMemoryStore)
    const first = await withSandboxClock(store, (adjust) =>
      Effect.gen(function* () {
        const control = yield* SandboxClock.SandboxClockControl
        const before = yield* Clock.currentTimeMillis
        const answered = yield* control.advance(90_000)
        yield* adjust(10_000)
        const after = yield* Clock.currentTimeMillis
        const nanos = yield* Clock.currentTimeNanos
        yield* control.advance(10_000)
        return { before, answered, after, nanos, offset: yield* control.offset }
      })
    )
    expect(first).toEqual({ before: 0, answered: 90_000, after: 100_000, nanos: 100_000_000_000n, offset: 100_000 })
    const row = await Effect.runPromise(store.transact((tx) => tx.get("counter", SandboxClock.offset_row_id)))
    expect(row).toMatchObject({ business_id: null, mode: null, data: { offset_ms: 100_000 } })

    const restarted = await withSandboxClock(store, () =>
      Effect.gen(function* () {
        const control = yield* SandboxClock.SandboxClockControl
        return { now: yield* Clock.currentTimeMillis, offset: yield* control.offset }
      })
    )
    expect(restarted).toEqual({ now: 100_000, offset: 100_000 })
  })

  it("adds concurrent advances up, and refuses a non-positive or fractional advance as a defect", async () => {
    const store = Effect.runSync(MemoryStore.makeMemoryStore)
    const offset = await withSandboxClock(store, () =>
      Effect.gen(function* () {
        const control = yield* SandboxClock.SandboxClockControl
        yield* Effect.forEach([1, 2, 3, 4, 5], (n) => control.advance(n * 1000), { concurrency: "unbounded" })
        for (const bad of [0, -1, 1.5, Number.NaN]) {
          const exit = yield* Effect.exit(control.advance(bad))
          expect(Exit.hasDies(exit)).toBe(true)
        }
        return yield* control.offset
      })
    )
    expect(offset).toBe(15_000)
  })
})
