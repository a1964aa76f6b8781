import { Conversion, DomainError, PaymentRequest } from "@xaalis/core"
import { Clock, Context, Effect } from "effect"
import type { ConfirmedTransfer } from "../ports/Chain.ts"
import { Ids } from "../ports/Ids.ts"
import { type Doc, Store, type StoreError, type Tx, type VersionConflict } from "../ports/Store.ts"
import { bookConversionStepWith, ownerOfAddress, runDuePayouts } from "./Conversions.ts"
import { type Caller, getScoped, newDoc, unitOfWork, unitOfWorkIn } from "./common.ts"
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

/** The transfer's identity row: its key is its id, so a second insert of it fails. */
const identityDoc = (key: string, transfer: ConfirmedTransfer, matched: TransferOutcome["matched"], t: number) =>
  newDoc({ kind: "transfer", id: key, scope: null, now: t, data: { ...transfer, matched } })

/** Inserts a transfer's identity row: false when the transfer has one already (a report seen before). */
const insertIdentity = (tx: Tx, doc: Doc): Effect.Effect<boolean, StoreError | VersionConflict> =>
  tx.insert(doc).pipe(
    Effect.as(true),
    Effect.catchTag("DuplicateKey", () => Effect.succeed(false))
  )

/** Funds sent to an address nothing owns, kept for support. */
const strayFundsDoc = (transfer: ConfirmedTransfer, id: string, t: number) =>
  newDoc({ kind: "late_funds", id, scope: null, now: t, data: { object: null, object_id: null, ...transfer } })

const matchOf = (target: Doc | undefined): TransferOutcome["matched"] =>
  target === undefined ? null : { object: target.kind as "conversion" | "payment_request", id: target.id }

const appliedUnlessLate = (
  transfer: ConfirmedTransfer,
  matched: TransferOutcome["matched"],
  effects: ReadonlyArray<{ readonly type: string }>,
  payouts: number
): Applied => ({
  tx_hash: transfer.tx_hash,
  matched,
  applied: !effects.some((e) => e.type === "late_funds"),
  payouts
})

/**
 * Whether the conversion or payment request was created by a version that
 * keys transfers canonically (its row says `canonical_keys`): every transfer
 * to it was applied by such a version, so no identity row of one is under an
 * older key, and the lookups of those (one query each, a round trip on
 * PostgreSQL) are skipped. Rows created before carry no mark and are looked up.
 */
const createdCanonical = (target: Doc | undefined): boolean =>
  target !== undefined && (target.data as { readonly canonical_keys?: true }).canonical_keys === true

/** The unit of work of one transfer (see `applyChainTransfer`). */
const applyInUnit = Effect.fnUntraced(function* (
  tx: Tx,
  ids: Ids["Service"],
  transfer: ConfirmedTransfer,
  key: string,
  arrived: number,
  clock: Clock.Clock
) {
  const target = yield* ownerOfAddress(tx, transfer.network, transfer.coin, transfer.to_address)
  // the time of this run, read once the target is read (on a run after a conflict, once it is locked): a
  // run that waited or ran again never stamps its entries before those of the unit that went first. Whether
  // the transfer is late is still decided by when it arrived
  const t = Math.max(arrived, clock.currentTimeMillisUnsafe())
  const matched = matchOf(target)
  // identity rows an older version wrote under another spelling of the hash (see `legacyTransferKeys`),
  // looked up unless the target was created by a version that keys transfers canonically (then none has one)
  if (!createdCanonical(target)) {
    for (const legacy of Conversion.legacyTransferKeys(transfer)) {
      if ((yield* tx.get("transfer", legacy)) !== undefined) return notApplied(transfer, matched)
    }
  }
  // the identity row first, with no read before it: a transfer seen before already has it, and the insert is
  // refused (DuplicateKey) having written nothing; one being applied by a concurrent unit makes one of the two
  // fail with VersionConflict, and its next run is refused here
  const fresh = yield* insertIdentity(tx, identityDoc(key, transfer, matched, t))
  if (!fresh) return notApplied(transfer, matched)
  if (target === undefined) {
    yield* tx.insert(strayFundsDoc(transfer, yield* ids.uuid, t))
    return notApplied(transfer, null)
  }
  if (target.kind === "conversion") {
    const doc = target as Doc<Conversion.Conversion>
    const step = Conversion.applyTransfer(doc.data, transfer, arrived, t)
    if (step._tag === "Failure") return notApplied(transfer, matched)
    const payouts = yield* bookConversionStepWith(tx, ids, doc, step.success, t)
    return appliedUnlessLate(transfer, matched, step.success.effects, payouts)
  }
  const doc = target as Doc<StoredPaymentRequest>
  const step = PaymentRequest.receivePayment(doc.data.request, transfer, arrived, t)
  if (step._tag === "Failure") return notApplied(transfer, matched)
  yield* bookPaymentRequestStep(tx, doc, step.success, t)
  return appliedUnlessLate(transfer, matched, step.success.effects, 0)
})

/** What the caller of `applyChainTransfer` learns, and the payouts to send once the unit committed. */
const finish = (outcome: Applied) => {
  const result: TransferOutcome = { tx_hash: outcome.tx_hash, matched: outcome.matched, applied: outcome.applied }
  // payouts of the credit just booked go out now (a crash here leaves them due for the scheduler)
  return outcome.payouts > 0 ? Effect.as(runDuePayouts(), result) : Effect.succeed(result)
}

/** `Effect.flatMap(_, finish)`, built once. */
const thenFinish = Effect.flatMap(finish)

/**
 * Applies one confirmed chain transfer, at most once however often it is
 * reported: the transfer's identity (network + tx hash + log index) is inserted
 * as a unique row in the same unit of work as its effects, before them and with
 * no read of it first, so a second report — concurrent or not — has that insert
 * refused and changes nothing. Then the due payouts run.
 *
 * The hot path of the engine: the store, the Ids service and the time are read
 * from the context in one step rather than one `yield*` each.
 */
export const applyChainTransfer = (transfer: ConfirmedTransfer) =>
  Effect.contextWith((context: Context.Context<Store | Ids>) => {
    const ids = Context.get(context, Ids)
    const clock = Context.get(context, Clock.Clock)
    const arrived = clock.currentTimeMillisUnsafe()
    const key = Conversion.transferKey(transfer)
    return thenFinish(
      unitOfWorkIn(Context.get(context, Store), (tx) => applyInUnit(tx, ids, transfer, key, arrived, clock))
    )
  })

/**
 * A payer pays a payment request through its hosted page (decisions §9 helper
 * `minting/intents/{id}/pay`): the payment arrives as a confirmed transfer to
 * the request's deposit address for that network and coin, with a fresh tx hash.
 * Any key of the business may drive it (§9: test helpers take any key of the
 * business); the request is looked up among the business's live ones, the only
 * mode payment requests exist in.
 */
export const payPaymentRequest = Effect.fn("payPaymentRequest")(function* (
  caller: Caller,
  id: string,
  payment: { readonly amount: bigint; readonly coin: "USDT" | "USDC"; readonly network: "TRC20" | "ARC" }
) {
  const ids = yield* Ids
  const owner = { business_id: caller.business_id, mode: "live" as const }
  const doc = yield* unitOfWork((tx) =>
    getScoped<StoredPaymentRequest>(tx, "payment_request", owner, id, "payment request")
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
