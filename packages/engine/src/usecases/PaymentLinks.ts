import { PaymentLink } from "@xaalis/core"
import { Effect } from "effect"
import { Config } from "../Config.ts"
import { Ids } from "../ports/Ids.ts"
import type { Page } from "../ports/Store.ts"
import * as Present from "../present-billing.ts"
import { type Caller, fromStep, getScoped, newDoc, now, unitOfWork } from "./common.ts"

/**
 * Payment links (decisions §5, §7): `POST /v1/payment-links`,
 * `GET /v1/payment-links/{id}`, `GET /v1/payment-links`. Stored as kind
 * `payment_link` with the core record as data. No webhook event is defined for links.
 */

/** POST /v1/payment-links: an `active` link whose page is `${base_url}/pay/links/<id>`. */
export const createPaymentLink = Effect.fn("createPaymentLink")(function* (
  caller: Caller,
  input: PaymentLink.CreatePaymentLink
) {
  const config = yield* Config
  const ids = yield* Ids
  const t = yield* now
  const id = yield* ids.uuid
  const step = yield* fromStep(PaymentLink.create(input, { id, url: `${config.base_url}/pay/links/${id}`, now: t }))
  yield* unitOfWork((tx) =>
    tx
      .insert(newDoc({ kind: "payment_link", id, scope: caller, now: t, data: step.state }))
      .pipe(Effect.catchTag("DuplicateKey", (e) => Effect.die(e)))
  )
  return Present.paymentLink(step.state)
})

/** GET /v1/payment-links/{id}. */
export const getPaymentLink = Effect.fn("getPaymentLink")(function* (caller: Caller, id: string) {
  const doc = yield* unitOfWork((tx) =>
    getScoped<PaymentLink.PaymentLink>(tx, "payment_link", caller, id, "payment link")
  )
  return Present.paymentLink(doc.data)
})

/** GET /v1/payment-links: newest first. */
export const listPaymentLinks = Effect.fn("listPaymentLinks")(function* (caller: Caller, page: Page) {
  const { docs, total } = yield* unitOfWork((tx) => tx.list("payment_link", caller, page))
  return {
    data: docs.map((d) => Present.paymentLink(d.data as PaymentLink.PaymentLink)),
    meta: { total, limit: page.limit, offset: page.offset }
  }
})
