import { Conversion, PaymentRequest } from "@xaalis/core"
import { Effect } from "effect"
import type { ConfirmedTransfer } from "../ports/Chain.ts"
import { Ids } from "../ports/Ids.ts"
import type { Doc } from "../ports/Store.ts"
import { addressKey, bookConversionStep, runDuePayouts } from "./Conversions.ts"
import { newDoc, now, unitOfWork } from "./common.ts"
import { bookPaymentRequestStep, type StoredPaymentRequest } from "./PaymentRequests.ts"

export interface TransferOutcome {
  readonly tx_hash: string
  readonly matched: { readonly object: "conversion" | "payment_request"; readonly id: string } | null
  /** False for a duplicate, a late transfer, or one that matches nothing. */
  readonly applied: boolean
}

/**
 * Applies one confirmed chain transfer, at most once however often it is
 * reported: the transfer's identity (network + tx hash + log index) is inserted
 * as a unique row in the same unit of work as its effects, so a second report —
 * concurrent or not — finds it and changes nothing. Then the due payouts run.
 */
export const applyChainTransfer = Effect.fnUntraced(function* (transfer: ConfirmedTransfer) {
  const ids = yield* Ids
  const t = yield* now
  const key = Conversion.transferKey(transfer)
  const outcome = yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      const seen = yield* tx.get("transfer", key)
      const target =
        (yield* tx.getByKey("conversion", addressKey(transfer.network, transfer.coin, transfer.to_address))) ??
        (yield* tx.getByKey("payment_request", addressKey(transfer.network, transfer.coin, transfer.to_address)))
      const matched =
        target === undefined ? null : { object: target.kind as "conversion" | "payment_request", id: target.id }
      if (seen !== undefined) return { tx_hash: transfer.tx_hash, matched, applied: false, payouts: 0 }
      yield* tx.insert(newDoc({ kind: "transfer", id: key, scope: null, now: t, data: { ...transfer, matched } }))
      if (target === undefined) {
        const funds = { object: null, object_id: null, ...transfer }
        yield* tx.insert(newDoc({ kind: "late_funds", id: yield* ids.uuid, scope: null, now: t, data: funds }))
        return { tx_hash: transfer.tx_hash, matched: null, applied: false, payouts: 0 }
      }
      if (target.kind === "conversion") {
        const doc = target as Doc<Conversion.Conversion>
        const step = Conversion.applyTransfer(doc.data, transfer, t)
        if (step._tag === "Failure") return { tx_hash: transfer.tx_hash, matched, applied: false, payouts: 0 }
        const booked = yield* bookConversionStep(tx, doc, step.success, t)
        return {
          tx_hash: transfer.tx_hash,
          matched,
          applied: !step.success.effects.some((e) => e.type === "late_funds"),
          payouts: booked.payouts
        }
      }
      const doc = target as Doc<StoredPaymentRequest>
      const step = PaymentRequest.receivePayment(doc.data.request, transfer, t)
      if (step._tag === "Failure") return { tx_hash: transfer.tx_hash, matched, applied: false, payouts: 0 }
      yield* bookPaymentRequestStep(tx, doc, step.success, t)
      return {
        tx_hash: transfer.tx_hash,
        matched,
        applied: !step.success.effects.some((e) => e.type === "late_funds"),
        payouts: 0
      }
    })
  )
  // payouts of the credit just booked go out now (a crash here leaves them due for the scheduler)
  if (outcome.payouts > 0) yield* runDuePayouts()
  const result: TransferOutcome = { tx_hash: outcome.tx_hash, matched: outcome.matched, applied: outcome.applied }
  return result
})
