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
 */
export class Notifier extends Context.Service<
  Notifier,
  { readonly deliver: (delivery: Delivery) => Effect.Effect<void, DeliveryFailed> }
>()("@xaalis/engine/ports/Notifier") {}
