import { PaymentRequest } from "@xaalis/core"
import { Effect } from "effect"
import { Config } from "../Config.ts"
import { accounts, move, transaction } from "../ledger/Ledger.ts"
import { publish } from "../outbox/Outbox.ts"
import { Chain } from "../ports/Chain.ts"
import { Ids } from "../ports/Ids.ts"
import type { Doc, Page, Scope, Tx } from "../ports/Store.ts"
import * as Present from "../present.ts"
import { addressKey, freshRate } from "./Conversions.ts"
import { type Caller, fromStep, getScoped, newDoc, now, requireLive, revise, sweepDue, unitOfWork } from "./common.ts"

/** A payment request as stored: the domain record plus who owns it and its deposit addresses. */
export interface StoredPaymentRequest {
  readonly request: PaymentRequest.PaymentRequest
  readonly account_id: string
  /** Set on every request this version creates: no transfer to it has an older key (see `Transfers`). */
  readonly canonical_keys?: true
  readonly addresses: ReadonlyArray<{
    readonly network: "TRC20" | "ARC"
    readonly coin: "USDT" | "USDC"
    readonly address: string
  }>
}

/** The coins a payment request's hosted page accepts, per network. */
const accepted = [
  { network: "TRC20", coin: "USDT" },
  { network: "TRC20", coin: "USDC" },
  { network: "ARC", coin: "USDC" }
] as const

const owner = (s: StoredPaymentRequest, scope: Scope): Present.Owner => ({
  business_id: scope.business_id,
  account_id: s.account_id,
  test_mode: scope.mode === "test"
})

/** POST /v1/minting/intents. Live keys only. */
export const createPaymentRequest = Effect.fn("createPaymentRequest")(function* (
  caller: Caller,
  input: PaymentRequest.CreatePaymentRequest
) {
  yield* requireLive(caller, "Creating a stablecoin payment request")
  const config = yield* Config
  const ids = yield* Ids
  const chain = yield* Chain
  const rate = yield* freshRate
  const t = yield* now
  const id = yield* ids.uuid
  const step = yield* fromStep(
    PaymentRequest.create(input, {
      id,
      link: `${config.base_url}/pay/requests/${id}`,
      now: t,
      rate,
      config: config.payment_request
    })
  )
  const addresses = yield* Effect.forEach(accepted, ({ network, coin }) =>
    chain.issueAddress({ network, coin, owner: id }).pipe(
      Effect.map((address) => ({ network, coin, address })),
      Effect.orDie
    )
  )
  const stored: StoredPaymentRequest = {
    request: step.state,
    account_id: caller.account_id,
    addresses,
    canonical_keys: true
  }
  // a fresh id and freshly issued addresses: a clash of this row is a defect; the unit's other
  // failures (an Idempotency-Key raced by a concurrent first use, the store) pass through
  yield* unitOfWork((tx) =>
    tx
      .insert(
        newDoc({
          kind: "payment_request",
          id,
          scope: caller,
          now: t,
          data: stored,
          due_at: step.state.expires_at,
          keys: addresses.map((a) => addressKey(a.network, a.coin, a.address))
        })
      )
      .pipe(Effect.catchTag("DuplicateKey", (e) => Effect.die(e)))
  )
  return Present.paymentRequest(step.state, owner(stored, caller))
})

export const getPaymentRequest = Effect.fn("getPaymentRequest")(function* (caller: Caller, id: string) {
  yield* requireLive(caller, "Reading a stablecoin payment request")
  const doc = yield* unitOfWork((tx) =>
    getScoped<StoredPaymentRequest>(tx, "payment_request", caller, id, "payment request")
  )
  return Present.paymentRequest(PaymentRequest.asOf(doc.data.request, yield* now), owner(doc.data, caller))
})

export const listPaymentRequests = Effect.fn("listPaymentRequests")(function* (caller: Caller, page: Page) {
  yield* requireLive(caller, "Listing stablecoin payment requests")
  const { docs, total } = yield* unitOfWork((tx) => tx.list("payment_request", caller, page))
  const t = yield* now
  return {
    data: docs.map((d) => {
      const s = d.data as StoredPaymentRequest
      return Present.paymentRequest(PaymentRequest.asOf(s.request, t), owner(s, caller))
    }),
    meta: { total, limit: page.limit, offset: page.offset }
  }
})

/**
 * Books one step of a payment request in the caller's unit of work: state,
 * ledger (each payment credits the balance in USD; the fee is taken once, when
 * the request completes), late funds, and `charge.succeeded` to the callback URL.
 */
export const bookPaymentRequestStep = (
  tx: Tx,
  doc: Doc<StoredPaymentRequest>,
  step: {
    readonly state: PaymentRequest.PaymentRequest
    readonly events: ReadonlyArray<PaymentRequest.PaymentRequestEvent>
    readonly effects: ReadonlyArray<PaymentRequest.PaymentRequestEffect>
  },
  t: number
) =>
  Effect.gen(function* () {
    const ids = yield* Ids
    const scope: Scope = { business_id: doc.business_id as string, mode: doc.mode ?? "live" }
    const before = doc.data.request
    const open = step.state.status === "pending" || step.state.status === "partially_paid"
    yield* tx.update(revise(doc, { ...doc.data, request: step.state }, open ? step.state.expires_at : null))
    for (const effect of step.effects) {
      if (effect.type === "received") {
        const completesNow = before.status !== "completed" && step.state.status === "completed"
        yield* tx.post(
          transaction({
            transaction_id: yield* ids.uuid,
            scope,
            now: t,
            cause: `payment_request/${doc.id}`,
            lines: [
              ...move(accounts.stablecoin_clearing, accounts.business_balance, "USD", effect.payment.amount_paid_usd),
              ...(completesNow
                ? move(accounts.business_balance, accounts.fee_revenue, "USD", step.state.fee * 10_000n)
                : [])
            ]
          })
        )
      } else {
        const funds = { object: "payment_request", object_id: doc.id, ...effect.funds }
        yield* tx.insert(newDoc({ kind: "late_funds", id: yield* ids.uuid, scope, now: t, data: funds }))
      }
    }
    for (const event of step.events) {
      if (event.request.callback_url === null) continue
      yield* publish(tx, {
        scope,
        event: event.type,
        payload: Present.chargeSucceeded(event.request, event.payment, owner(doc.data, scope)),
        targets: [{ url: event.request.callback_url, target: "callback_url" }],
        now: t
      })
    }
  })

/** Requests whose `expires_at` passed before completion become `expired` (no event). */
export const expireDuePaymentRequests = (limit = 100) =>
  sweepDue("payment_request", limit, (tx, doc: Doc<StoredPaymentRequest>, t) => {
    const step = PaymentRequest.expire(doc.data.request, t)
    return step._tag === "Failure"
      ? Effect.succeed(false)
      : Effect.as(bookPaymentRequestStep(tx, doc, step.success, t), true)
  })
