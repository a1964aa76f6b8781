import { Context, Data, type Effect } from "effect"

export class ProcessorError extends Data.TaggedError("ProcessorError")<{ readonly message: string }> {}

/**
 * The card / mobile-money processor of payment intents. `open` registers an
 * intent and returns its hosted checkout link; outcomes come back to the engine
 * through `Engine.reportPaymentOutcome` (webhook of the processor, or the sandbox).
 */
export class Processor extends Context.Service<
  Processor,
  {
    readonly open: (input: {
      readonly payment_intent_id: string
      readonly amount: bigint
      readonly currency: "GMD" | "USD"
      readonly network: string | null
    }) => Effect.Effect<{ readonly payment_link: string }, ProcessorError>
  }
>()("@xaalis/engine/ports/Processor") {}
