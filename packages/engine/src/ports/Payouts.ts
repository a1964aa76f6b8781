import { Context, Data, type Effect } from "effect"

export class PayoutFailed extends Data.TaggedError("PayoutFailed")<{ readonly message: string }> {}

/**
 * Mobile-money payouts (wave, afrimoney). May fail; a failed payout leaves the
 * dalasi in the business balance. The engine sends each payout from one run at
 * a time (a claim, see `Conversions.runDuePayouts`); `send` must end, paid or
 * failed, well within `Conversions.payout_claim_ms` (5 minutes). After a crash,
 * or a send that outlived its claim, the same payout is sent again under the
 * same `idempotency_key`: a rail that supports it must not pay twice.
 *
 * The contract (checked by `payoutsConformance` in `@xaalis/testkit`):
 * - `send` resolves with the rail's `reference` (a non-empty string naming the
 *   payment: stored on the payout, sent as its `transaction_reference`) once
 *   the rail paid, or fails with `PayoutFailed`. It never dies: a defect would
 *   stop the whole payout run, leaving its claimed payouts for the claim to lapse.
 * - `PayoutFailed` means nothing was paid under that key: the engine books the
 *   payout failed, keeps the dalasi in the balance, and sends it again only
 *   after a crash, under the same key. A call whose outcome is unknown (a
 *   time-out after the request left) is settled with the rail (e.g. by sending
 *   again under the key) before it reports.
 * - The rail pays exactly `amount` butut to `account_number`: never through a
 *   JS number; an amount it cannot pay exactly (beyond its limits) is refused
 *   with `PayoutFailed`, never rounded.
 * - Different keys are different payouts, even to the same wallet for the same
 *   amount: each is paid, under its own reference.
 * - A rail that supports idempotency: the same key sent again, later or while
 *   an earlier send of it still runs (a send that outlived its claim), answers
 *   the same reference and pays once; never `PayoutFailed` for a key it paid.
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
