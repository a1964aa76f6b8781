import { Conversion, DomainError, PaymentRequest } from "@xaalis/core"
import { Effect } from "effect"
import type { ConfirmedTransfer } from "../ports/Chain.ts"
import { Ids } from "../ports/Ids.ts"
import type { Doc, Tx } from "../ports/Store.ts"
import { addressKey, bookConversionStepInline, runDuePayouts } from "./Conversions.ts"
import { type Caller, getScoped, newDoc, now, requireLive, unitOfWork } from "./common.ts"
import { bookPaymentRequestStep, type StoredPaymentRequest } from "./PaymentRequests.ts"

export interface TransferOutcome {
  readonly tx_hash: string
  readonly matched: { readonly object: "conversion" | "payment_request"; readonly id: string } | null
  /** False for a duplicate, a late transfer, or one that matches nothing. */
  readonly applied: boolean
}

interface Applied extends TransferOutcome {
  /** Payouts booked by the unit of work, to send once it committed. */
  readonly payouts: number
}

const notApplied = (transfer: ConfirmedTransfer, matched: TransferOutcome["matched"]): Applied => ({
  tx_hash: transfer.tx_hash,
  matched,
  applied: false,
  payouts: 0
})

/** The unit of work of one transfer (see `applyChainTransfer`). */
const applyInUnit = Effect.fnUntraced(function* (tx: Tx, transfer: ConfirmedTransfer, key: string, t: number) {
  const seen = yield* tx.get("transfer", key)
  const address = addressKey(transfer.network, transfer.coin, transfer.to_address)
  const target = (yield* tx.getByKey("conversion", address)) ?? (yield* tx.getByKey("payment_request", address))
  const matched =
    target === undefined ? null : { object: target.kind as "conversion" | "payment_request", id: target.id }
  if (seen !== undefined) return notApplied(transfer, matched)
  yield* tx.insert(newDoc({ kind: "transfer", id: key, scope: null, now: t, data: { ...transfer, matched } }))
  if (target === undefined) {
    const ids = yield* Ids
    const funds = { object: null, object_id: null, ...transfer }
    yield* tx.insert(newDoc({ kind: "late_funds", id: yield* ids.uuid, scope: null, now: t, data: funds }))
    return notApplied(transfer, null)
  }
  if (target.kind === "conversion") {
    const doc = target as Doc<Conversion.Conversion>
    const step = Conversion.applyTransfer(doc.data, transfer, t)
    if (step._tag === "Failure") return notApplied(transfer, matched)
    const booked = yield* bookConversionStepInline(tx, doc, step.success, t)
    return {
      tx_hash: transfer.tx_hash,
      matched,
      applied: !step.success.effects.some((e) => e.type === "late_funds"),
      payouts: booked.payouts
    } satisfies Applied
  }
  const doc = target as Doc<StoredPaymentRequest>
  const step = PaymentRequest.receivePayment(doc.data.request, transfer, t)
  if (step._tag === "Failure") return notApplied(transfer, matched)
  yield* bookPaymentRequestStep(tx, doc, step.success, t)
  return {
    tx_hash: transfer.tx_hash,
    matched,
    applied: !step.success.effects.some((e) => e.type === "late_funds"),
    payouts: 0
  } satisfies Applied
})

/**
 * Applies one confirmed chain transfer, at most once however often it is
 * reported: the transfer's identity (network + tx hash + log index) is inserted
 * as a unique row in the same unit of work as its effects, so a second report —
 * concurrent or not — finds it and changes nothing. Then the due payouts run.
 */
export const applyChainTransfer = Effect.fnUntraced(function* (transfer: ConfirmedTransfer) {
  const t = yield* now
  const key = Conversion.transferKey(transfer)
  const outcome = yield* unitOfWork((tx) => applyInUnit(tx, transfer, key, t))
  // payouts of the credit just booked go out now (a crash here leaves them due for the scheduler)
  if (outcome.payouts > 0) yield* runDuePayouts()
  const result: TransferOutcome = { tx_hash: outcome.tx_hash, matched: outcome.matched, applied: outcome.applied }
  return result
})

/**
 * A payer pays a payment request through its hosted page (decisions §9 helper
 * `minting/intents/{id}/pay`): the payment arrives as a confirmed transfer to
 * the request's deposit address for that network and coin, with a fresh tx hash.
 */
export const payPaymentRequest = Effect.fn("payPaymentRequest")(function* (
  caller: Caller,
  id: string,
  payment: { readonly amount: bigint; readonly coin: "USDT" | "USDC"; readonly network: "TRC20" | "ARC" }
) {
  yield* requireLive(caller, "Paying a stablecoin payment request")
  const ids = yield* Ids
  const doc = yield* unitOfWork((tx) =>
    getScoped<StoredPaymentRequest>(tx, "payment_request", caller, id, "payment request")
  )
  const address = doc.data.addresses.find((a) => a.network === payment.network && a.coin === payment.coin)
  if (address === undefined) {
    return yield* Effect.fail(
      new DomainError({
        code: "validation_error",
        message: `This request does not accept ${payment.coin} on ${payment.network}.`
      })
    )
  }
  const tx_hash = `0x${Buffer.from(yield* ids.bytes(32)).toString("hex")}`
  return yield* applyChainTransfer({ ...payment, to_address: address.address, tx_hash, log_index: 0 })
})
