import { Clock, Context, Effect, Layer } from "effect"
import { type Delivery, DeliveryFailed, Notifier } from "../../ports/Notifier.ts"

/** One attempt seen by the in-memory receiver, with its outcome and clock time. */
export interface RecordedAttempt extends Delivery {
  readonly ok: boolean
  /** `Clock.currentTimeMillis` when the attempt was made (the TestClock/sandbox time). */
  readonly at: number
}

/**
 * The control side of the in-memory notifier: what tests and the sandbox use to
 * look at what was "received" and to make receivers fail.
 *
 * Failure rules, checked in this order on each attempt:
 * 1. a rule for the attempt's URL (`failFor(url, n)` fails the next n attempts to
 *    that URL, `failFor(url, "always")` every attempt until `succeedFor(url)`);
 * 2. the global counter (`failNext(n)` fails the next n attempts to any URL).
 * A failed attempt fails with `DeliveryFailed` ("simulated failure: HTTP 500").
 */
export interface Control {
  /** Every attempt, successful or not, in order. */
  readonly attempts: Effect.Effect<ReadonlyArray<RecordedAttempt>>
  /** The successful attempts only: what the receivers actually accepted. */
  readonly deliveries: Effect.Effect<ReadonlyArray<RecordedAttempt>>
  readonly failNext: (count: number) => Effect.Effect<void>
  readonly failFor: (url: string, count: number | "always") => Effect.Effect<void>
  /** Removes the rule for `url`: its receiver answers 2xx again. */
  readonly succeedFor: (url: string) => Effect.Effect<void>
  /** Forgets every recorded attempt and every failure rule. */
  readonly reset: Effect.Effect<void>
}

/** The control side as a service, provided by `layer`. */
export class MemoryNotifierControl extends Context.Service<MemoryNotifierControl, Control>()(
  "@xaalis/engine/adapters/memory/MemoryNotifierControl"
) {}

export const simulated_failure_message = "simulated failure: HTTP 500"

/** Builds a fresh in-memory notifier and its control handle (they share state). */
export const make: Effect.Effect<{ readonly notifier: Notifier["Service"]; readonly control: Control }> = Effect.sync(
  () => {
    const log: Array<RecordedAttempt> = []
    const rules = new Map<string, number | "always">()
    let failNextCount = 0

    /** Decides and consumes the failure rule for one attempt. */
    const shouldFail = (url: string): boolean => {
      const rule = rules.get(url)
      if (rule === "always") return true
      if (rule !== undefined && rule > 0) {
        if (rule === 1) rules.delete(url)
        else rules.set(url, rule - 1)
        return true
      }
      if (failNextCount > 0) {
        failNextCount--
        return true
      }
      return false
    }

    const notifier = Notifier.of({
      deliver: (delivery) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => {
          const ok = !shouldFail(delivery.url)
          log.push({ ...delivery, ok, at })
          return ok ? Effect.void : Effect.fail(new DeliveryFailed({ message: simulated_failure_message }))
        })
    })

    const control: Control = {
      attempts: Effect.sync(() => [...log]),
      deliveries: Effect.sync(() => log.filter((a) => a.ok)),
      failNext: (count) =>
        Effect.sync(() => {
          failNextCount = Math.max(0, Math.floor(count))
        }),
      failFor: (url, count) =>
        Effect.sync(() => {
          if (count === "always") rules.set(url, "always")
          else if (count > 0) rules.set(url, Math.floor(count))
          else rules.delete(url)
        }),
      succeedFor: (url) => Effect.sync(() => void rules.delete(url)),
      reset: Effect.sync(() => {
        log.length = 0
        rules.clear()
        failNextCount = 0
      })
    }

    return { notifier, control }
  }
)

/**
 * The in-memory Notifier together with its control service, sharing one fresh
 * state per build. Reach the control side with `yield* MemoryNotifierControl`.
 */
export const layer: Layer.Layer<Notifier | MemoryNotifierControl> = Layer.effectContext(
  Effect.map(make, ({ control, notifier }) =>
    Context.make(Notifier, notifier).pipe(Context.add(MemoryNotifierControl, control))
  )
)
