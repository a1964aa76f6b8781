import { Context, Data, type Effect } from "effect"

export class PayoutFailed extends Data.TaggedError("PayoutFailed")<{ readonly message: string }> {}

/**
 * Mobile-money payouts (wave, afrimoney). May fail; a failed payout leaves the
 * dalasi in the business balance. `idempotency_key` lets a rail that supports it
 * refuse a second send of the same payout.
 */
export class Payouts extends Context.Service<
  Payouts,
  {
    readonly send: (input: {
      readonly idempotency_key: string
      /** The business paying out (its conversion's owner); a rail may ignore it. */
      readonly business_id?: string | undefined
      readonly network: "wave" | "afrimoney"
      readonly account_number: string
      readonly account_name: string
      /** Butut. */
      readonly amount: bigint
    }) => Effect.Effect<{ readonly reference: string }, PayoutFailed>
  }
>()("@xaalis/engine/ports/Payouts") {}
