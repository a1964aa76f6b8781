import { Context, Data, type Effect } from "effect"
import type { Mode } from "./Store.ts"

/** One delivery attempt of an outbox event to one URL. */
export interface Delivery {
  /** Stable across retries: the event id. */
  readonly event_id: string
  readonly url: string
  /** The exact body: `{event, payload}` serialised once when the event was written. */
  readonly body: string
  readonly business_id: string
  /** The mode of the outbox row: a notifier may apply stricter rules to live deliveries (decisions §8). */
  readonly mode: Mode
  readonly attempt: number
}

export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{ readonly message: string }> {}

/**
 * Delivers webhook events. The engine's dispatcher calls it for due outbox rows,
 * and retries with exponential backoff on failure; a notifier only makes one attempt.
 *
 * The contract (checked by `notifierConformance` in `@xaalis/testkit`;
 * `HttpNotifier` in `@xaalis/http` is the reference):
 * - One attempt per call: no retries of its own (the dispatcher's schedule is
 *   the retry policy), so a receiver sees at most one arrival per call.
 * - Success only when the receiver accepted the event (HTTP: a 2xx answer).
 *   Any other answer (redirects are not followed; 4xx, 5xx), a time-out, a
 *   network error or a refused URL fails with `DeliveryFailed`, whose short
 *   message is stored as the row's `last_error`. Never a defect: the
 *   dispatcher runs a batch of deliveries together, and a defect fails it whole.
 * - `body` is delivered byte for byte (its UTF-8), never re-serialised, with
 *   `event_id` unchanged on every attempt (receivers deduplicate on it).
 * - Each call ends within a deadline well under the dispatcher's claim
 *   (`Dispatcher.claim_ms`, 5 minutes): an attempt outliving the claim could
 *   run twice at once.
 * - Calls run concurrently (up to `Dispatcher.concurrency_max` at once), each
 *   independent of the others.
 */
export class Notifier extends Context.Service<
  Notifier,
  { readonly deliver: (delivery: Delivery) => Effect.Effect<void, DeliveryFailed> }
>()("@xaalis/engine/ports/Notifier") {}
