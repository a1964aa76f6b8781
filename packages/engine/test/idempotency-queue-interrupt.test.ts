import { describe, it } from "@effect/vitest"
import { Idempotency, IdsAdapter, MemoryStore, Store } from "@xaalis/engine"
import { Effect, Exit, type Fiber, Scheduler } from "effect"
import { expect } from "vitest"

/**
 * The per-process queue of an Idempotency-Key's uses registers the running use
 * and installs the `Effect.ensuring` that removes it. An interruption landing
 * between the two (as it could before they were made one uninterruptible step)
 * leaves the entry behind with a Deferred that is never completed: every later
 * use of that key in the process would wait for it forever.
 *
 * To land the interruption deterministically, the first use runs on a
 * scheduler that yields after every operation, with its tasks run by hand:
 * for each n, the first use gets n steps and is interrupted; then a second use
 * of the same key must finish once every pending task has run.
 */

const tasks: Array<() => void> = []
/**
 * Yields after each operation (a resumed run loop counts the resumption as its
 * first operation, then runs one more); tasks wait in `tasks` until run by hand.
 */
const stepping: Scheduler.Scheduler = {
  executionMode: "async",
  shouldYield: (fiber) => fiber.currentOpCount >= 3,
  makeDispatcher: () => ({
    scheduleTask: (task) => {
      tasks.push(task)
    },
    flush: () => {
      drain()
    }
  })
}
const drain = () => {
  for (let i = 0; i < 100_000 && tasks.length > 0; i++) tasks.shift()?.()
}

const caller = { business_id: "biz", mode: "live" as const, account_id: "acc" }

describe("the in-process queue of an Idempotency-Key", () => {
  it("an interrupted first use never leaves later uses of the key waiting forever", () => {
    const stuck: Array<number> = []
    for (let n = 0; n < 120; n++) {
      tasks.length = 0
      const store = Effect.runSync(MemoryStore.makeMemoryStore)
      const run = <A>(request: Effect.Effect<A>): Fiber.Fiber<A, unknown> =>
        Effect.runFork(
          Idempotency.idempotent(caller, "key", "POST /v1/x {}", request).pipe(
            Effect.provideService(Store, store),
            Effect.provide(IdsAdapter.layerDeterministic(1)),
            Effect.provideService(Scheduler.Scheduler, stepping)
          )
        )
      const first = run(Effect.never)
      for (let i = 0; i < n && tasks.length > 0; i++) tasks.shift()?.()
      first.interruptUnsafe()
      drain()
      const second = run(Effect.succeed("second"))
      drain()
      const exit = second.pollUnsafe()
      if (exit === undefined) {
        stuck.push(n)
        second.interruptUnsafe()
        drain()
      } else {
        expect(Exit.isSuccess(exit), `n=${n}: ${String(exit)}`).toBe(true)
      }
    }
    expect(stuck, "steps after which interrupting the first use left the key's later uses waiting forever").toEqual([])
  })
})
