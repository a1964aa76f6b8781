import { Decimal, type DomainError, Errors, Instant, Requests, Resources } from "@xaalis/core"
import {
  Balance,
  Businesses,
  Conversions,
  Dispatcher,
  DuplicateKey,
  Invoices,
  PaymentIntents,
  PaymentLinks,
  PaymentRequests,
  Sandbox,
  SandboxClock,
  Scheduler,
  type StoreError,
  Transfers,
  unitOfWork
} from "@xaalis/engine"
import { Clock, Effect, Option } from "effect"
import { ApiDescription, Background, type Caller, type Recover, type Route, route, type Services } from "./Route.ts"
import { OpenApiDocument, WebhookDelivery, WebhookDeliveryList, webhookDelivery } from "./schemas.ts"

/**
 * `Route.recover` of a create or an action on one object: the object of
 * `kind` the lost first request wrote, read back as `read` presents it (the
 * first answer, as long as nothing changed the object since).
 */
const recoverObject =
  (
    kind: string,
    read: (caller: Caller, id: string) => Effect.Effect<unknown, DomainError | StoreError, Services>
  ): Recover =>
  (caller, touched) => {
    const made = touched.find((t) => t.kind === kind)
    return made === undefined ? Effect.succeed(undefined) : read(caller, made.id)
  }

/** `recoverObject` for a sandbox helper, which may be driven by either key of the object's business. */
const recoverForHelper = (
  kind: "payment_intent" | "invoice",
  read: (caller: Caller, id: string) => Effect.Effect<unknown, DomainError | StoreError, Services>
): Recover =>
  recoverObject(kind, (caller, objectId) =>
    Effect.flatMap(Businesses.helperCaller(caller, kind, objectId), (as) => read(as, objectId))
  )

/**
 * `Route.recover` of a chain transfer the lost first request handled (the
 * chain helper, a payer paying a request): its answer, rebuilt from the
 * identity row it wrote (the hash as reported, the object matched) and from
 * what else it wrote: applied when it changed the object it matched and
 * recorded no late funds.
 */
const recoverTransfer: Recover = (_caller, touched) =>
  Effect.gen(function* () {
    const identity = touched.find((t) => t.kind === "transfer")
    if (identity === undefined) return undefined
    // a unit of work of its own, run again if it meets a conflict (on PostgreSQL, a deadlock)
    const doc = yield* unitOfWork((tx) => tx.get("transfer", identity.id))
    if (doc === undefined) return undefined
    const { tx_hash, matched } = doc.data as Pick<Transfers.TransferOutcome, "tx_hash" | "matched">
    const applied =
      matched !== null &&
      touched.some((t) => t.kind === matched.object && t.id === matched.id) &&
      !touched.some((t) => t.kind === "late_funds")
    return { tx_hash, matched, applied }
  })

/**
 * `Route.recover` of a webhook resend: the delivery it made pending again, as
 * it is now (the next pass may have sent it since).
 */
const recoverResend: Recover = (caller, touched) =>
  Effect.gen(function* () {
    const made = touched.find((t) => t.kind === "outbox")
    if (made === undefined) return undefined
    const doc = yield* unitOfWork((tx) => tx.get("outbox", made.id))
    if (doc === undefined || doc.business_id !== caller.business_id || doc.mode !== caller.mode) return undefined
    return webhookDelivery(doc as Dispatcher.OutboxDoc)
  })

/** The answer of the rate helper: the rate it set (decoded from the request). */
const rateSet = (input: typeof Requests.SetRateBody.Type) => ({ rate: Number(Decimal.format(input.rate)) })

/** The answer of the fail_next helper: the count it set. */
const failNextSet = (input: typeof Requests.FailNextPayoutsBody.Type) => ({ count: input.count })

/**
 * THE route table: every operation of decisions §7 and §9, plus the two
 * webhook-delivery operations and the API description. The Hono router and the
 * OpenAPI document (`GET /v1/openapi.json`) are both generated from it, so the
 * document cannot drift from what is served.
 *
 * Order of checks for every row (done by `HttpApi`, not here): route, then
 * authentication, then permission (`auth: "live"`), then the body, then the
 * domain (`handle`).
 */

const tags = {
  payments: "Payment intents",
  links: "Payment links",
  conversions: "Conversions (live only)",
  requests: "Stablecoin payment requests (live only)",
  invoices: "Invoices",
  balance: "Balance",
  webhooks: "Webhook deliveries",
  meta: "API description",
  sandbox: "Test helpers (sandbox only)"
} as const

const id = (params: Readonly<Record<string, string>>) => params.id ?? ""

/** A fresh 32-byte hex transaction hash for a simulated transfer without one. */
const randomTxHash = Effect.sync(() => `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`)

/**
 * A transfer reported twice: `applyChainTransfer` reads the refusal of its
 * identity row as "seen before" (`applied: false`), and a unit that loses the
 * race to a concurrent report fails with `VersionConflict` and is run again by
 * the engine. A `DuplicateKey` gets here only from a store that reports a lost
 * race as one (the port says `VersionConflict`): run once more, the transfer is
 * refused and answers `applied: false`. Anything else is a bug (a defect).
 */
const settleDuplicate = <A, E, R>(effect: Effect.Effect<A, E | DuplicateKey, R>): Effect.Effect<A, E, R> =>
  effect.pipe(
    Effect.retry({ while: (e) => e instanceof DuplicateKey, times: 1 }),
    Effect.catchIf(
      (e): e is DuplicateKey => e instanceof DuplicateKey,
      (e) => Effect.die(e)
    )
  ) as Effect.Effect<A, E, R>

const sandboxNow = Effect.map(Clock.currentTimeMillis, (t) => ({ now: Instant.toIso(t) }))

/** The sandbox clock's control; absent when the sandbox is off (its routes are not served then). */
const clockControl = Effect.flatMap(Effect.serviceOption(SandboxClock.SandboxClockControl), (o) =>
  Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(Errors.notFound("The sandbox clock is off."))
)

export const routes: ReadonlyArray<Route> = [
  // ------------------------------------------------------------ payment intents
  route({
    operationId: "createPaymentIntent",
    method: "POST",
    path: "/v1/payments",
    auth: "any",
    tag: tags.payments,
    summary: "Create a payment intent",
    description:
      "Returns a hosted payment link, a secret and the fee. With `X-No-Effect: true` the request is a dry run: validated, answered 200 with the would-be object, and nothing is stored or sent.",
    body: Requests.CreatePaymentIntentBody,
    response: Resources.PaymentIntent,
    status: 201,
    dry_run: true,
    handle: ({ caller, input, dry_run }) => PaymentIntents.createPaymentIntent(caller, input.data, { dry_run }),
    recover: recoverObject("payment_intent", PaymentIntents.getPaymentIntent)
  }),
  route({
    operationId: "getPaymentIntent",
    method: "GET",
    path: "/v1/payments/{id}",
    auth: "any",
    tag: tags.payments,
    summary: "Retrieve a payment intent",
    response: Resources.PaymentIntent,
    status: 200,
    handle: ({ caller, params }) => PaymentIntents.getPaymentIntent(caller, id(params))
  }),
  route({
    operationId: "listPaymentIntents",
    method: "GET",
    path: "/v1/payments",
    auth: "any",
    tag: tags.payments,
    summary: "List payment intents, newest first",
    query: Requests.ListQuery,
    response: Resources.PaymentIntentList,
    status: 200,
    handle: ({ caller, input }) => PaymentIntents.listPaymentIntents(caller, input)
  }),
  route({
    operationId: "cancelPaymentIntent",
    method: "POST",
    path: "/v1/payments/{id}/cancel",
    auth: "any",
    tag: tags.payments,
    summary: "Cancel a payment intent",
    description: "Sends `payment_intent.cancelled`. A final or processing intent is `invalid_state`.",
    response: Resources.PaymentIntent,
    status: 200,
    handle: ({ caller, params }) => PaymentIntents.cancelPaymentIntent(caller, id(params)),
    recover: recoverObject("payment_intent", PaymentIntents.getPaymentIntent)
  }),

  // ------------------------------------------------------------ payment links
  route({
    operationId: "createPaymentLink",
    method: "POST",
    path: "/v1/payment-links",
    auth: "any",
    tag: tags.links,
    summary: "Create a payment link",
    body: Requests.CreatePaymentLinkBody,
    response: Resources.PaymentLink,
    status: 201,
    handle: ({ caller, input }) => PaymentLinks.createPaymentLink(caller, input.data),
    recover: recoverObject("payment_link", PaymentLinks.getPaymentLink)
  }),
  route({
    operationId: "getPaymentLink",
    method: "GET",
    path: "/v1/payment-links/{id}",
    auth: "any",
    tag: tags.links,
    summary: "Retrieve a payment link",
    response: Resources.PaymentLink,
    status: 200,
    handle: ({ caller, params }) => PaymentLinks.getPaymentLink(caller, id(params))
  }),
  route({
    operationId: "listPaymentLinks",
    method: "GET",
    path: "/v1/payment-links",
    auth: "any",
    tag: tags.links,
    summary: "List payment links, newest first",
    query: Requests.ListQuery,
    response: Resources.PaymentLinkList,
    status: 200,
    handle: ({ caller, input }) => PaymentLinks.listPaymentLinks(caller, input)
  }),

  // ------------------------------------------------------------ conversions
  route({
    operationId: "createConversion",
    method: "POST",
    path: "/v1/minting/offramp",
    auth: "live",
    tag: tags.conversions,
    summary: "Create a stablecoin-to-dalasi conversion",
    description:
      "Send exactly one of `gmd_amount` and `pay_amount`. Locks the rate, issues the deposit address and opens a 10-minute window. Live keys only.",
    body: Requests.CreateConversionBody,
    response: Resources.Conversion,
    status: 201,
    handle: ({ caller, input }) => Conversions.createConversion(caller, input),
    // the create's answer is the object without its timeline (lookups add `events`),
    recover: recoverObject("conversion", (caller, id) =>
      Effect.map(Conversions.getConversion(caller, id), ({ events: _, ...created }) => created)
    )
  }),
  route({
    operationId: "getConversion",
    method: "GET",
    path: "/v1/minting/ramps/{id}",
    auth: "live",
    tag: tags.conversions,
    summary: "Retrieve a conversion with its events timeline",
    response: Resources.Conversion,
    status: 200,
    handle: ({ caller, params }) => Conversions.getConversion(caller, id(params))
  }),
  route({
    operationId: "listConversions",
    method: "GET",
    path: "/v1/minting/ramps",
    auth: "live",
    tag: tags.conversions,
    summary: "List conversions, newest first",
    query: Requests.ListQuery,
    response: Resources.ConversionList,
    status: 200,
    handle: ({ caller, input }) => Conversions.listConversions(caller, input)
  }),

  // ------------------------------------------------------------ payment requests
  route({
    operationId: "createPaymentRequest",
    method: "POST",
    path: "/v1/minting/intents",
    auth: "live",
    tag: tags.requests,
    summary: "Create a stablecoin payment request",
    description: "Held in USD; a GMD amount is converted at the current rate (minimum 5 USD). Live keys only.",
    body: Requests.CreatePaymentRequestBody,
    response: Resources.PaymentRequest,
    status: 201,
    handle: ({ caller, input }) =>
      PaymentRequests.createPaymentRequest(caller, {
        amount: input.amount,
        currency: input.currency,
        metadata: input.metadata,
        callback_url: input.callback_url,
        expires_at: input.expires_at?.ms
      }),
    recover: recoverObject("payment_request", PaymentRequests.getPaymentRequest)
  }),
  route({
    operationId: "listPaymentRequests",
    method: "GET",
    path: "/v1/minting/intents",
    auth: "live",
    tag: tags.requests,
    summary: "List stablecoin payment requests, newest first",
    query: Requests.ListQuery,
    response: Resources.PaymentRequestList,
    status: 200,
    handle: ({ caller, input }) => PaymentRequests.listPaymentRequests(caller, input)
  }),
  route({
    operationId: "getPaymentRequest",
    method: "GET",
    path: "/v1/minting/intents/{id}",
    auth: "live",
    tag: tags.requests,
    summary: "Retrieve a stablecoin payment request",
    response: Resources.PaymentRequest,
    status: 200,
    handle: ({ caller, params }) => PaymentRequests.getPaymentRequest(caller, id(params))
  }),

  // ------------------------------------------------------------ invoices
  route({
    operationId: "createInvoice",
    method: "POST",
    path: "/v1/invoices",
    auth: "any",
    tag: tags.invoices,
    summary: "Create an invoice (published at once)",
    body: Requests.CreateInvoiceBody,
    response: Resources.Invoice,
    status: 201,
    handle: ({ caller, input }) => Invoices.createInvoice(caller, Requests.createInvoiceInput(input.data)),
    recover: recoverObject("invoice", Invoices.getInvoice)
  }),
  route({
    operationId: "createDraftInvoice",
    method: "POST",
    path: "/v1/invoices/draft",
    auth: "any",
    tag: tags.invoices,
    summary: "Create a draft invoice (not sent)",
    body: Requests.CreateInvoiceBody,
    response: Resources.Invoice,
    status: 201,
    handle: ({ caller, input }) => Invoices.createDraftInvoice(caller, Requests.createInvoiceInput(input.data)),
    recover: recoverObject("invoice", Invoices.getInvoice)
  }),
  route({
    operationId: "getInvoice",
    method: "GET",
    path: "/v1/invoices/{id}",
    auth: "any",
    tag: tags.invoices,
    summary: "Retrieve an invoice",
    response: Resources.Invoice,
    status: 200,
    handle: ({ caller, params }) => Invoices.getInvoice(caller, id(params))
  }),
  route({
    operationId: "updateInvoice",
    method: "PUT",
    path: "/v1/invoices/{id}",
    auth: "any",
    tag: tags.invoices,
    summary: "Update an invoice",
    description: "The create parameters, all optional. A paid invoice is `already_paid`.",
    body: Requests.UpdateInvoiceBody,
    response: Resources.Invoice,
    status: 200,
    handle: ({ caller, input, params }) =>
      Invoices.updateInvoice(caller, id(params), Requests.updateInvoiceInput(input.data))
  }),
  route({
    operationId: "payInvoice",
    method: "POST",
    path: "/v1/invoices/{id}/pay",
    auth: "any",
    tag: tags.invoices,
    summary: "Mark an invoice paid (offline payment)",
    response: Resources.Invoice,
    status: 200,
    handle: ({ caller, params }) => Invoices.payInvoice(caller, id(params)),
    recover: recoverObject("invoice", Invoices.getInvoice)
  }),
  route({
    operationId: "sendInvoice",
    method: "POST",
    path: "/v1/invoices/{id}/send",
    auth: "any",
    tag: tags.invoices,
    summary: "Send a draft invoice",
    response: Resources.Invoice,
    status: 200,
    handle: ({ caller, params }) => Invoices.sendInvoice(caller, id(params)),
    recover: recoverObject("invoice", Invoices.getInvoice)
  }),
  route({
    operationId: "remindInvoice",
    method: "POST",
    path: "/v1/invoices/{id}/send-reminder",
    auth: "any",
    tag: tags.invoices,
    summary: "Send a payment reminder",
    description: "Increments `reminder_count`; the status does not change.",
    response: Resources.Invoice,
    status: 200,
    handle: ({ caller, params }) => Invoices.remindInvoice(caller, id(params)),
    recover: recoverObject("invoice", Invoices.getInvoice)
  }),
  route({
    operationId: "listInvoices",
    method: "GET",
    path: "/v1/invoices",
    auth: "any",
    tag: tags.invoices,
    summary: "List invoices, newest first",
    query: Requests.ListQuery,
    response: Resources.InvoiceList,
    status: 200,
    handle: ({ caller, input }) => Invoices.listInvoices(caller, input)
  }),

  // ------------------------------------------------------------ balance
  route({
    operationId: "getBalance",
    method: "GET",
    path: "/v1/balance",
    auth: "any",
    tag: tags.balance,
    summary: "Retrieve the business balance",
    description: "Dalasi available (`available`), and per currency in `balances` (USD with 6 places).",
    response: Resources.Balance,
    status: 200,
    handle: ({ caller }) => Balance.getBalance(caller)
  }),

  // ------------------------------------------------------------ webhook deliveries
  route({
    operationId: "listFailedWebhookDeliveries",
    method: "GET",
    path: "/v1/webhook-deliveries/failed",
    auth: "any",
    tag: tags.webhooks,
    summary: "List webhook deliveries that gave up, newest first",
    description: "Deliveries still failing 3 days after their first attempt; resend them once the receiver is fixed.",
    query: Requests.ListQuery,
    response: WebhookDeliveryList,
    status: 200,
    handle: ({ caller, input }) =>
      Effect.map(Dispatcher.listFailed(caller, input), ({ docs, total }) => ({
        data: docs.map(webhookDelivery),
        meta: { total, limit: input.limit, offset: input.offset }
      }))
  }),
  route({
    operationId: "resendWebhookDelivery",
    method: "POST",
    path: "/v1/webhook-deliveries/{id}/resend",
    auth: "any",
    tag: tags.webhooks,
    summary: "Resend a failed (or delivered) webhook delivery",
    description:
      "Same event id and body; a new 3-day retry window starts now. A delivery still pending is `invalid_state`.",
    response: WebhookDelivery,
    status: 200,
    handle: ({ caller, params }) => Effect.map(Dispatcher.resend(caller, id(params)), webhookDelivery),
    recover: recoverResend
  }),

  // ------------------------------------------------------------ API description
  route({
    operationId: "getOpenApi",
    method: "GET",
    path: "/v1/openapi.json",
    auth: "none",
    tag: tags.meta,
    summary: "This API's OpenAPI 3.1 description",
    description: "Generated from the route table; no key needed. The interactive page is at `/docs`.",
    response: OpenApiDocument,
    status: 200,
    handle: () => Effect.map(ApiDescription, (d) => d.document)
  }),

  // ------------------------------------------------------------ test helpers (decisions §9)
  route({
    operationId: "createSandboxBusiness",
    method: "POST",
    path: "/v1/test_helpers/businesses",
    auth: "none",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "Create a sandbox business and its keys",
    description: "No key needed. The keys and the webhook secret are shown once.",
    body: Requests.CreateBusinessBody,
    body_required: false,
    response: Resources.SandboxBusiness,
    status: 201,
    handle: ({ input }) => Businesses.createBusiness(input)
  }),
  route({
    operationId: "setSandboxRate",
    method: "POST",
    path: "/v1/test_helpers/rates",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "Set the USD to GMD rate",
    description: "A rate set here never goes stale, however far the sandbox clock is advanced.",
    body: Requests.SetRateBody,
    response: Resources.SandboxRate,
    status: 200,
    handle: ({ input }) =>
      Effect.flatMap(Sandbox.SandboxControl, (control) => Effect.as(control.setRate(input.rate), rateSet(input))),
    // the setting committed with the key's row (shared sandbox): its answer follows from the request
    recover: (_caller, _touched, input) => Effect.succeed(rateSet(input as typeof Requests.SetRateBody.Type))
  }),
  route({
    operationId: "getSandboxClock",
    method: "GET",
    path: "/v1/test_helpers/clock",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "Read the sandbox clock",
    response: Resources.SandboxClock,
    status: 200,
    // another process on the same store may have advanced it
    handle: () => Effect.andThen(SandboxClock.refreshIfPresent, sandboxNow)
  }),
  route({
    operationId: "advanceSandboxClock",
    method: "POST",
    path: "/v1/test_helpers/clock/advance",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "Move the sandbox clock forward",
    description:
      "Every piece of work that falls due (expiries, overdue invoices, payouts, webhook deliveries and retries) is done before the answer.",
    body: Requests.AdvanceClockBody,
    response: Resources.SandboxClock,
    status: 200,
    // the answer is the time the clock moved to: the same on a replay (Idempotency-Key), whatever time it is then.
    // The clock moves between background passes, never during one: a delivery in flight records its retry
    // from the time before the advance, so the drain below finds it due (during a pass, it would be
    // scheduled from the advanced time and missed).
    handle: ({ input }) =>
      Effect.flatMap(Effect.all([clockControl, Background]), ([control, background]) =>
        Effect.map(background.exclusive(control.advance(input.seconds * 1000)), (t) => ({ now: Instant.toIso(t) }))
      ),
    // the advance committed with the key's row but its answer was lost: the clock as it reads now (the
    // time it moved to cannot be told apart from later advances), never a second advance
    recover: () => sandboxNow,
    // outside the idempotency record: the scheduler's units of work belong to no request
    after: (answer) =>
      Effect.flatMap(Background, (background) =>
        Effect.as(
          background.exclusive(settleDuplicate(Scheduler.runDue({ defer: false, stopping: background.stopping }))),
          answer
        )
      )
  }),
  route({
    operationId: "sandboxChainTransfer",
    method: "POST",
    path: "/v1/test_helpers/chain/transfers",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "A confirmed chain transfer arrives",
    description:
      "Answered once handled. `applied` is false for a duplicate, a late transfer, or an address that matches nothing. A transfer to another business's address is answered exactly like one to an unknown address (`matched: null`, `applied: false`) and changes nothing.",
    body: Requests.ChainTransferBody,
    response: Resources.SandboxChainTransfer,
    status: 200,
    handle: ({ caller, input }) =>
      Effect.gen(function* () {
        const tx_hash = input.tx_hash ?? (yield* randomTxHash)
        // run again if it meets a conflict: on PostgreSQL, a report of the same transfer through another
        // server can make this lookup of a hot row a deadlock's victim (a 500 before, seen by an audit)
        const owner = yield* unitOfWork((tx) =>
          Effect.map(
            Conversions.ownerOfAddress(tx, input.network, input.currency, input.to_address),
            (doc) => doc?.business_id ?? null
          )
        )
        if (owner !== null && owner !== caller.business_id) return { tx_hash, matched: null, applied: false }
        return yield* settleDuplicate(
          Transfers.applyChainTransfer({
            network: input.network,
            coin: input.currency,
            to_address: input.to_address,
            amount: input.amount,
            tx_hash,
            log_index: input.log_index ?? 0
          })
        )
      }),
    recover: recoverTransfer
  }),
  route({
    operationId: "sandboxPayPaymentRequest",
    method: "POST",
    path: "/v1/test_helpers/minting/intents/{id}/pay",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "A payer pays a payment request through its hosted page",
    description:
      "The payment arrives as a confirmed transfer to the request's address for that network and coin. Any key of the business may drive it (decisions §9), its test key included; the request is one of the business's (live) payment requests.",
    body: Requests.PayPaymentRequestBody,
    response: Resources.SandboxChainTransfer,
    status: 200,
    handle: ({ caller, input, params }) =>
      settleDuplicate(
        Transfers.payPaymentRequest(caller, id(params), {
          amount: input.amount,
          coin: input.currency,
          network: input.network
        })
      ),
    recover: recoverTransfer
  }),
  route({
    operationId: "sandboxSucceedPayment",
    method: "POST",
    path: "/v1/test_helpers/payments/{id}/succeed",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "The processor reports a successful payment",
    response: Resources.PaymentIntent,
    status: 200,
    handle: ({ caller, params }) =>
      Effect.flatMap(Businesses.helperCaller(caller, "payment_intent", id(params)), (as) =>
        PaymentIntents.reportPaymentOutcome(as, id(params), "succeeded")
      ),
    recover: recoverForHelper("payment_intent", PaymentIntents.getPaymentIntent)
  }),
  route({
    operationId: "sandboxFailPayment",
    method: "POST",
    path: "/v1/test_helpers/payments/{id}/fail",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "The processor reports a failed payment",
    description: "Optional body `{reason}`: the processor's reason, shown as the intent's failure_reason.",
    body: Requests.FailPaymentBody,
    body_required: false,
    response: Resources.PaymentIntent,
    status: 200,
    handle: ({ caller, params, input }) =>
      Effect.flatMap(Businesses.helperCaller(caller, "payment_intent", id(params)), (as) =>
        PaymentIntents.reportPaymentOutcome(as, id(params), "failed", input.reason)
      ),
    recover: recoverForHelper("payment_intent", PaymentIntents.getPaymentIntent)
  }),
  route({
    operationId: "sandboxCustomerPaysInvoice",
    method: "POST",
    path: "/v1/test_helpers/invoices/{id}/customer_pay",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "The customer pays an invoice through its link",
    response: Resources.Invoice,
    status: 200,
    handle: ({ caller, params }) =>
      Effect.flatMap(Businesses.helperCaller(caller, "invoice", id(params)), (as) =>
        Invoices.customerPaysInvoice(as, id(params))
      ),
    recover: recoverForHelper("invoice", Invoices.getInvoice)
  }),
  route({
    operationId: "sandboxFailNextPayouts",
    method: "POST",
    path: "/v1/test_helpers/payouts/fail_next",
    auth: "any",
    sandbox_only: true,
    tag: tags.sandbox,
    summary: "Make the next mobile-money payouts fail",
    description:
      "The caller's business's next payouts; 0 clears. A failed payout leaves the dalasi in the business balance.",
    body: Requests.FailNextPayoutsBody,
    response: Resources.SandboxFailNext,
    status: 200,
    handle: ({ caller, input }) =>
      Effect.flatMap(Sandbox.SandboxControl, (control) =>
        Effect.as(control.failNextPayouts(input.count, caller.business_id), failNextSet(input))
      ),
    recover: (_caller, _touched, input) =>
      Effect.succeed(failNextSet(input as typeof Requests.FailNextPayoutsBody.Type))
  })
]

/** The rows served with or without the sandbox. */
export const routesFor = (sandbox: boolean): ReadonlyArray<Route> =>
  sandbox ? routes : routes.filter((r) => !r.sandbox_only)
