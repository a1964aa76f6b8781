import { Effect, Schedule, Stream } from "effect"
import { Chain } from "./ports/Chain.ts"
import { DuplicateKey, StoreError } from "./ports/Store.ts"
import * as Transfers from "./usecases/Transfers.ts"

/**
 * Consumes the Chain port's feed of confirmed transfers for as long as it runs
 * (fork it next to the server). The feed is at-least-once; the engine applies
 * each transfer at most once. A store failure is retried with exponential
 * backoff, capped at 30 s, for as long as it takes (the transfer must not be
 * dropped). A transfer the rules refuse (late, unknown address) is recorded by
 * `applyChainTransfer` with `applied: false`; the watcher moves on.
 */
export const runChainWatcher = Effect.gen(function* () {
  const chain = yield* Chain
  yield* Stream.runForEach(chain.confirmed, (transfer) =>
    Transfers.applyChainTransfer(transfer).pipe(
      // a store failure is retried; so is a DuplicateKey, which only a store reporting a lost race to a
      // concurrent report of the same transfer as one (the port says VersionConflict, which the unit of
      // work retries itself) would give: the retry then finds the transfer already applied
      Effect.retry({
        while: (e) => e instanceof StoreError || e instanceof DuplicateKey,
        schedule: Schedule.min([Schedule.exponential("100 millis", 2), Schedule.spaced("30 seconds")])
      }),
      // the schedule never gives up, so no failure is left to handle
      Effect.orDie
    )
  )
})
