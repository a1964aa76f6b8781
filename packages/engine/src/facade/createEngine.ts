import { type Decimal, DomainError, decodeRequest, Json, Requests } from "@xaalis/core"
import { Effect, Layer, ManagedRuntime, type Result } from "effect"
import * as IdsAdapter from "../adapters/Ids.ts"
import * as MemoryNotifier from "../adapters/memory/MemoryNotifier.ts"
import * as MemoryStore from "../adapters/memory/MemoryStore.ts"
import * as Sandbox from "../adapters/sandbox/Sandbox.ts"
import { Config, defaultEngineConfig, type EngineConfig } from "../Config.ts"
import * as Dispatcher from "../outbox/Dispatcher.ts"
import type { Ids } from "../ports/Ids.ts"
import type { Notifier } from "../ports/Notifier.ts"
import type { Mode, Store, StoreError } from "../ports/Store.ts"
import * as Scheduler from "../Scheduler.ts"
import * as Balance from "../usecases/Balance.ts"
import * as Businesses from "../usecases/Businesses.ts"
import * as Conversions from "../usecases/Conversions.ts"
import type { Caller } from "../usecases/common.ts"
import * as HostedPages from "../usecases/HostedPages.ts"
import * as Idempotency from "../usecases/Idempotency.ts"
import * as Invoices from "../usecases/Invoices.ts"
import * as PaymentIntents from "../usecases/PaymentIntents.ts"
import * as PaymentLinks from "../usecases/PaymentLinks.ts"
import * as PaymentRequests from "../usecases/PaymentRequests.ts"
import * as Transfers from "../usecases/Transfers.ts"

export interface EngineOptions {
  /**
   * A Store layer; defaults to the in-memory store. A durable store's layer may
   * fail to build (`SqliteStore.layerFromDataDir`, `PostgresStore.layer`): then
   * `ready()` rejects with the reason, and every call with an `internal_error`
   * (whose cause goes to `onError`).
   */
  readonly store?: Layer.Layer<Store, unknown>
  /** An Ids layer; defaults to Node's crypto. */
  readonly ids?: Layer.Layer<Ids>
  /**
   * Webhook delivery; defaults to the in-memory notifier (records deliveries).
   * It may need the Store (`HttpNotifier.layer` reads the webhook secrets
   * there): the engine's store is provided to it.
   */
  readonly notifier?: Layer.Layer<Notifier, unknown, Store>
  /** Sandbox world: simulated rate, chains, processor and payouts. */
  readonly sandbox: { readonly rate: Decimal.Decimal }
  readonly config?: Partial<EngineConfig>
  /**
   * Told the cause of every failure that reaches a caller as `internal_error`
   * (a store that cannot be reached or opened, a defect): the caller's error
   * says nothing about internals, the operator's log should. A throwing
   * `onError` is ignored.
   */
  readonly onError?: (cause: unknown) => void
}

const internalError = () =>
  new DomainError({
    code: "internal_error",
    message: "Something went wrong on our side; retry with the same Idempotency-Key."
  })

/**
 * The Promise face of the engine, for backends that do not use Effect.
 * Methods take the wire JSON bodies of the spec (numbers as numbers), validate
 * them exactly like the HTTP API, and resolve to the wire objects; they reject
 * with `DomainError` (`code`, `message`, `status`, `retryable`).
 *
 * @example
 * const engine = createEngine({ sandbox: { rate: Decimal.parse("70")! } })
 * const biz = await engine.createBusiness({ name: "Shop" })
 * const caller = await engine.authenticate(biz.secret_key_live)
 * const conversion = await engine.createConversion(caller, { gmd_amount: 5000 })
 * await engine.dispose()
 */
export const createEngine = (options: EngineOptions) => {
  const ids = options.ids ?? IdsAdapter.layer
  const config: EngineConfig = { ...defaultEngineConfig, ...options.config }
  const layer = Layer.mergeAll(
    options.notifier ?? MemoryNotifier.layer,
    Sandbox.layer({ rate: options.sandbox.rate, base_url: config.base_url }).pipe(Layer.provideMerge(ids)),
    Layer.succeed(Config, config)
  ).pipe(Layer.provideMerge(options.store ?? MemoryStore.layer))
  const runtime = ManagedRuntime.make(layer)
  /**
   * Anything the engine fails with becomes a catalogue `DomainError`: a store or
   * other infrastructure failure is an `internal_error` whose message says
   * nothing about internals; its cause goes to `onError`.
   */
  const toDomainError = (e: unknown): DomainError => {
    if (e instanceof DomainError) return e
    try {
      options.onError?.(e)
    } catch {
      // a failing logger must not turn into a second fault
    }
    return internalError()
  }
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof layer>>): Promise<A> =>
    runtime
      .runPromise(
        effect.pipe(
          Effect.mapError(toDomainError),
          Effect.catchDefect((d) => Effect.fail(toDomainError(d)))
        )
      )
      // a store layer that could not be built rejects here, outside the effect
      .catch((e: unknown) => Promise.reject(toDomainError(e)))
  /** With a key, the request runs at most once per business, mode and key (see `Idempotency`). */
  const once = <A, E, R>(
    caller: Caller,
    operation: string,
    body: unknown,
    key: string | undefined,
    effect: Effect.Effect<A, E, R>
  ) =>
    key === undefined
      ? effect
      : Idempotency.idempotent(
          caller,
          key,
          // the body's value, members in order: the same request with its members in another order is the
          // same request, as over HTTP (`bytes`: what releases before this compared, still honoured on their rows)
          {
            value: `${operation} ${JSON.stringify(Json.sortMembers(body))}`,
            bytes: `${operation} ${JSON.stringify(body)}`
          },
          effect as unknown as Effect.Effect<A, DomainError | StoreError, R>
        )
  const decode = <S extends Parameters<typeof decodeRequest>[0]>(
    schema: S,
    input: unknown
  ): Effect.Effect<S["Type"], DomainError> =>
    Effect.fromResult(decodeRequest(schema, input) as Result.Result<S["Type"], DomainError>)

  return {
    createBusiness: (input: { name?: string; webhook_url?: string } = {}) =>
      run(Effect.flatMap(decode(Requests.CreateBusinessBody, input), (b) => Businesses.createBusiness(b))),
    authenticate: (apiKey: string | undefined): Promise<Caller> => run(Businesses.authenticate(apiKey)),
    /** A new secret key for the business in `mode`; its earlier keys stop `expires_in_seconds` from now (default 0: at once). */
    rollApiKey: (input: { business_id: string; mode: Mode; expires_in_seconds?: number }) =>
      run(Businesses.rollApiKey(input)),
    /** A new webhook secret; the replaced one keeps signing beside it `expires_in_seconds` (default 0: not at all). */
    rollWebhookSecret: (input: { business_id: string; expires_in_seconds?: number }) =>
      run(Businesses.rollWebhookSecret(input)),
    createConversion: (caller: Caller, body: unknown, options: { readonly idempotency_key?: string } = {}) =>
      run(
        once(
          caller,
          "POST /v1/minting/offramp",
          body,
          options.idempotency_key,
          Effect.flatMap(decode(Requests.CreateConversionBody, body), (input) =>
            Conversions.createConversion(caller, input)
          )
        )
      ),
    getConversion: (caller: Caller, id: string) => run(Conversions.getConversion(caller, id)),
    listConversions: (caller: Caller, query: { limit?: string; offset?: string } = {}) =>
      run(Effect.flatMap(decode(Requests.ListQuery, query), (page) => Conversions.listConversions(caller, page))),
    createPaymentRequest: (caller: Caller, body: unknown) =>
      run(
        Effect.flatMap(decode(Requests.CreatePaymentRequestBody, body), (input) =>
          PaymentRequests.createPaymentRequest(caller, {
            amount: input.amount,
            currency: input.currency,
            metadata: input.metadata,
            callback_url: input.callback_url,
            expires_at: input.expires_at?.ms
          })
        )
      ),
    getPaymentRequest: (caller: Caller, id: string) => run(PaymentRequests.getPaymentRequest(caller, id)),
    listPaymentRequests: (caller: Caller, query: { limit?: string; offset?: string } = {}) =>
      run(
        Effect.flatMap(decode(Requests.ListQuery, query), (page) => PaymentRequests.listPaymentRequests(caller, page))
      ),
    createPaymentIntent: (
      caller: Caller,
      body: unknown,
      options: { readonly dry_run?: boolean; readonly idempotency_key?: string } = {}
    ) =>
      run(
        once(
          caller,
          "POST /v1/payments",
          body,
          options.idempotency_key,
          Effect.flatMap(decode(Requests.CreatePaymentIntentBody, body), ({ data }) =>
            PaymentIntents.createPaymentIntent(caller, data, { dry_run: options.dry_run ?? false })
          )
        )
      ),
    /** What the hosted page behind an object's link shows (public facts only): render it in your own pages. */
    hostedPage: (kind: HostedPages.HostedKind, id: string) => run(HostedPages.hostedPage(kind, id)),
    getPaymentIntent: (caller: Caller, id: string) => run(PaymentIntents.getPaymentIntent(caller, id)),
    listPaymentIntents: (caller: Caller, query: { limit?: string; offset?: string } = {}) =>
      run(Effect.flatMap(decode(Requests.ListQuery, query), (page) => PaymentIntents.listPaymentIntents(caller, page))),
    cancelPaymentIntent: (caller: Caller, id: string) => run(PaymentIntents.cancelPaymentIntent(caller, id)),
    /**
     * The processor's outcome for one of the caller's intents, in the caller's mode
     * (what the sandbox's succeed/fail helpers do after switching to the intent's mode).
     */
    reportPaymentOutcome: (caller: Caller, id: string, outcome: "succeeded" | "failed", reason?: string) =>
      run(PaymentIntents.reportPaymentOutcome(caller, id, outcome, reason)),
    createPaymentLink: (caller: Caller, body: unknown) =>
      run(
        Effect.flatMap(decode(Requests.CreatePaymentLinkBody, body), ({ data }) =>
          PaymentLinks.createPaymentLink(caller, data)
        )
      ),
    getPaymentLink: (caller: Caller, id: string) => run(PaymentLinks.getPaymentLink(caller, id)),
    listPaymentLinks: (caller: Caller, query: { limit?: string; offset?: string } = {}) =>
      run(Effect.flatMap(decode(Requests.ListQuery, query), (page) => PaymentLinks.listPaymentLinks(caller, page))),
    createInvoice: (caller: Caller, body: unknown, options: { readonly draft?: boolean } = {}) =>
      run(
        Effect.flatMap(decode(Requests.CreateInvoiceBody, body), ({ data }) => {
          const input = Requests.createInvoiceInput(data)
          return options.draft === true
            ? Invoices.createDraftInvoice(caller, input)
            : Invoices.createInvoice(caller, input)
        })
      ),
    getInvoice: (caller: Caller, id: string) => run(Invoices.getInvoice(caller, id)),
    listInvoices: (caller: Caller, query: { limit?: string; offset?: string } = {}) =>
      run(Effect.flatMap(decode(Requests.ListQuery, query), (page) => Invoices.listInvoices(caller, page))),
    updateInvoice: (caller: Caller, id: string, body: unknown) =>
      run(
        Effect.flatMap(decode(Requests.UpdateInvoiceBody, body), ({ data }) =>
          Invoices.updateInvoice(caller, id, Requests.updateInvoiceInput(data))
        )
      ),
    payInvoice: (caller: Caller, id: string) => run(Invoices.payInvoice(caller, id)),
    sendInvoice: (caller: Caller, id: string) => run(Invoices.sendInvoice(caller, id)),
    remindInvoice: (caller: Caller, id: string) => run(Invoices.remindInvoice(caller, id)),
    /** Sandbox: the customer pays an invoice through its link. */
    sandboxCustomerPaysInvoice: (caller: Caller, id: string) =>
      run(Effect.flatMap(Businesses.helperCaller(caller, "invoice", id), (as) => Invoices.customerPaysInvoice(as, id))),
    /** Sandbox: a payer pays a payment request through its hosted page. */
    sandboxPayPaymentRequest: (caller: Caller, id: string, body: unknown) =>
      run(
        Effect.flatMap(decode(Requests.PayPaymentRequestBody, body), (p) =>
          Transfers.payPaymentRequest(caller, id, { amount: p.amount, coin: p.currency, network: p.network })
        )
      ),
    /** Runs everything due at the clock's time: expiries, overdue marks, payouts, webhook retries. */
    runDue: () => run(Scheduler.runDue()),
    /** Webhook deliveries that gave up after 3 days, newest first. */
    listFailedWebhooks: (caller: Caller, query: { limit?: string; offset?: string } = {}) =>
      run(Effect.flatMap(decode(Requests.ListQuery, query), (page) => Dispatcher.listFailed(caller, page))),
    resendWebhook: (caller: Caller, outbox_id: string) => run(Dispatcher.resend(caller, outbox_id)),
    getBalance: (caller: Caller) => run(Balance.getBalance(caller)),
    /** Sandbox: a confirmed chain transfer arrives (decisions §9 body). */
    sandboxTransfer: (body: unknown) =>
      run(
        Effect.gen(function* () {
          const t = yield* decode(Requests.ChainTransferBody, body)
          const tx_hash = t.tx_hash ?? `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`
          return yield* Transfers.applyChainTransfer({
            network: t.network,
            coin: t.currency,
            to_address: t.to_address,
            amount: t.amount,
            tx_hash,
            log_index: t.log_index ?? 0
          })
        })
      ),
    /** Sandbox: the next `count` mobile-money payouts fail. */
    sandboxFailNextPayouts: (count: number) =>
      run(Effect.flatMap(Sandbox.SandboxControl, (c) => c.failNextPayouts(count))),
    /** Releases the runtime and its resources. */
    /**
     * Resolves once every layer is built (the store opened, its migrations
     * run); rejects with the reason when one cannot be (a wrong data
     * directory, an unreachable database). Calls build the layers by
     * themselves: await it to fail fast at start-up.
     */
    ready: (): Promise<void> => runtime.context().then(() => undefined),
    dispose: () => runtime.dispose()
  }
}

export type Engine = ReturnType<typeof createEngine>
