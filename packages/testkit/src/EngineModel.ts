/**
 * The engine model suite: random interleavings of everything a business and the
 * outside world do to an engine (create businesses, conversions, payment
 * requests, payment intents and invoices; chain transfers, duplicates and stray
 * funds; payouts that fail; time passing and the scheduler), run against a small
 * model of what the specification says must happen. Every engine setup (store
 * adapter, ids, sandbox, notifier) runs the same suite:
 *
 * ```ts
 * import { engineModelSuite, runsFromEnv } from "@xaalis/testkit"
 * engineModelSuite("postgres", () => myEngineLayer(), { runs: runsFromEnv(200) })
 * ```
 *
 * Commands: create a business (test and live keys); create a conversion (gmd or
 * pay mode, TRC20/ARC, balance or mobile money, markup, test key refused); a chain
 * transfer to a conversion (partial, exact, over), a duplicate report of an earlier
 * transfer (also with the hash in upper case), a transfer to an unknown address or in
 * the wrong coin; make the next payouts fail; set the rate; advance the clock (seconds
 * to days) then `Scheduler.runDue`; create and pay a payment request; create a payment
 * intent and report its outcome or cancel it; create (or draft) an invoice, then send,
 * pay, have the customer pay, remind or update it. Each command checks its own answer
 * (quote, status, error code, `applied`/`matched`, invoice number, what the scheduler did).
 *
 * After EVERY command the suite checks:
 * - the ledger is balanced (`unbalanced(entries)` is empty);
 * - every conversion credited exactly `Settlement.credited(gmd_amount, pay_amount, actually_paid)`
 *   (read from the ledger lines caused by `conversion/<id>` on the business balance), never more
 *   than `gmd_amount`, and its markup share likewise;
 * - every business balance (GMD and USD, per mode) is what the model booked (credits, payouts
 *   that went out, payments, fees), in the ledger and through `GET /v1/balance`;
 * - no event is lost or doubled: the outbox rows per object, event name, payload status and
 *   payload running total (a payout's `transfer.succeeded`: its conversion and amount) are exactly the model's (one row per event and distinct target URL);
 * - every object is listed in its own business and mode only, with the model's status and
 *   running totals; terminal states stay terminal (expired conversions, completed or expired
 *   payment requests, paid invoices, successful, failed or cancelled intents);
 * - objects the command created or changed (and all objects, for a new business) are read
 *   by their owner (a conversion's `events` timeline must tell the model's story: transfers,
 *   late funds, credits adding up to `credited`, payout outcomes, expiry) and are invisible
 *   to other businesses and to the other mode (`not_found`; a test key reading a live-only
 *   minting object gets `permission_denied`, decisions §7).
 * A duplicate report of a chain transfer must answer `applied: false` and post nothing.
 * At the end of a run every object is read once more by every other business and mode.
 *
 * Requirements on the layer: a fresh, empty engine on every build; the sandbox
 * (`SandboxControl`) drives the rate, the chain and the payouts, and nothing else
 * touches them. The clock is a `TestClock` provided by the suite (time starts at 0).
 */

import {
  Conversion,
  Decimal,
  decodeRequest,
  Instant,
  InvoiceTotals,
  PaymentIntent,
  PaymentRequest,
  type Quote,
  Requests,
  Settlement
} from "@xaalis/core"
import {
  Balance,
  Businesses,
  type Chain,
  Conversions,
  EngineConfig,
  type Ids,
  Invoices,
  Ledger,
  type Notifier,
  PaymentIntents,
  PaymentRequests,
  type Payouts,
  type Present,
  type Processor,
  Rates,
  Sandbox,
  Scheduler,
  Store,
  Transfers,
  unbalanced
} from "@xaalis/engine"
import { Effect, Layer, ManagedRuntime, Result } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createInvoiceBody, toInvoiceCommand } from "./Arbitraries.ts"
import { readUnit } from "./StoreConformance.ts"

/** What the suite needs from an engine layer. */
export type EngineServices = Store | Ids | Rates | Chain | Processor | Payouts | Notifier | Sandbox.SandboxControl

export interface EngineModelOptions {
  /** fast-check runs (default 100; see `runsFromEnv`). */
  readonly runs?: number | undefined
  /** Most commands per run (default 25). */
  readonly maxCommands?: number | undefined
  /**
   * Replays a failure: the `seed` and `path` fast-check printed, and the
   * `replayPath` of the command list (the `/*replayPath="…"*\/` after the counterexample).
   */
  readonly seed?: number | undefined
  readonly path?: string | undefined
  readonly replayPath?: string | undefined
  /** fast-check verbosity (default 0: the counterexample, its seed and path). */
  readonly verbose?: 0 | 1 | 2 | undefined
  /**
   * Test timeout in ms (default: 60 s + 100 ms per run). A property that runs
   * out of it fails with its seed, and starts no further run: see `timeLimitMs`.
   */
  readonly timeout?: number | undefined
  /**
   * Starts no new run after this many ms and fails with fast-check's
   * "Property interrupted after N tests { seed }" (a run under way finishes
   * first). `engineModelSuite` sets it a little under its test timeout, so that
   * runs cut off by the timeout never go on behind the next test, building
   * fresh layers on (and emptying) a database the next test uses. Default for
   * `runEngineModel`: none.
   */
  readonly timeLimitMs?: number | undefined
}

// ---------------------------------------------------------------------------
// The model

type Mode = "test" | "live"
const MODES: ReadonlyArray<Mode> = ["live", "test"]

interface Caller {
  readonly business_id: string
  readonly account_id: string
  readonly mode: Mode
}

interface Biz {
  readonly n: number
  readonly id: string
  readonly webhook: string | null
  readonly callers: Readonly<Record<Mode, Caller>>
}

type ObjKind = "conversion" | "payment_request" | "payment_intent" | "invoice"

interface Obj {
  readonly kind: ObjKind
  readonly n: number
  readonly id: string
  readonly biz: number
  readonly mode: Mode
  readonly callback: string | null
  status: string
}

interface ConvM extends Obj {
  readonly kind: "conversion"
  readonly gmd: bigint
  readonly pay: bigint
  readonly markup: bigint
  readonly network: Quote.Network
  readonly coin: Quote.Coin
  readonly address: string
  readonly expires_at: number
  readonly mobile: boolean
  /** Micros applied. */
  paid: bigint
  /** Transfers applied, and recorded as late funds, for the timeline. */
  applied: number
  late: number
  /** Outcomes of the mobile-money payouts, in order. */
  readonly payouts: Array<"succeeded" | "failed">
}

interface ReqM extends Obj {
  readonly kind: "payment_request"
  readonly usd: bigint
  readonly fee: bigint
  readonly expires_at: number | null
  readonly addresses: ReadonlyArray<{
    readonly network: Quote.Network
    readonly coin: Quote.Coin
    readonly address: string
  }>
  /** Micros received. */
  amount: bigint
}

interface IntentM extends Obj {
  readonly kind: "payment_intent"
  readonly amount: bigint
  readonly fee: bigint
  readonly currency: "GMD" | "USD"
  readonly fee_type: "business" | "customer"
  readonly expires_at: number
}

interface InvM extends Obj {
  readonly kind: "invoice"
  readonly amount: bigint
  readonly currency: "GMD" | "USD"
  readonly overdue_at: number | null
  reminders: number
  /** The caller's number, or the sequential one taken at publication (null on a draft without one). */
  number: string | number | null
}

interface TransferM {
  readonly network: Quote.Network
  readonly coin: Quote.Coin
  readonly to_address: string
  readonly amount: bigint
  readonly tx_hash: string
  readonly log_index: number
  readonly matched: { readonly object: "conversion" | "payment_request"; readonly id: string } | null
}

interface Model {
  now: number
  /** The sandbox's current USD->GMD rate. */
  rate: Decimal.Decimal
  readonly config: EngineConfig.EngineConfig
  readonly businesses: Array<Biz>
  readonly conversions: Array<ConvM>
  readonly requests: Array<ReqM>
  readonly intents: Array<IntentM>
  readonly invoices: Array<InvM>
  readonly transfers: Array<TransferM>
  failNext: number
  seq: number
  /** Outbox rows expected: `<business>/<mode>|<object id>|<event>|<payload status>|<running total>` -> count. */
  readonly events: Map<string, number>
  /** The next sequential invoice number of each scope (decisions §6: taken at publication, no gaps). */
  readonly numbers: Map<string, number>
  /** What each scope's business balance holds (GMD butut, USD micros). */
  readonly held: Map<string, { gmd: bigint; usd: bigint }>
  /** Objects to read across businesses and modes after the command. */
  readonly touched: Set<Obj>
  /** A business was created: every object is read by its keys. */
  newBusiness: Biz | undefined
}

interface Real {
  readonly run: <A, E>(effect: Effect.Effect<A, E, EngineServices>) => Promise<A>
  /** Parsed outbox rows by row id (a row's body never changes). */
  readonly outboxCache: Map<string, { readonly event: string; readonly object: string }>
  /** Terminal statuses the engine reported, by `<kind>/<id>`. */
  readonly terminal: Map<string, string>
}

const scopeKey = (biz: Biz | string, mode: Mode): string => `${typeof biz === "string" ? biz : biz.id}/${mode}`
const objKey = (o: { readonly kind: string; readonly id: string }) => `${o.kind}/${o.id}`
const allObjects = (m: Model): Array<Obj> => [...m.conversions, ...m.requests, ...m.intents, ...m.invoices]
const bizOf = (m: Model, o: Obj): Biz => m.businesses[o.biz] as Biz
const pick = <T>(xs: ReadonlyArray<T>, i: number): T => xs[i % xs.length] as T
const MICROS_PER_CENT = 10_000n
const jsonMicros = (x: bigint) => Number(Decimal.formatUnits(x, 6))
const jsonMinor = (x: bigint) => Number(Decimal.formatUnits(x, 2))
const micros = (minor: bigint, currency: "GMD" | "USD") => (currency === "USD" ? minor * MICROS_PER_CENT : minor)

const heldOf = (m: Model, biz: Biz, mode: Mode) => {
  const k = scopeKey(biz, mode)
  let h = m.held.get(k)
  if (h === undefined) {
    h = { gmd: 0n, usd: 0n }
    m.held.set(k, h)
  }
  return h
}

/** Running total a webhook payload carries: conversion `actually_paid`, payment request `amount`. */
const progressOf = (o: Obj): string =>
  o.kind === "conversion"
    ? String(jsonMicros((o as ConvM).paid))
    : o.kind === "payment_request"
      ? String(jsonMicros((o as ReqM).amount))
      : ""

/**
 * One outbox row per event and distinct target URL, whose payload shows the
 * object's status and running total right after the change (or, for an event
 * about something else than the object's state, the `payload` given).
 */
const expectEvent = (
  m: Model,
  o: Obj,
  event: string,
  urls: ReadonlyArray<string | null>,
  payload: { readonly status: string; readonly progress: string } = { status: o.status, progress: progressOf(o) }
) => {
  const biz = bizOf(m, o)
  for (const url of new Set(urls)) {
    if (url === null) continue
    const k = `${scopeKey(biz, o.mode)}|${o.id}|${event}|${payload.status}|${payload.progress}`
    m.events.set(k, (m.events.get(k) ?? 0) + 1)
  }
}

/** An invoice of the scope already has `n` (a number names one invoice; `5` and `"5"` are one number). */
const numberTaken = (m: Model, biz: Biz, mode: Mode, n: string | number): boolean =>
  m.invoices.some((i) => i.biz === biz.n && i.mode === mode && i.number !== null && String(i.number) === String(n))

/** Takes the scope's next sequential invoice number: the first from the counter that no invoice has. */
const takeNumber = (m: Model, biz: Biz, mode: Mode): number => {
  const k = scopeKey(biz, mode)
  let n = m.numbers.get(k) ?? 1
  while (numberTaken(m, biz, mode, n)) n++
  m.numbers.set(k, n + 1)
  return n
}

/**
 * The status a read shows at `now`: the stored one, or what fell due since and
 * the scheduler has not stored yet (an expiry, an overdue mark), which every
 * read shows at once (`asOf`).
 */
const readStatus = (o: Obj, now: number): string => {
  switch (o.kind) {
    case "conversion": {
      const c = o as ConvM
      return (c.status === "pending" || c.status === "underpaid") && c.expires_at <= now ? "expired" : c.status
    }
    case "payment_request": {
      const r = o as ReqM
      return (r.status === "pending" || r.status === "partially_paid") && r.expires_at !== null && r.expires_at <= now
        ? "expired"
        : r.status
    }
    case "payment_intent": {
      const i = o as IntentM
      return !isTerminal("payment_intent", i.status) && i.expires_at <= now ? "cancelled" : i.status
    }
    default: {
      const v = o as InvM
      return v.mode === "live" && v.status === "not-paid" && v.overdue_at !== null && v.overdue_at <= now
        ? "overdue"
        : v.status
    }
  }
}

const isTerminal = (kind: ObjKind, status: string): boolean =>
  kind === "conversion"
    ? status === "expired"
    : kind === "payment_request"
      ? status === "completed" || status === "expired"
      : kind === "payment_intent"
        ? status === "successful" || status === "failed" || status === "cancelled"
        : status === "paid"

const fresh = (m: Model, prefix: string): string => {
  m.seq += 1
  return `${prefix}${m.seq.toString(16).padStart(8, "0")}`
}

// ---------------------------------------------------------------------------
// Running effects

type Outcome<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly code: string; readonly message: string }

const codeOf = (e: unknown): { code: string; message: string } => {
  const x = e as { readonly _tag?: unknown; readonly code?: unknown; readonly message?: unknown }
  return x?._tag === "DomainError" && typeof x.code === "string"
    ? { code: x.code, message: String(x.message) }
    : { code: `not a DomainError: ${String(x?._tag ?? e)}`, message: String(x?.message ?? e) }
}

/** Runs an effect and reports success or the catalogue code it failed with. */
const attempt = <A, E>(effect: Effect.Effect<A, E, EngineServices>): Effect.Effect<Outcome<A>, never, EngineServices> =>
  Effect.map(Effect.result(effect), (r) =>
    Result.isSuccess(r) ? { ok: true as const, value: r.success } : { ok: false as const, ...codeOf(r.failure) }
  )

const expectOk = <A>(o: Outcome<A>, what: string): A => {
  if (!o.ok) expect.fail(`${what}: expected success, got ${o.code}: ${o.message}`)
  return o.value
}

const expectCode = (o: Outcome<unknown>, code: string, what: string) => {
  if (o.ok) expect.fail(`${what}: expected ${code}, got success`)
  expect(o.code, `${what}: ${o.message}`).toBe(code)
}

/** Every page of a list use case. */
const listAll = <T, E>(
  list: (page: {
    limit: number
    offset: number
  }) => Effect.Effect<{ readonly data: ReadonlyArray<T>; readonly meta: { readonly total: number } }, E, EngineServices>
) =>
  Effect.gen(function* () {
    const out: Array<T> = []
    for (let offset = 0; ; offset += 100) {
      const page = yield* list({ limit: 100, offset })
      out.push(...page.data)
      if (page.data.length < 100 || out.length >= page.meta.total) return { data: out, total: page.meta.total }
    }
  })

// ---------------------------------------------------------------------------
// The checks after every command

interface Listed {
  readonly scope: string
  readonly status: string
  /** Conversion `actually_paid`, payment request `amount`, invoice `reminder_count`. */
  readonly progress: number
}

interface Snapshot {
  /** GET /v1/balance per scope: GMD `available` and the USD balance. */
  readonly balance: Map<string, { readonly gmd: number; readonly usd: number | undefined }>
  readonly unbalanced: ReadonlyArray<string>
  readonly ledgerSize: number
  /** Business balance lines per cause, negated (what the cause credited the business). */
  readonly credited: Map<string, { gmd: bigint; usd: bigint }>
  readonly held: Map<string, { gmd: bigint; usd: bigint }>
  readonly outbox: Map<string, number>
  readonly listed: Map<string, Array<Listed>>
  readonly totals: Array<{ readonly what: string; readonly total: number; readonly listed: number }>
}

const snapshot = (m: Model, real: Real): Effect.Effect<Snapshot, unknown, EngineServices> =>
  Effect.gen(function* () {
    const store = yield* Store
    const entries = yield* store.ledger
    const credited = new Map<string, { gmd: bigint; usd: bigint }>()
    const held = new Map<string, { gmd: bigint; usd: bigint }>()
    for (const e of entries) {
      if (e.account !== Ledger.accounts.business_balance) continue
      const c = credited.get(e.cause) ?? { gmd: 0n, usd: 0n }
      const h = held.get(scopeKey(e.business_id, e.mode)) ?? { gmd: 0n, usd: 0n }
      if (e.currency === "GMD") {
        c.gmd -= e.amount
        h.gmd -= e.amount
      } else {
        c.usd -= e.amount
        h.usd -= e.amount
      }
      credited.set(e.cause, c)
      held.set(scopeKey(e.business_id, e.mode), h)
    }
    const outbox = new Map<string, number>()
    const listed = new Map<string, Array<Listed>>()
    const totals: Array<{ what: string; total: number; listed: number }> = []
    const see = (kind: ObjKind, id: string, l: Listed) => {
      const k = `${kind}/${id}`
      listed.set(k, [...(listed.get(k) ?? []), l])
    }
    const balance = new Map<string, { gmd: number; usd: number | undefined }>()
    for (const biz of m.businesses) {
      for (const mode of MODES) {
        const caller = biz.callers[mode]
        const scope = scopeKey(biz, mode)
        const b = yield* Balance.getBalance(caller)
        balance.set(scope, { gmd: b.available, usd: b.balances.find((x) => x.currency === "USD")?.available })
        for (let offset = 0; ; offset += 500) {
          const page = yield* readUnit(store, (tx) =>
            tx.list("outbox", { business_id: biz.id, mode }, { limit: 500, offset })
          )
          for (const doc of page.docs) {
            let parsed = real.outboxCache.get(doc.id)
            if (parsed === undefined) {
              const { event, payload: p } = JSON.parse((doc.data as { readonly body: string }).body) as {
                readonly event: string
                readonly payload: {
                  readonly id?: string
                  readonly payment_intent_id?: string
                  readonly status?: string
                  readonly type?: string
                  readonly amount?: number
                  readonly actually_paid?: number
                  readonly object?: string
                  readonly conversion_id?: string
                }
              }
              const progress =
                p.actually_paid !== undefined
                  ? String(p.actually_paid)
                  : // a payment intent's events (its charge events carry the charge keys too): no running total
                    p.payment_intent_id !== undefined
                    ? ""
                    : p.type === "payment" || p.object === "transfer"
                      ? String(p.amount)
                      : ""
              // a payout's transfer.succeeded is keyed by its conversion (the payout id is the engine's own)
              const id = p.object === "transfer" ? p.conversion_id : (p.id ?? p.payment_intent_id)
              parsed = { event, object: `${id ?? "?"}|${event}|${p.status ?? "?"}|${progress}` }
              real.outboxCache.set(doc.id, parsed)
            }
            const k = `${scope}|${parsed.object}`
            outbox.set(k, (outbox.get(k) ?? 0) + 1)
          }
          if (page.docs.length < 500) break
        }
        if (mode === "live") {
          const cs = yield* listAll((p) => Conversions.listConversions(caller, p))
          totals.push({ what: `conversions of ${scope}`, total: cs.total, listed: cs.data.length })
          for (const c of cs.data) see("conversion", c.id, { scope, status: c.status, progress: c.actually_paid })
          const rs = yield* listAll((p) => PaymentRequests.listPaymentRequests(caller, p))
          totals.push({ what: `payment requests of ${scope}`, total: rs.total, listed: rs.data.length })
          for (const r of rs.data) see("payment_request", r.id, { scope, status: r.status, progress: r.amount })
        }
        const is = yield* listAll((p) => PaymentIntents.listPaymentIntents(caller, p))
        totals.push({ what: `payment intents of ${scope}`, total: is.total, listed: is.data.length })
        for (const i of is.data) see("payment_intent", i.payment_intent_id, { scope, status: i.status, progress: 0 })
        const vs = yield* listAll((p) => Invoices.listInvoices(caller, p))
        totals.push({ what: `invoices of ${scope}`, total: vs.total, listed: vs.data.length })
        for (const v of vs.data) see("invoice", v.id, { scope, status: v.status, progress: v.reminder_count })
      }
    }
    return {
      balance,
      unbalanced: unbalanced(entries),
      ledgerSize: entries.length,
      credited,
      held,
      outbox,
      listed,
      totals
    }
  })

const assertSnapshot = (m: Model, real: Real, s: Snapshot) => {
  expect(s.unbalanced, "ledger transactions that do not balance").toStrictEqual([])
  for (const c of m.conversions) {
    const booked = s.credited.get(`conversion/${c.id}`) ?? { gmd: 0n, usd: 0n }
    const gmd = Settlement.credited(c.gmd, c.pay, c.paid)
    const markup = Settlement.creditedMarkup(c.markup, c.pay, c.paid)
    expect(booked.gmd <= c.gmd, `conversion#${c.n} credited ${booked.gmd} butut, above gmd_amount ${c.gmd}`).toBe(true)
    expect(booked.gmd, `conversion#${c.n}: GMD credited vs Settlement.credited(actually_paid ${c.paid})`).toBe(gmd)
    expect(booked.usd, `conversion#${c.n}: markup credited (micros)`).toBe(markup * MICROS_PER_CENT)
  }
  for (const biz of m.businesses) {
    for (const mode of MODES) {
      const k = scopeKey(biz, mode)
      const want = m.held.get(k) ?? { gmd: 0n, usd: 0n }
      const got = s.held.get(k) ?? { gmd: 0n, usd: 0n }
      expect(got, `business#${biz.n} ${mode} balance (GMD butut, USD micros)`).toStrictEqual(want)
      expect(s.balance.get(k), `GET /v1/balance of business#${biz.n} ${mode}`).toStrictEqual({
        gmd: jsonMinor(want.gmd),
        usd: jsonMicros(want.usd)
      })
    }
  }
  // keys read with the model's names (business#0/live|conversion#2|ramp.paid|paid|73.64)
  const names = new Map<string, string>()
  for (const b of m.businesses) for (const mode of MODES) names.set(scopeKey(b, mode), `business#${b.n}/${mode}`)
  for (const o of allObjects(m)) names.set(o.id, `${o.kind}#${o.n}`)
  const named = (rows: Iterable<[string, number]>) =>
    [...rows]
      .filter(([, n]) => n > 0)
      .map(([k, n]): [string, number] => [
        k
          .split("|")
          .map((part) => names.get(part) ?? part)
          .join("|"),
        n
      ])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  expect(
    named(s.outbox),
    "outbox rows per <business>/<mode>|<object>|<event>|<payload status>|<payload running total>"
  ).toStrictEqual(named(m.events))
  for (const t of s.totals) expect(t.listed, `list total of ${t.what}`).toBe(t.total)
  const objects = allObjects(m)
  const known = new Set(objects.map(objKey))
  for (const k of s.listed.keys()) expect(known.has(k), `${k} is listed but was never created`).toBe(true)
  for (const o of objects) {
    const seen = s.listed.get(objKey(o)) ?? []
    const what = `${o.kind}#${o.n} (${o.id})`
    expect(
      seen.map((l) => l.scope),
      `${what} is listed in exactly its own business and mode`
    ).toStrictEqual([scopeKey(bizOf(m, o), o.mode)])
    const l = seen[0] as Listed
    const terminal = real.terminal.get(objKey(o))
    if (terminal !== undefined) expect(l.status, `${what} left its terminal status ${terminal}`).toBe(terminal)
    else if (isTerminal(o.kind, l.status)) real.terminal.set(objKey(o), l.status)
    expect(l.status, `${what} status`).toBe(readStatus(o, m.now))
    if (o.kind === "conversion") expect(l.progress, `${what} actually_paid`).toBe(jsonMicros((o as ConvM).paid))
    if (o.kind === "payment_request") expect(l.progress, `${what} amount`).toBe(jsonMicros((o as ReqM).amount))
    if (o.kind === "invoice") expect(l.progress, `${what} reminder_count`).toBe((o as InvM).reminders)
  }
}

const getOf = (o: Obj, caller: Caller): Effect.Effect<unknown, unknown, EngineServices> =>
  o.kind === "conversion"
    ? Conversions.getConversion(caller, o.id)
    : o.kind === "payment_request"
      ? PaymentRequests.getPaymentRequest(caller, o.id)
      : o.kind === "payment_intent"
        ? PaymentIntents.getPaymentIntent(caller, o.id)
        : Invoices.getInvoice(caller, o.id)

/**
 * Reads `objects` with the owner's key (found) and with every other business's
 * and mode's key, or only `readers` when given (never found).
 */
const crossReads = async (m: Model, real: Real, objects: Iterable<Obj>, readers?: ReadonlyArray<Biz>) => {
  const plan: Array<{ o: Obj; caller: Caller; who: string; want: string }> = []
  for (const o of objects) {
    const owner = bizOf(m, o)
    if (readers === undefined) plan.push({ o, caller: owner.callers[o.mode], who: "its owner", want: "ok" })
    for (const b of readers ?? m.businesses) {
      for (const mode of MODES) {
        if (b.id === owner.id && mode === o.mode) continue
        const minting = o.kind === "conversion" || o.kind === "payment_request"
        plan.push({
          o,
          caller: b.callers[mode],
          who: `business#${b.n} ${mode}`,
          want: minting && mode === "test" ? "permission_denied" : "not_found"
        })
      }
    }
  }
  const outcomes = await real.run(Effect.forEach(plan, (p) => attempt(getOf(p.o, p.caller))))
  for (const [i, p] of plan.entries()) {
    const o = outcomes[i] as Outcome<unknown>
    const what = `get ${p.o.kind}#${p.o.n} by ${p.who}`
    if (p.want !== "ok") {
      expectCode(o, p.want, what)
      continue
    }
    const wire = expectOk(o, what)
    if (p.o.kind === "conversion") checkTimeline(p.o as ConvM, wire as Present.ConversionWire, m.now)
  }
}

const butut = (x: number) => BigInt(Math.round(x * 100))

/** The `events` timeline of a conversion (decisions §3) tells the same story as the model. */
const checkTimeline = (c: ConvM, wire: Present.ConversionWire, now: number) => {
  const events = wire.events ?? []
  const what = `conversion#${c.n} timeline`
  const of = <T extends (typeof events)[number]["type"]>(type: T) =>
    events.filter((e): e is Extract<(typeof events)[number], { type: T }> => e.type === type)
  expect(events[0]?.type, `${what} starts with created`).toBe("created")
  expect(of("transfer").length, `${what}: transfers applied`).toBe(c.applied)
  expect(of("late_funds").length, `${what}: late funds`).toBe(c.late)
  expect(
    of("credit").reduce((sum, e) => sum + butut(e.gmd_amount), 0n),
    `${what}: the credit entries add up to Settlement.credited(actually_paid)`
  ).toBe(Settlement.credited(c.gmd, c.pay, c.paid))
  expect(
    of("payout").map((e) => e.outcome),
    `${what}: payouts (a failed one leaves the dalasi in the balance)`
  ).toStrictEqual(c.payouts)
  expect(of("expired").length, `${what}: expired once`).toBe(readStatus(c, now) === "expired" ? 1 : 0)
}

/** The checks after every command. */
const checkAll = async (m: Model, real: Real) => {
  assertSnapshot(m, real, await real.run(snapshot(m, real)))
  if (m.newBusiness !== undefined) await crossReads(m, real, allObjects(m), [m.newBusiness])
  if (m.touched.size > 0) await crossReads(m, real, m.touched)
  m.touched.clear()
  m.newBusiness = undefined
}

// ---------------------------------------------------------------------------
// Model transitions shared by commands

/** A confirmed transfer to a conversion's address, as decisions §3 says. Returns whether it is applied. */
const modelConversionTransfer = (m: Model, c: ConvM, amount: bigint): boolean => {
  if (m.now >= c.expires_at || c.status === "expired") {
    if (c.status === "pending" || c.status === "underpaid") c.status = "expired"
    c.late += 1
    m.touched.add(c)
    return false
  }
  c.applied += 1
  const before = Settlement.credited(c.gmd, c.pay, c.paid)
  const markupBefore = Settlement.creditedMarkup(c.markup, c.pay, c.paid)
  c.paid += amount
  const gmd = Settlement.credited(c.gmd, c.pay, c.paid) - before
  const markup = Settlement.creditedMarkup(c.markup, c.pay, c.paid) - markupBefore
  const status = Settlement.statusFor(c.pay, c.paid)
  c.status = status
  m.touched.add(c)
  const biz = bizOf(m, c)
  const held = heldOf(m, biz, c.mode)
  held.gmd += gmd
  held.usd += markup * MICROS_PER_CENT
  if (c.mobile && gmd > 0n) {
    // the increment is paid out at once; a failed payout leaves it in the balance
    if (m.failNext > 0) {
      m.failNext -= 1
      c.payouts.push("failed")
    } else {
      held.gmd -= gmd
      c.payouts.push("succeeded")
      // the payout reached the wallet: transfer.succeeded with its amount, where the conversion's events go
      expectEvent(m, c, "transfer.succeeded", [c.callback, biz.webhook], {
        status: "succeeded",
        progress: String(jsonMinor(gmd))
      })
    }
  }
  expectEvent(m, c, `ramp.${status}`, [c.callback, biz.webhook])
  return true
}

/** A confirmed payment to a payment request's address (decisions §4). */
const modelRequestPayment = (m: Model, r: ReqM, amount: bigint): boolean => {
  const overdue = r.expires_at !== null && m.now >= r.expires_at
  if (r.status === "expired" || (overdue && r.status !== "completed")) {
    if (r.status !== "expired") {
      r.status = "expired"
      m.touched.add(r)
    }
    return false
  }
  const was = r.status
  r.amount += amount
  r.status = r.amount >= r.usd * MICROS_PER_CENT ? "completed" : "partially_paid"
  m.touched.add(r)
  const held = heldOf(m, bizOf(m, r), r.mode)
  held.usd += amount
  if (was !== "completed" && r.status === "completed") held.usd -= r.fee * MICROS_PER_CENT
  expectEvent(m, r, "charge.succeeded", [r.callback])
  return true
}

// ---------------------------------------------------------------------------
// Commands

type Cmd = fc.AsyncCommand<Model, Real>

const callbackUrl = (m: Model, on: boolean): string | null =>
  on ? `https://callbacks.example/${fresh(m, "cb")}` : null

class CreateBusiness implements Cmd {
  readonly webhook: boolean
  constructor(webhook: boolean) {
    this.webhook = webhook
  }
  check(m: Readonly<Model>) {
    return m.businesses.length < 4
  }
  async run(m: Model, real: Real) {
    const webhook = this.webhook ? `https://hooks.example/${fresh(m, "wh")}` : null
    const biz = await real.run(createBiz(m.businesses.length, webhook))
    m.businesses.push(biz)
    m.newBusiness = biz
    await checkAll(m, real)
  }
  toString() {
    return `CreateBusiness(${this.webhook ? "webhook" : "no webhook"})`
  }
}

const createBiz = (n: number, webhook: string | null) =>
  Effect.gen(function* () {
    const created = yield* Businesses.createBusiness(
      webhook === null ? { name: `Business ${n}` } : { name: `Business ${n}`, webhook_url: webhook }
    )
    const live = yield* Businesses.authenticate(created.secret_key_live)
    const test = yield* Businesses.authenticate(created.secret_key_test)
    expect([live.business_id, live.mode, test.business_id, test.mode]).toStrictEqual([
      created.id,
      "live",
      created.id,
      "test"
    ])
    const biz: Biz = { n, id: created.id, webhook, callers: { live, test } }
    return biz
  })

interface ConversionArgs {
  readonly biz: number
  readonly live: boolean
  readonly gmdMode: boolean
  readonly gmd: bigint
  readonly pay: bigint
  readonly route: { readonly network: Quote.Network; readonly coin: Quote.Coin }
  readonly mobile: boolean
  readonly wallet: Conversion.PayoutMethod
  readonly callback: boolean
  readonly markup: Quote.Markup | undefined
}

class CreateConversion implements Cmd {
  readonly a: ConversionArgs
  constructor(a: ConversionArgs) {
    this.a = a
  }
  check() {
    return true
  }
  async run(m: Model, real: Real) {
    const a = this.a
    const biz = pick(m.businesses, a.biz)
    const caller = biz.callers[a.live ? "live" : "test"]
    const callback = callbackUrl(m, a.callback)
    const input: Conversion.CreateConversion = {
      ...(a.gmdMode ? { gmd_amount: a.gmd } : { pay_amount: a.pay }),
      network: a.route.network,
      pay_currency: a.route.coin,
      ...(a.mobile ? { destination: "mobile_money" as const, payout_method: a.wallet } : {}),
      ...(callback === null ? {} : { callback_url: callback }),
      ...(a.markup === undefined ? {} : { markup_config: a.markup })
    }
    const outcome = await real.run(attempt(Conversions.createConversion(caller, input)))
    const what = `${this}`
    if (!a.live) return expectCode(outcome, "permission_denied", what)
    const oracle = Conversion.create(input, {
      id: "model",
      reference: "MP-00000000-000000-00000000",
      pay_address: "",
      now: m.now,
      rate: m.rate,
      config: m.config.conversion
    })
    if (Result.isFailure(oracle)) return expectCode(outcome, oracle.failure.code, `${what} (${oracle.failure.message})`)
    const wire = expectOk(outcome, what)
    const q = oracle.success.state
    expect(
      [wire.status, wire.gmd_amount, wire.pay_amount, wire.fee, wire.markup_share_usd, wire.actually_paid],
      `${what}: status and quote`
    ).toStrictEqual([
      "pending",
      Number(Decimal.formatUnits(q.gmd_amount, 2)),
      Number(Decimal.formatUnits(q.pay_amount, 2)),
      Number(Decimal.formatUnits(q.fee, 2)),
      Number(Decimal.formatUnits(q.markup_share_usd, 2)),
      0
    ])
    expect(wire.invoice_expires_at, `${what}: window`).toBe(Instant.toIso(m.now + 10 * Instant.MINUTE_MS))
    const c: ConvM = {
      kind: "conversion",
      n: m.conversions.length,
      id: wire.id,
      biz: biz.n,
      mode: "live",
      callback,
      status: "pending",
      gmd: q.gmd_amount,
      pay: q.pay_amount,
      markup: q.markup_share_usd,
      network: q.network,
      coin: q.pay_currency,
      address: wire.pay_address,
      expires_at: q.invoice_expires_at,
      mobile: a.mobile,
      paid: 0n,
      applied: 0,
      late: 0,
      payouts: []
    }
    m.conversions.push(c)
    m.touched.add(c)
    await checkAll(m, real)
  }
  toString() {
    const a = this.a
    const amount = a.gmdMode
      ? `gmd_amount ${Decimal.formatUnits(a.gmd, 2)}`
      : `pay_amount ${Decimal.formatUnits(a.pay, 2)}`
    const markup =
      a.markup === undefined
        ? ""
        : `, markup ${a.markup.type} ${a.markup.type === "fixed" ? Decimal.formatUnits(a.markup.value, 2) : Decimal.format(a.markup.value)}`
    return `CreateConversion(business#${a.biz} ${a.live ? "live" : "test"}, ${amount}, ${a.route.network}/${a.route.coin}${a.mobile ? ", mobile money" : ""}${a.callback ? ", callback" : ""}${markup})`
  }
}

/** `racing`: a new partial transfer reported three times at once (the chain feed is at-least-once). */
type TransferKind = "partial" | "exact" | "over" | "racing" | "duplicate" | "unknown" | "wrong_coin"

interface TransferArgs {
  readonly kind: TransferKind
  readonly target: number
  readonly permille: number
  readonly extra: bigint
  readonly upper: boolean
  readonly log: number
}

/** A transfer of `permille` of what is still due, exactly what is due, or more. */
const amountFor = (kind: TransferKind, due: bigint, permille: number, extra: bigint): bigint =>
  kind === "partial"
    ? due > 1n
      ? (due * BigInt(permille)) / 1000n || 1n
      : BigInt(permille) * 1_000n
    : kind === "exact"
      ? due > 0n
        ? due
        : extra
      : (due > 0n ? due : 0n) + extra

class ChainTransfer implements Cmd {
  readonly a: TransferArgs
  constructor(a: TransferArgs) {
    this.a = a
  }
  check(m: Readonly<Model>) {
    return (
      this.a.kind === "unknown" || (this.a.kind === "duplicate" ? m.transfers.length > 0 : m.conversions.length > 0)
    )
  }
  async run(m: Model, real: Real) {
    const a = this.a
    let transfer: TransferM
    if (a.kind === "duplicate") {
      const first = pick(m.transfers, a.target)
      const tx_hash = a.upper ? first.tx_hash.toUpperCase() : first.tx_hash
      const { matched, ...t } = first
      const outcome = await real.run(
        Effect.gen(function* () {
          const store = yield* Store
          const before = (yield* store.ledger).length
          const result = yield* Transfers.applyChainTransfer({ ...t, tx_hash })
          return { result, posted: (yield* store.ledger).length - before }
        })
      )
      expect(outcome.result.applied, `${this}: a duplicate is not applied`).toBe(false)
      expect(outcome.result.matched, `${this}: matched`).toStrictEqual(matched)
      expect(outcome.posted, `${this}: a duplicate posts nothing to the ledger`).toBe(0)
      return checkAll(m, real)
    }
    const tx_hash = `0x${fresh(m, "").padStart(64, "a")}`
    if (a.kind === "unknown") {
      transfer = {
        network: a.upper ? "ARC" : "TRC20",
        coin: "USDC",
        to_address: `T${fresh(m, "unknown")}`,
        amount: a.extra,
        tx_hash,
        log_index: a.log,
        matched: null
      }
    } else {
      const c = pick(m.conversions, a.target)
      if (a.kind === "wrong_coin") {
        transfer = {
          network: c.network,
          coin: c.coin === "USDT" ? "USDC" : "USDT",
          to_address: c.address,
          amount: a.extra,
          tx_hash,
          log_index: a.log,
          matched: null
        }
      } else {
        const amount = amountFor(
          a.kind === "racing" ? "partial" : a.kind,
          c.pay * MICROS_PER_CENT - c.paid,
          a.permille,
          a.extra
        )
        transfer = {
          network: c.network,
          coin: c.coin,
          to_address: c.address,
          amount,
          tx_hash,
          log_index: a.log,
          matched: { object: "conversion", id: c.id }
        }
      }
    }
    const { matched, ...t } = transfer
    const reports = a.kind === "racing" ? 3 : 1
    const results = await real.run(
      Effect.all(
        Array.from({ length: reports }, () => Transfers.applyChainTransfer(t)),
        { concurrency: "unbounded" }
      )
    )
    let applied = false
    if (a.kind !== "unknown" && a.kind !== "wrong_coin")
      applied = modelConversionTransfer(m, pick(m.conversions, a.target), t.amount)
    m.transfers.push(transfer)
    expect(
      {
        matched: results.map((r) => r.matched),
        applied: results.filter((r) => r.applied).length
      },
      `${this}: outcome (reported ${reports} time(s) at once, applied at most once)`
    ).toStrictEqual({ matched: results.map(() => matched), applied: applied ? 1 : 0 })
    await checkAll(m, real)
  }
  toString() {
    const a = this.a
    return a.kind === "duplicate"
      ? `ChainTransfer(duplicate of transfer#${a.target}${a.upper ? ", hash upper case" : ""})`
      : a.kind === "unknown"
        ? `ChainTransfer(to an unknown address, ${Decimal.formatUnits(a.extra, 6)} USD)`
        : `ChainTransfer(${a.kind} to conversion#${a.target}, ${a.kind === "partial" || a.kind === "racing" ? `${a.permille}‰ of what is due` : a.kind === "exact" ? "what is due" : `+${Decimal.formatUnits(a.extra, 6)} USD`}, log ${a.log})`
  }
}

/** POST /v1/test_helpers/rates: the rate of new quotes; open conversions and requests keep theirs. */
class SetRate implements Cmd {
  readonly rate: Decimal.Decimal
  constructor(rate: Decimal.Decimal) {
    this.rate = rate
  }
  check() {
    return true
  }
  async run(m: Model, real: Real) {
    const now = m.now
    await real.run(Effect.flatMap(Sandbox.SandboxControl, (c) => c.setRate(this.rate, now)))
    m.rate = this.rate
    await checkAll(m, real)
  }
  toString() {
    return `SetRate(${Decimal.format(this.rate)})`
  }
}

class FailNextPayouts implements Cmd {
  readonly count: number
  constructor(count: number) {
    this.count = count
  }
  check() {
    return true
  }
  async run(m: Model, real: Real) {
    await real.run(Effect.flatMap(Sandbox.SandboxControl, (c) => c.failNextPayouts(this.count)))
    m.failNext = this.count
    await checkAll(m, real)
  }
  toString() {
    return `FailNextPayouts(${this.count})`
  }
}

class AdvanceClock implements Cmd {
  readonly ms: number
  constructor(ms: number) {
    this.ms = ms
  }
  check() {
    return true
  }
  async run(m: Model, real: Real) {
    m.now += this.ms
    const now = m.now
    const rate = m.rate
    const ran = await real.run(
      Effect.gen(function* () {
        yield* advanceTo(now)
        // keep the sandbox rate fresh at the new time
        yield* Effect.flatMap(Sandbox.SandboxControl, (c) => c.setRate(rate, now))
        return yield* Scheduler.runDue()
      })
    )
    const expected = { conversions: 0, requests: 0, intents: 0, overdue: 0 }
    for (const c of m.conversions) {
      if ((c.status === "pending" || c.status === "underpaid") && c.expires_at <= now) {
        c.status = "expired"
        m.touched.add(c)
        expected.conversions += 1
      }
    }
    for (const r of m.requests) {
      if ((r.status === "pending" || r.status === "partially_paid") && r.expires_at !== null && r.expires_at <= now) {
        r.status = "expired"
        m.touched.add(r)
        expected.requests += 1
      }
    }
    for (const i of m.intents) {
      if (!isTerminal("payment_intent", i.status) && i.expires_at <= now) {
        i.status = "cancelled"
        m.touched.add(i)
        expectEvent(m, i, "payment_intent.cancelled", [i.callback])
        expected.intents += 1
      }
    }
    for (const v of m.invoices) {
      if (v.mode === "live" && v.status === "not-paid" && v.overdue_at !== null && v.overdue_at <= now) {
        v.status = "overdue"
        m.touched.add(v)
        expectEvent(m, v, "invoice.overdue", [v.callback])
        expected.overdue += 1
      }
    }
    expect(
      {
        conversions: ran.conversions_expired,
        requests: ran.payment_requests_expired,
        intents: ran.payment_intents_expired,
        overdue: ran.invoices_overdue,
        payouts: ran.payouts_sent
      },
      `${this}: what the scheduler did`
    ).toStrictEqual({ ...expected, payouts: 0 })
    await checkAll(m, real)
  }
  toString() {
    const s = this.ms / 1000
    return `AdvanceClock(${s >= 3600 ? `${s / 3600} h` : s >= 60 ? `${s / 60} min` : `${s} s`}) + Scheduler.runDue`
  }
}

/** Moves the TestClock to `target` (the model's time). */
const advanceTo = (target: number) =>
  TestClock.testClockWith((clock) => clock.adjust(target - clock.currentTimeMillisUnsafe()))

interface RequestArgs {
  readonly biz: number
  readonly live: boolean
  readonly gmd: boolean
  readonly amount: bigint
  readonly callback: boolean
  readonly expiresIn: number | undefined
}

class CreatePaymentRequest implements Cmd {
  readonly a: RequestArgs
  constructor(a: RequestArgs) {
    this.a = a
  }
  check() {
    return true
  }
  async run(m: Model, real: Real) {
    const a = this.a
    const biz = pick(m.businesses, a.biz)
    const callback = callbackUrl(m, a.callback)
    const input: PaymentRequest.CreatePaymentRequest = {
      amount: a.amount,
      currency: a.gmd ? "GMD" : "USD",
      metadata: { order: `order-${m.seq}` },
      ...(callback === null ? {} : { callback_url: callback }),
      ...(a.expiresIn === undefined ? {} : { expires_at: m.now + a.expiresIn })
    }
    const outcome = await real.run(
      attempt(
        Effect.gen(function* () {
          const wire = yield* PaymentRequests.createPaymentRequest(biz.callers[a.live ? "live" : "test"], input)
          const store = yield* Store
          const doc = yield* readUnit(store, (tx) => tx.get("payment_request", wire.id))
          const stored = doc?.data as PaymentRequests.StoredPaymentRequest | undefined
          return { wire, addresses: stored?.addresses ?? [] }
        })
      )
    )
    const what = `${this}`
    if (!a.live) return expectCode(outcome, "permission_denied", what)
    const oracle = PaymentRequest.create(input, {
      id: "model",
      link: "",
      now: m.now,
      rate: m.rate,
      config: m.config.payment_request
    })
    if (Result.isFailure(oracle)) return expectCode(outcome, oracle.failure.code, `${what} (${oracle.failure.message})`)
    const { wire, addresses } = expectOk(outcome, what)
    const q = oracle.success.state
    expect([wire.status, wire.amount, wire.metadata.usd_amount], `${what}: created`).toStrictEqual([
      "pending",
      0,
      Number(Decimal.formatUnits(q.usd_amount, 2))
    ])
    expect(addresses.length, `${what}: deposit addresses`).toBeGreaterThan(0)
    const r: ReqM = {
      kind: "payment_request",
      n: m.requests.length,
      id: wire.id,
      biz: biz.n,
      mode: "live",
      callback,
      status: "pending",
      usd: q.usd_amount,
      fee: q.fee,
      expires_at: q.expires_at,
      addresses,
      amount: 0n
    }
    m.requests.push(r)
    m.touched.add(r)
    await checkAll(m, real)
  }
  toString() {
    const a = this.a
    return `CreatePaymentRequest(business#${a.biz} ${a.live ? "live" : "test"}, ${Decimal.formatUnits(a.amount, 2)} ${a.gmd ? "GMD" : "USD"}${a.callback ? ", callback" : ""}${a.expiresIn === undefined ? "" : `, expires in ${a.expiresIn / 1000} s`})`
  }
}

interface PayArgs {
  readonly target: number
  readonly address: number
  readonly kind: "partial" | "exact" | "over"
  readonly permille: number
  readonly extra: bigint
}

class PayPaymentRequest implements Cmd {
  readonly a: PayArgs
  constructor(a: PayArgs) {
    this.a = a
  }
  check(m: Readonly<Model>) {
    return m.requests.length > 0
  }
  async run(m: Model, real: Real) {
    const a = this.a
    const r = pick(m.requests, a.target)
    const to = pick(r.addresses, a.address)
    const amount = amountFor(a.kind, r.usd * MICROS_PER_CENT - r.amount, a.permille, a.extra)
    const transfer: TransferM = {
      network: to.network,
      coin: to.coin,
      to_address: to.address,
      amount,
      tx_hash: `0x${fresh(m, "").padStart(64, "b")}`,
      log_index: 0,
      matched: { object: "payment_request", id: r.id }
    }
    const { matched, ...t } = transfer
    const result = await real.run(Transfers.applyChainTransfer(t))
    const applied = modelRequestPayment(m, r, amount)
    m.transfers.push(transfer)
    expect({ matched: result.matched, applied: result.applied }, `${this}: outcome`).toStrictEqual({ matched, applied })
    await checkAll(m, real)
  }
  toString() {
    const a = this.a
    return `PayPaymentRequest(request#${a.target} to address ${a.address}, ${a.kind === "partial" ? `${a.permille}‰ of what is due` : a.kind === "exact" ? "what is due" : `due +${Decimal.formatUnits(a.extra, 6)} USD`})`
  }
}

interface IntentArgs {
  readonly biz: number
  readonly live: boolean
  readonly amount: bigint
  readonly currency: "GMD" | "USD"
  readonly feeType: "business" | "customer"
  readonly callback: boolean
}

class CreatePaymentIntent implements Cmd {
  readonly a: IntentArgs
  constructor(a: IntentArgs) {
    this.a = a
  }
  check() {
    return true
  }
  async run(m: Model, real: Real) {
    const a = this.a
    const biz = pick(m.businesses, a.biz)
    const mode: Mode = a.live ? "live" : "test"
    const callback = callbackUrl(m, a.callback)
    const input: PaymentIntent.CreatePaymentIntent = {
      amount: a.amount,
      currency: a.currency,
      transaction_fee_type: a.feeType,
      ...(callback === null ? {} : { callback_url: callback })
    }
    const wire = expectOk(
      await real.run(attempt(PaymentIntents.createPaymentIntent(biz.callers[mode], input))),
      `${this}`
    )
    const fee = PaymentIntent.transactionFee(a.amount, m.config.payment_intent.fee_percent)
    expect([wire.status, wire.transaction_fee], `${this}: created`).toStrictEqual([
      "requires_payment_method",
      Number(Decimal.formatUnits(fee, 2))
    ])
    const i: IntentM = {
      kind: "payment_intent",
      n: m.intents.length,
      id: wire.payment_intent_id,
      biz: biz.n,
      mode,
      callback,
      status: "requires_payment_method",
      amount: a.amount,
      fee,
      currency: a.currency,
      fee_type: a.feeType,
      expires_at: m.now + m.config.payment_intent.expiry_window_ms
    }
    m.intents.push(i)
    m.touched.add(i)
    expectEvent(m, i, "payment_intent.created", [callback])
    await checkAll(m, real)
  }
  toString() {
    const a = this.a
    return `CreatePaymentIntent(business#${a.biz} ${a.live ? "live" : "test"}, ${Decimal.formatUnits(a.amount, 2)} ${a.currency}, fee on ${a.feeType}${a.callback ? ", callback" : ""})`
  }
}

class PaymentIntentOutcome implements Cmd {
  readonly target: number
  readonly outcome: "succeeded" | "failed" | "cancel"
  constructor(target: number, outcome: "succeeded" | "failed" | "cancel") {
    this.target = target
    this.outcome = outcome
  }
  check(m: Readonly<Model>) {
    return m.intents.length > 0
  }
  async run(m: Model, real: Real) {
    const i = pick(m.intents, this.target)
    const caller = bizOf(m, i).callers[i.mode]
    const result = await real.run(
      attempt(
        this.outcome === "cancel"
          ? PaymentIntents.cancelPaymentIntent(caller, i.id)
          : PaymentIntents.reportPaymentOutcome(caller, i.id, this.outcome)
      )
    )
    const what = `${this}`
    if (isTerminal("payment_intent", i.status)) {
      expectCode(result, "invalid_state", `${what} on a ${i.status} intent`)
    } else {
      const wire = expectOk(result, what)
      i.status = this.outcome === "cancel" ? "cancelled" : this.outcome === "succeeded" ? "successful" : "failed"
      expect(wire.status, what).toBe(i.status)
      m.touched.add(i)
      const event =
        this.outcome === "cancel"
          ? "payment_intent.cancelled"
          : this.outcome === "succeeded"
            ? "charge.succeeded"
            : "charge.failed"
      expectEvent(m, i, event, [i.callback])
      if (this.outcome === "succeeded") {
        const held = heldOf(m, bizOf(m, i), i.mode)
        const to_business = i.fee_type === "business" ? i.amount - i.fee : i.amount
        if (i.currency === "GMD") held.gmd += to_business
        else held.usd += micros(to_business, "USD")
      }
    }
    await checkAll(m, real)
  }
  toString() {
    return `PaymentIntent(${this.outcome} on intent#${this.target})`
  }
}

interface InvoiceArgs {
  readonly biz: number
  readonly live: boolean
  readonly draft: boolean
  readonly body: { readonly data: Record<string, unknown> }
  /** Days from today (a date), or minutes from now (a date-time), or none. */
  readonly due: { readonly days: number } | { readonly minutes: number } | undefined
  readonly callback: boolean
}

class CreateInvoice implements Cmd {
  readonly a: InvoiceArgs
  constructor(a: InvoiceArgs) {
    this.a = a
  }
  check() {
    return true
  }
  async run(m: Model, real: Real) {
    const a = this.a
    const biz = pick(m.businesses, a.biz)
    const mode: Mode = a.live ? "live" : "test"
    const callback = callbackUrl(m, a.callback)
    const due_date =
      a.due === undefined
        ? undefined
        : "days" in a.due
          ? Instant.toIsoDate(m.now + a.due.days * Instant.DAY_MS)
          : Instant.toIso(m.now + a.due.minutes * Instant.MINUTE_MS)
    const { due_date: _d, callback_url: _c, ...rest } = a.body.data
    const body = {
      data: {
        ...rest,
        ...(due_date === undefined ? {} : { due_date }),
        ...(callback === null ? {} : { callback_url: callback })
      }
    }
    const decoded = decodeRequest(Requests.CreateInvoiceBody, body)
    if (Result.isFailure(decoded)) return expect.fail(`testkit bug: invalid invoice body ${decoded.failure.message}`)
    const input = toInvoiceCommand(decoded.success.data)
    const outcome = await real.run(
      attempt(
        a.draft
          ? Invoices.createDraftInvoice(biz.callers[mode], input)
          : Invoices.createInvoice(biz.callers[mode], input)
      )
    )
    if (input.invoice_number != null && numberTaken(m, biz, mode, input.invoice_number)) {
      expectCode(outcome, "validation_error", `${this}: an invoice of the business and mode has that invoice_number`)
      return await checkAll(m, real)
    }
    const wire = expectOk(outcome, `${this}`)
    const totals = InvoiceTotals.totals(input)
    if (totals instanceof Error) return expect.fail(`testkit bug: ${totals.message}`)
    const currency = input.currency ?? "GMD"
    const number = input.invoice_number ?? (a.draft ? null : takeNumber(m, biz, mode))
    const parsed = due_date === undefined ? undefined : Instant.parseIso(due_date)
    const v: InvM = {
      kind: "invoice",
      n: m.invoices.length,
      id: wire.id,
      biz: biz.n,
      mode,
      callback,
      status: a.draft ? "draft" : "not-paid",
      amount: totals.amount,
      currency,
      overdue_at: parsed === undefined ? null : parsed.date_only ? Instant.nextUtcMidnight(parsed.ms) : parsed.ms,
      reminders: 0,
      number
    }
    expect(
      [wire.status, wire.amount, wire.reminder_count, wire.invoice_number ?? null],
      `${this}: status (draft, or not-paid as published even when the due date has passed: the spec's Create Invoice), amount (decisions §6 totals), reminders, invoice_number (sequential when not given)`
    ).toStrictEqual([v.status, jsonMinor(totals.amount), 0, number])
    m.invoices.push(v)
    m.touched.add(v)
    await checkAll(m, real)
  }
  toString() {
    const a = this.a
    const due =
      a.due === undefined ? "" : "days" in a.due ? `, due in ${a.due.days} day(s)` : `, due in ${a.due.minutes} min`
    return `CreateInvoice(business#${a.biz} ${a.live ? "live" : "test"}${a.draft ? ", draft" : ""}${due}${a.callback ? ", callback" : ""}, ${JSON.stringify(a.body.data)})`
  }
}

type InvoiceAction = "send" | "pay" | "customer_pay" | "remind" | "update"

class InvoiceCommand implements Cmd {
  readonly target: number
  readonly action: InvoiceAction
  constructor(target: number, action: InvoiceAction) {
    this.target = target
    this.action = action
  }
  check(m: Readonly<Model>) {
    return m.invoices.length > 0
  }
  async run(m: Model, real: Real) {
    const v = pick(m.invoices, this.target)
    const caller = bizOf(m, v).callers[v.mode]
    const run =
      this.action === "send"
        ? Invoices.sendInvoice(caller, v.id)
        : this.action === "pay"
          ? Invoices.payInvoice(caller, v.id)
          : this.action === "customer_pay"
            ? Invoices.customerPaysInvoice(caller, v.id)
            : this.action === "remind"
              ? Invoices.remindInvoice(caller, v.id)
              : Invoices.updateInvoice(caller, v.id, { notes: `updated at ${m.now}` })
    const result = await real.run(attempt(run))
    const what = `${this} on a ${v.status} invoice`
    const refusal =
      this.action === "send"
        ? v.status === "draft"
          ? undefined
          : "invalid_state"
        : v.status === "paid"
          ? "already_paid"
          : v.status === "draft" && this.action !== "update"
            ? "invalid_state"
            : undefined
    if (refusal !== undefined) {
      expectCode(result, refusal, what)
    } else {
      const wire = expectOk(result, what)
      if (this.action !== "send" && readStatus(v, m.now) === "overdue" && v.status === "not-paid") {
        // the command first books the overdue mark the sweep has not stored yet, with its event
        v.status = "overdue"
        expectEvent(m, v, "invoice.overdue", [v.callback])
      }
      if (this.action === "send") {
        v.status = "not-paid"
        if (v.number === null) v.number = takeNumber(m, bizOf(m, v), v.mode)
      } else if (this.action === "remind") v.reminders += 1
      else if (this.action === "update") {
        // status, dates, counters and number never change on update
      } else {
        v.status = "paid"
        if (this.action === "customer_pay") {
          expectEvent(m, v, "paymentrequest.success", [v.callback])
          const held = heldOf(m, bizOf(m, v), v.mode)
          if (v.currency === "GMD") held.gmd += v.amount
          else held.usd += micros(v.amount, "USD")
        }
      }
      // Send Draft Invoice answers not-paid as sent (the spec's endpoint table); the rest as of now
      expect([wire.status, wire.reminder_count, wire.invoice_number ?? null], what).toStrictEqual([
        this.action === "send" ? v.status : readStatus(v, m.now),
        v.reminders,
        v.number
      ])
      m.touched.add(v)
    }
    await checkAll(m, real)
  }
  toString() {
    return `Invoice(${this.action} invoice#${this.target})`
  }
}

// ---------------------------------------------------------------------------
// Command arbitraries

const nat = fc.nat({ max: 1_000 })
const live = fc.integer({ min: 0, max: 9 }).map((n) => n > 0)
const route = fc.constantFrom<{ network: Quote.Network; coin: Quote.Coin }>(
  { network: "TRC20", coin: "USDT" },
  { network: "TRC20", coin: "USDC" },
  { network: "ARC", coin: "USDC" }
)
const markupArb: fc.Arbitrary<Quote.Markup | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 300n }).map((value): Quote.Markup => ({ type: "fixed", value })) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 1_200 })
      .map((v): Quote.Markup => ({ type: "percentage", value: Decimal.normalize(Decimal.make(BigInt(v), 2)) }))
  }
)

const createBusiness = fc.boolean().map((w): Cmd => new CreateBusiness(w))
const createConversion = fc
  .record({
    biz: nat,
    live,
    gmdMode: fc.boolean(),
    gmd: fc.bigInt({ min: 10_000n, max: 2_000_000n }),
    pay: fc.bigInt({ min: 300n, max: 50_000n }),
    route,
    mobile: fc.boolean(),
    wallet: fc.record({
      network: fc.constantFrom<"wave" | "afrimoney">("wave", "afrimoney"),
      account_number: fc.stringMatching(/^\d{7}$/),
      account_name: fc.constantFrom("Awa Jallow", "Lamin Ceesay", "Fatou Njie")
    }),
    callback: fc.boolean(),
    markup: markupArb
  })
  .map((a): Cmd => new CreateConversion(a))
const chainTransfer = fc
  .record({
    kind: fc.constantFrom<TransferKind>(
      "racing",
      "partial",
      "partial",
      "exact",
      "exact",
      "over",
      "duplicate",
      "unknown",
      "wrong_coin"
    ),
    target: nat,
    permille: fc.integer({ min: 1, max: 999 }),
    extra: fc.bigInt({ min: 1n, max: 5_000_000n }),
    upper: fc.boolean(),
    log: fc.nat({ max: 2 })
  })
  .map((a): Cmd => new ChainTransfer(a))
const failNextPayouts = fc.nat({ max: 3 }).map((n): Cmd => new FailNextPayouts(n))
const setRate = fc
  .constantFrom("55", "70", "70.5", "68.1234", "99.99", "100", "250.75")
  .map((r): Cmd => new SetRate(Decimal.parse(r) as Decimal.Decimal))
const advanceClock = fc
  .oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 59 }).map((s) => s * 1_000) },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 15 }).map((n) => n * 60_000) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 6 }).map((n) => n * 3_600_000) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }).map((n) => n * 86_400_000) }
  )
  .map((ms): Cmd => new AdvanceClock(ms))
const createPaymentRequest = fc
  .record({
    biz: nat,
    live,
    gmd: fc.boolean(),
    amount: fc.bigInt({ min: 300n, max: 2_000_000n }),
    callback: fc.boolean(),
    expiresIn: fc.option(
      fc.integer({ min: 0, max: 240 }).map((n) => n * 60_000),
      { nil: undefined }
    )
  })
  .map((a): Cmd => new CreatePaymentRequest(a))
const payPaymentRequest = fc
  .record({
    target: nat,
    address: fc.nat({ max: 2 }),
    kind: fc.constantFrom<"partial" | "exact" | "over">("partial", "exact", "over"),
    permille: fc.integer({ min: 1, max: 999 }),
    extra: fc.bigInt({ min: 1n, max: 5_000_000n })
  })
  .map((a): Cmd => new PayPaymentRequest(a))
const createPaymentIntent = fc
  .record({
    biz: nat,
    live: fc.boolean(),
    amount: fc.bigInt({ min: 1n, max: 10_000_000n }),
    currency: fc.constantFrom<"GMD" | "USD">("GMD", "USD"),
    feeType: fc.constantFrom<"business" | "customer">("business", "customer"),
    callback: fc.boolean()
  })
  .map((a): Cmd => new CreatePaymentIntent(a))
const paymentIntentOutcome = fc
  .tuple(nat, fc.constantFrom<"succeeded" | "failed" | "cancel">("succeeded", "failed", "cancel"))
  .map(([t, o]): Cmd => new PaymentIntentOutcome(t, o))
const createInvoice = fc
  .record({
    biz: nat,
    live: fc.boolean(),
    draft: fc.boolean(),
    body: createInvoiceBody,
    due: fc.oneof(
      fc.constant(undefined),
      fc.integer({ min: -1, max: 2 }).map((days) => ({ days })),
      fc.integer({ min: 1, max: 3_000 }).map((minutes) => ({ minutes }))
    ),
    callback: fc.boolean()
  })
  .map((a): Cmd => new CreateInvoice(a))
const invoiceCommand = fc
  .tuple(nat, fc.constantFrom<InvoiceAction>("send", "pay", "customer_pay", "remind", "update"))
  .map(([t, action]): Cmd => new InvoiceCommand(t, action))

/** Every command, the ones that move money listed more than once (fc.commands picks uniformly). */
const commandArbitraries: Array<fc.Arbitrary<Cmd>> = [
  createBusiness,
  createConversion,
  createConversion,
  chainTransfer,
  chainTransfer,
  chainTransfer,
  failNextPayouts,
  setRate,
  advanceClock,
  advanceClock,
  createPaymentRequest,
  payPaymentRequest,
  payPaymentRequest,
  createPaymentIntent,
  paymentIntentOutcome,
  paymentIntentOutcome,
  createInvoice,
  invoiceCommand,
  invoiceCommand
]

// ---------------------------------------------------------------------------
// The suite

/** Builds a fresh engine, reads its rate and configuration, and creates two businesses. */
const setup = async (makeLayer: () => Layer.Layer<EngineServices, unknown>) => {
  const runtime = ManagedRuntime.make(Layer.merge(makeLayer(), TestClock.layer()))
  const real: Real = {
    run: (effect) => runtime.runPromise(effect),
    outboxCache: new Map(),
    terminal: new Map()
  }
  const start = await real.run(
    Effect.gen(function* () {
      const store = yield* Store
      const ledger = yield* store.ledger
      const rates = yield* Rates
      const { rate } = yield* rates.current
      // the clock starts at 0; keep the sandbox rate fresh whatever time it was observed at
      yield* Effect.flatMap(Sandbox.SandboxControl, (c) => c.setRate(rate, 0))
      const config = yield* EngineConfig.Config
      const a = yield* createBiz(0, "https://hooks.example/business-0")
      const b = yield* createBiz(1, null)
      return { empty: ledger.length === 0, rate, config, businesses: [a, b] }
    })
  )
  expect(start.empty, "each build of the engine layer starts with an empty ledger").toBe(true)
  const model: Model = {
    now: 0,
    rate: start.rate,
    config: start.config,
    businesses: start.businesses,
    conversions: [],
    requests: [],
    intents: [],
    invoices: [],
    transfers: [],
    failNext: 0,
    seq: 0,
    events: new Map(),
    numbers: new Map(),
    held: new Map(),
    touched: new Set(),
    newBusiness: undefined
  }
  await real.run(Effect.flatMap(Sandbox.SandboxControl, (c) => c.failNextPayouts(0)))
  return { model, real, dispose: () => runtime.dispose() }
}

/**
 * Runs the model-based property once (all its runs) against fresh builds of
 * `makeLayer`; rejects with fast-check's report (seed, path, the shrunk command
 * sequence and the failed check) when an invariant breaks.
 */
export const runEngineModel = async (
  makeLayer: () => Layer.Layer<EngineServices, unknown>,
  options?: EngineModelOptions
): Promise<void> => {
  const runs = Math.max(1, options?.runs ?? 100)
  const maxCommands = Math.max(1, options?.maxCommands ?? 25)
  await fc.assert(
    fc.asyncProperty(
      fc.commands(commandArbitraries, {
        maxCommands,
        // lengths spread over 0..maxCommands (the default size keeps runs to a handful of commands)
        size: "max",
        ...(options?.replayPath === undefined ? {} : { replayPath: options.replayPath })
      }),
      async (commands) => {
        const { model, real, dispose } = await setup(makeLayer)
        try {
          await fc.asyncModelRun(() => ({ model, real }), commands)
          // a final sweep: nothing is visible to another business or mode
          await crossReads(model, real, allObjects(model))
        } finally {
          await dispose()
        }
      }
    ),
    {
      numRuns: runs,
      verbose: options?.verbose ?? 0,
      ...(options?.seed === undefined ? {} : { seed: options.seed }),
      ...(options?.path === undefined ? {} : { path: options.path }),
      ...(options?.timeLimitMs === undefined
        ? {}
        : { interruptAfterTimeLimit: options.timeLimitMs, markInterruptAsFailure: true })
    }
  )
}

/**
 * The time limit of the property under a test `timeout`: a tenth of it, at least 5 s but never more
 * than half, is left for the run under way.
 */
export const timeLimitUnder = (timeout: number): number =>
  Math.max(1, timeout - Math.min(Math.max(5_000, Math.round(timeout / 10)), Math.floor(timeout / 2)))

/**
 * Registers the engine model suite as a vitest `describe` block. `makeLayer`
 * must give a fresh, empty engine (store, ids, sandbox world, notifier) on every build.
 */
export const engineModelSuite = (
  name: string,
  makeLayer: () => Layer.Layer<EngineServices, unknown>,
  options?: EngineModelOptions
): void => {
  const runs = Math.max(1, options?.runs ?? 100)
  const maxCommands = Math.max(1, options?.maxCommands ?? 25)
  const timeout = options?.timeout ?? 60_000 + runs * 100
  const timeLimitMs = options?.timeLimitMs ?? timeLimitUnder(timeout)
  describe(`Engine model: ${name}`, () => {
    it(
      `random interleavings of create, transfer, duplicate, payout failure, clock and scheduler, payment, intent and invoice commands keep every invariant (${runs} runs, up to ${maxCommands} commands)`,
      () => runEngineModel(makeLayer, { ...options, timeLimitMs }),
      timeout
    )
  })
}
