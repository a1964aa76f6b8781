import { Clock, Context, Effect, Layer, Option } from "effect"
import { type Doc, Store, type StoreError } from "../../ports/Store.ts"
import { callersStore, putCounter, unitOfWork } from "../../usecases/common.ts"

/**
 * The sandbox clock (decisions §9): the real clock plus every advance made
 * through the test helper. It is effect's `Clock`, so every use case, the
 * scheduler and the outbox read sandbox time without knowing it; sleeping and
 * monotonic time stay real (they measure durations, not dates).
 *
 * The total advance is a system row of the Store (kind `counter`, id
 * `sandbox_clock`, no owner), read when the layer is built and written in the
 * unit of work of each advance: a server restarted on the same data keeps its
 * sandbox time. Several processes on one store (PostgreSQL): an advance adds to
 * the stored total, whoever made the others, and `refresh` re-reads it; the
 * HTTP API refreshes before each pass of its due loop (about every second) and
 * in the clock helpers, so another process's advance is seen within a pass, and
 * at once by `GET /v1/test_helpers/clock`.
 */

/** Id of the system row holding the total advance. */
export const offset_row_id = "sandbox_clock"

interface OffsetRow {
  /** Total of every advance, milliseconds. */
  readonly offset_ms: number
}

/** Drives the sandbox clock. */
export class SandboxClockControl extends Context.Service<
  SandboxClockControl,
  {
    /** Total advance so far, milliseconds. */
    readonly offset: Effect.Effect<number>
    /**
     * Moves the clock forward by `ms` (a positive whole number), persisted in the
     * Store before it takes effect; returns the new sandbox time (epoch ms).
     */
    readonly advance: (ms: number) => Effect.Effect<number, StoreError>
    /**
     * Re-reads the stored total advance (another process's advances on the same
     * Store); the clock never moves back. Returns the total, milliseconds.
     */
    readonly refresh: Effect.Effect<number, StoreError>
  }
>()("@xaalis/engine/adapters/sandbox/SandboxClockControl") {}

/** `base` moved forward by `offset()` milliseconds; sleep and monotonic time are `base`'s. */
export const offsetClock = (base: Clock.Clock, offset: () => number): Clock.Clock => {
  const millis = () => base.currentTimeMillisUnsafe() + offset()
  const nanos = () => base.currentTimeNanosUnsafe() + BigInt(offset()) * 1_000_000n
  return {
    currentTimeMillisUnsafe: millis,
    currentTimeMillis: Effect.sync(millis),
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.sync(nanos),
    monotonicTimeNanosUnsafe: () => base.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: base.monotonicTimeNanos,
    sleep: (duration) => base.sleep(duration)
  }
}

const readOffset = unitOfWork((tx) =>
  Effect.map(tx.get("counter", offset_row_id), (doc) => (doc?.data as OffsetRow | undefined)?.offset_ms ?? 0)
)

/**
 * The sandbox `Clock` and its `SandboxClockControl`, over the clock in place
 * when the layer is built (the real clock; `TestClock` in tests). Requires the
 * Store, where the offset lives; fails only if the Store cannot be read.
 * (`Clock` is a `Context.Reference`, so it does not show in the layer's type.)
 *
 * @example
 * const layer = SandboxClock.layer.pipe(Layer.provideMerge(MemoryStore.layer))
 * // yield* SandboxClockControl -> advance(600_000): ten minutes later for every use case
 */
export const layer: Layer.Layer<SandboxClockControl, StoreError, Store> = Layer.effectContext(
  Effect.gen(function* () {
    const store = yield* Store
    const base = yield* Clock.Clock
    let offset = yield* readOffset.pipe(Effect.provideService(Store, store))
    const advance = (ms: number) =>
      Effect.gen(function* () {
        if (!Number.isSafeInteger(ms) || ms <= 0) return yield* Effect.die(new RangeError(`advance by ${ms} ms`))
        // through the caller's Store (see `callersStore`): under an Idempotency-Key, the key's row
        // commits with the advance, so a retry after a crash is answered instead of moving the clock again
        const total = yield* unitOfWork((tx) =>
          Effect.gen(function* () {
            const doc = (yield* tx.get("counter", offset_row_id)) as Doc<OffsetRow> | undefined
            // two first advances racing: the loser retries the unit of work and updates the winner's row
            const row: OffsetRow = { offset_ms: (doc?.data.offset_ms ?? 0) + ms }
            yield* putCounter(tx, { id: offset_row_id, scope: null, now: 0, current: doc, data: row })
            return row.offset_ms
          })
        ).pipe(Effect.provideService(Store, yield* callersStore(store)))
        // offsets only grow: of two concurrent advances, the larger total is the later commit
        offset = Math.max(offset, total)
        return base.currentTimeMillisUnsafe() + offset
      })
    const refresh = Effect.map(readOffset.pipe(Effect.provideService(Store, store)), (stored) => {
      offset = Math.max(offset, stored)
      return offset
    })
    const control = SandboxClockControl.of({ offset: Effect.sync(() => offset), advance, refresh })
    return Context.make(
      Clock.Clock,
      offsetClock(base, () => offset)
    ).pipe(Context.add(SandboxClockControl, control))
  })
)

/** `refresh` of the sandbox clock when there is one (the sandbox is on); nothing otherwise. */
export const refreshIfPresent: Effect.Effect<void, StoreError> = Effect.flatMap(
  Effect.serviceOption(SandboxClockControl),
  (control) => (Option.isSome(control) ? Effect.asVoid(control.value.refresh) : Effect.void)
)
