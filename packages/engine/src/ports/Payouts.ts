import { Context, Data, type Effect } from "effect"

export class PayoutFailed extends Data.TaggedError("PayoutFailed")<{ readonly message: string }> {}

/**
 * Mobile-money payouts (wave, afrimoney). May fail; a failed payout leaves the
 * dalasi in the business balance. The engine sends each payout from one run at
 * a time (a claim, see `Conversions.runDuePayouts`); `send` must end, paid or
 * failed, well within `Conversions.payout_claim_ms` (5 minutes). After a crash,
 * or a send that outlived its claim, the same payout is sent again under the
 * same `idempotency_key`: a rail that supports it must not pay twice.
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
