/**
 * The concurrency suite: what any Store must keep true when many requests hit
 * the same objects at once, checked through the engine's own use cases. Every
 * engine setup (store adapter, ids, sandbox) runs the same checks:
 *
 * ```ts
 * import { concurrencySuite } from "@xaalis/testkit"
 * concurrencySuite("postgres", () => myEngineLayer())
 * ```
 *
 * Checks (each with `concurrency` requests in flight at once, 50 by default):
 * - the same chain transfer reported by 50 workers at once is applied once:
 *   exactly one report answers `applied: true`, the conversion's
 *   `actually_paid` is the amount, the business is credited
 *   `Settlement.credited` of it, once, and the ledger balances;
 * - 50 different partial transfers to one conversion at once: each is applied
 *   exactly once, `actually_paid` is their exact total, the status is
 *   `Settlement.statusFor(total)`, the credit is exactly `credited(total)`, and
 *   the outbox holds one event per transfer whose running totals step by
 *   exactly the transfer amounts (no lost, doubled or torn update);
 * - 50 requests at once under one Idempotency-Key create one conversion; every
 *   other answer is that conversion or `idempotency_conflict`, and a later
 *   request replays it. Each request runs as if in its own process (its own
 *   view of the store): in one process the engine queues the uses of a key,
 *   which would hide a store that lets two first uses both take it;
 * - 50 reminders of one invoice at once: each answers a distinct
 *   `reminder_count` 1..50 and the invoice ends at 50 (no lost update); 50
 *   invoices created at once take the sequential numbers 1..50, each once
 *   (the business's number counter loses no update either);
 * - 50 immediate rolls of one business's live key at once leave exactly one
 *   working live key (a roll that loses the race too often fails retryably and
 *   writes nothing), the original revoked and the test key untouched.
 *
 * Reports of chain transfers are made as the engine's chain watcher makes them
 * (`runChainWatcher`): a report that fails with a store failure, or loses the
 * race on the transfer's identity (`DuplicateKey`), is reported again; here at
 * most 20 times, 5 ms apart, so a broken store fails instead of hanging. Every
 * other request must succeed at its first attempt (or, for the idempotent
 * creates, answer `idempotency_conflict`).
 *
 * `concurrencyChecks(options)` gives the same checks as plain functions (to
 * show, for instance, that a broken store fails them: test/concurrency-detects).
 *
 * Requirements on the layer: a fresh, empty engine on every build, as for
 * `engineModelSuite` (store, ids, the sandbox world; the notifier is unused).
 * The suite runs on the live clock.
 */

import { type Conversion as CoreConversion, Decimal, DomainError, Settlement } from "@xaalis/core"
import {
  Balance,
  Businesses,
  Conversions,
  type Doc,
  DuplicateKey,
  Idempotency,
  Invoices,
  Ledger,
  type LedgerEntry,
  PaymentIntents,
  PaymentLinks,
  PaymentRequests,
  Store,
  StoreError,
  Timeline,
  Transfers,
  unbalanced
} from "@xaalis/engine"
import { Cause, Effect, Exit, type Layer, ManagedRuntime, Result, Schedule } from "effect"
import { describe, expect, it } from "vitest"
import type { EngineServices } from "./EngineModel.ts"
import { readUnit } from "./StoreConformance.ts"

export interface ConcurrencySuiteOptions {
  /** Requests in flight at once in each check (default 50). */
  readonly concurrency?: number | undefined
  /** Timeout of each check in ms (default 120 s). */
  readonly timeout?: number | undefined
}

type Services = EngineServices
type Run = <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<A>

const GMD_AMOUNT = 500_000n // 5,000.00 GMD
const WEBHOOK = "https://merchant.example/hooks"

/** A fresh engine from `makeLayer`, disposed after `body`. */
const withEngine = async (
  makeLayer: () => Layer.Layer<Services, unknown>,
  body: (run: Run) => Promise<void>
): Promise<void> => {
  const runtime = ManagedRuntime.make(makeLayer())
  try {
    await body((effect) => runtime.runPromise(effect))
  } finally {
    await runtime.dispose()
  }
}

/** A business (with a webhook URL) and its live caller. */
const liveBusiness = Effect.gen(function* () {
  const created = yield* Businesses.createBusiness({ name: "Concurrency Corner", webhook_url: WEBHOOK })
  return yield* Businesses.authenticate(created.secret_key_live)
})

const transfer = (to_address: string, amount: bigint, tx_hash: string) => ({
  network: "TRC20" as const,
  coin: "USDT" as const,
  to_address,
  amount,
  tx_hash,
  log_index: 0
})

/** One report of a transfer, as the chain watcher makes it (see the module comment). */
const report = (t: ReturnType<typeof transfer>) =>
  Transfers.applyChainTransfer(t).pipe(
    Effect.retry({
      while: (e) => e instanceof StoreError || e instanceof DuplicateKey,
      times: 20,
      schedule: Schedule.spaced("5 millis")
    })
  )

const storedConversion = (id: string) =>
  Effect.flatMap(Store, (store) => readUnit(store, (tx) => Timeline.getWhole(tx, id))) as Effect.Effect<
    Doc<CoreConversion.Conversion> | undefined,
    StoreError,
    Store
  >

/** Every ledger line, checked balanced, and the GMD the lines caused by `conversion/<id>` credited the business. */
const creditOf = (id: string) =>
  Effect.gen(function* () {
    const entries: ReadonlyArray<LedgerEntry> = yield* Effect.flatMap(Store, (s) => s.ledger)
    expect(unbalanced(entries), "ledger transactions that do not balance").toStrictEqual([])
    return -entries
      .filter(
        (e) => e.cause === `conversion/${id}` && e.account === Ledger.accounts.business_balance && e.currency === "GMD"
      )
      .reduce((s, e) => s + e.amount, 0n)
  })

/** The dalasi amount `x` butut as the API's JSON number. */
const jsonGmd = (x: bigint) => Number(Decimal.formatUnits(x, 2))

/** Micro-dollars of a JSON number's text with at most 6 places. */
const microsOf = (text: string): bigint => {
  const d = Decimal.parse(text)
  if (d === undefined || d.scale > 6) throw new Error(`not an amount with at most 6 places: ${text}`)
  return d.units * 10n ** BigInt(6 - d.scale)
}

const codeOf = (e: unknown): string => {
  if (e instanceof DomainError) return e.code
  const tag = (e as { _tag?: string } | null)?._tag
  // a store's own failure says why: "too many concurrent updates" is the engine's retries run out
  if (tag === "StoreError") return `StoreError: ${(e as { message?: string }).message ?? ""}`
  return tag ?? String(e)
}

/** The typed failure of an exit, or a description of its defect. */
const failureOf = (exit: Exit.Exit<unknown, unknown>): unknown => {
  if (Exit.isSuccess(exit)) return undefined
  const error = Cause.findError(exit.cause)
  return Result.isSuccess(error) ? error.success : `defect: ${Cause.pretty(exit.cause)}`
}

/**
 * Runs `effect` with a view of the store of its own, as a request in another
 * process would see it: what the engine keeps per process (the queue of an
 * Idempotency-Key's uses) is not shared, so concurrency reaches the store.
 */
const asOwnProcess = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Store> =>
  Effect.gen(function* () {
    const store = yield* Store
    return yield* Effect.provideService(effect, Store, Store.of({ ...store }))
  })

/** One check of the suite: `run` rejects (with the failed expectation) when the engine breaks it. */
export interface ConcurrencyCheck {
  readonly title: string
  readonly run: (makeLayer: () => Layer.Layer<Services, unknown>) => Promise<void>
}

/** The checks of the suite, to run outside `concurrencySuite` (e.g. to show that a broken store fails them). */
export const concurrencyChecks = (options?: ConcurrencySuiteOptions): ReadonlyArray<ConcurrencyCheck> => {
  const n = Math.max(2, options?.concurrency ?? 50)
  const all = <A, E, R>(f: (i: number) => Effect.Effect<A, E, R>) =>
    Effect.forEach(
      Array.from({ length: n }, (_, i) => i),
      (i) => Effect.exit(f(i)),
      { concurrency: "unbounded" }
    )

  return [
    {
      title: `${n} concurrent reports of the same chain transfer credit it once`,
      run: (makeLayer) =>
        withEngine(makeLayer, async (run) => {
          await run(
            Effect.gen(function* () {
              const live = yield* liveBusiness
              const c = yield* Conversions.createConversion(live, { gmd_amount: GMD_AMOUNT })
              const amount = 36_820_000n // 36.82 USD of 73.64: half
              const t = transfer(c.pay_address, amount, "0xSameTransfer")
              const exits = yield* all(() => report(t))
              const failures = exits.map(failureOf).filter((f) => f !== undefined)
              expect(failures.map(codeOf), "every report gets an answer").toStrictEqual([])
              const outcomes = exits.flatMap((e) => (Exit.isSuccess(e) ? [e.value] : []))
              expect(outcomes.filter((o) => o.applied)).toHaveLength(1)
              for (const o of outcomes) expect(o.matched).toStrictEqual({ object: "conversion", id: c.id })

              const doc = yield* storedConversion(c.id)
              if (doc === undefined) return expect.fail("the conversion vanished")
              expect(doc.data.actually_paid).toBe(amount)
              expect(doc.data.applied_transfers).toHaveLength(1)
              const expected = Settlement.credited(GMD_AMOUNT, doc.data.pay_amount, amount)
              expect(expected).toBeGreaterThan(0n)
              expect(yield* creditOf(c.id), "credited once, exactly").toBe(expected)
              expect((yield* Balance.getBalance(live)).available).toBe(jsonGmd(expected))
            })
          )
        })
    },

    {
      title: `${n} concurrent different partial transfers to one conversion credit exactly credited(total)`,
      run: (makeLayer) =>
        withEngine(makeLayer, async (run) => {
          await run(
            Effect.gen(function* () {
              const live = yield* liveBusiness
              const c = yield* Conversions.createConversion(live, { gmd_amount: GMD_AMOUNT })
              // uneven amounts, 0.50 .. 1.48 USD with 6 places, together short of the 73.64 due
              const amounts = Array.from({ length: n }, (_, i) => 500_000n + BigInt(i) * 20_011n)
              const total = amounts.reduce((s, a) => s + a, 0n)
              const exits = yield* all((i) => report(transfer(c.pay_address, amounts[i] as bigint, `0xpart${i}`)))
              const failures = exits.map(failureOf).filter((f) => f !== undefined)
              expect(failures.map(codeOf), "every report gets an answer").toStrictEqual([])
              const outcomes = exits.flatMap((e) => (Exit.isSuccess(e) ? [e.value] : []))
              expect(
                outcomes.every((o) => o.applied),
                "each different transfer is applied"
              ).toBe(true)

              const doc = yield* storedConversion(c.id)
              if (doc === undefined) return expect.fail("the conversion vanished")
              const { pay_amount } = doc.data
              expect(doc.data.actually_paid, "actually_paid is the exact total").toBe(total)
              expect(doc.data.status).toBe(Settlement.statusFor(pay_amount, total))
              expect(new Set(doc.data.applied_transfers).size).toBe(n)
              expect(doc.data.applied_transfers).toHaveLength(n)
              const expected = Settlement.credited(GMD_AMOUNT, pay_amount, total)
              expect(yield* creditOf(c.id), "credited(total), exactly").toBe(expected)
              expect(expected).toBeLessThanOrEqual(GMD_AMOUNT)
              expect((yield* Balance.getBalance(live)).available).toBe(jsonGmd(expected))

              // one event per transfer, whose running totals step by exactly the amounts
              const store = yield* Store
              const rows = yield* readUnit(store, (tx) => tx.list("outbox", live, { limit: 1000, offset: 0 }))
              const totals = rows.docs
                .map((d) => (d.data as { readonly body: string }).body)
                .filter((body) => body.includes(c.id))
                .map((body) => {
                  const m = /"actually_paid":([0-9.]+)/.exec(body)
                  if (m === null) throw new Error(`no actually_paid in ${body}`)
                  return microsOf(m[1] as string)
                })
                .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
              expect(totals).toHaveLength(n)
              const steps = totals.map((t, i) => t - (i === 0 ? 0n : (totals[i - 1] as bigint)))
              const sorted = (xs: ReadonlyArray<bigint>) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
              expect(sorted(steps), "running totals step by the transfer amounts").toStrictEqual(sorted(amounts))

              // the timeline in order: a unit that waited for the row or ran again stamps its entries after
              // those of the units that went first
              const at = doc.data.timeline.map((e) => e.at)
              const backwards = at.filter((x, i) => i > 0 && x < (at[i - 1] as number))
              expect(backwards, "timeline entries in time order").toStrictEqual([])
            })
          )
        })
    },

    {
      title: `${n} concurrent requests with one Idempotency-Key create one conversion`,
      run: (makeLayer) =>
        withEngine(makeLayer, async (run) => {
          await run(
            Effect.gen(function* () {
              const live = yield* liveBusiness
              const request = () =>
                asOwnProcess(
                  Idempotency.idempotent(
                    live,
                    "same-key",
                    "POST /v1/minting/offramp {gmd_amount:5000}",
                    Conversions.createConversion(live, { gmd_amount: GMD_AMOUNT })
                  )
                )
              const exits = yield* all(request)
              const ids = new Set(exits.flatMap((e) => (Exit.isSuccess(e) ? [e.value.id] : [])))
              const refused = exits.map(failureOf).filter((f) => f !== undefined)
              expect(ids.size, "one conversion answered").toBe(1)
              expect(
                refused.map(codeOf).filter((c) => c !== "idempotency_conflict"),
                "other answers are idempotency_conflict"
              ).toStrictEqual([])
              const listed = yield* Conversions.listConversions(live, { limit: 100, offset: 0 })
              expect(listed.meta.total, "one effect").toBe(1)
              expect(listed.data[0]?.id).toBe([...ids][0])
              const replay = yield* request()
              expect(replay.id, "a later request replays the first outcome").toBe([...ids][0])
              expect((yield* Conversions.listConversions(live, { limit: 100, offset: 0 })).meta.total).toBe(1)
            })
          )
        })
    },

    {
      title: `${n} concurrent requests with one Idempotency-Key create one payment request, intent, link or invoice`,
      run: (makeLayer) =>
        withEngine(makeLayer, async (run) => {
          await run(
            Effect.gen(function* () {
              const live = yield* liveBusiness
              const creates = [
                ["payment request", () => PaymentRequests.createPaymentRequest(live, { amount: 1_000n })],
                ["payment intent", () => PaymentIntents.createPaymentIntent(live, { amount: 10_000n })],
                ["payment link", () => PaymentLinks.createPaymentLink(live, { amount: 500n })],
                ["invoice", () => Invoices.createInvoice(live, { amount: 500n, customer: "c" })]
              ] as const
              for (const [what, create] of creates) {
                const exits = yield* all(() =>
                  asOwnProcess(
                    Idempotency.idempotent(
                      live,
                      `key-${what.replaceAll(" ", "-")}`,
                      `POST ${what}`,
                      create() as Effect.Effect<unknown, DomainError | StoreError, EngineServices>
                    )
                  )
                )
                expect(exits.filter(Exit.isSuccess).length, `${what}: at least one answer`).toBeGreaterThanOrEqual(1)
                expect(
                  exits
                    .map(failureOf)
                    .filter((f) => f !== undefined)
                    .map(codeOf)
                    .filter((c) => c !== "idempotency_conflict"),
                  `${what}: every other answer is idempotency_conflict (never a defect)`
                ).toStrictEqual([])
                const answered = new Set(exits.flatMap((e) => (Exit.isSuccess(e) ? [JSON.stringify(e.value)] : [])))
                expect(answered.size, `${what}: one object, replayed`).toBe(1)
              }
            })
          )
        })
    },

    {
      title: `${n} concurrent updates of one invoice lose none; ${n} concurrent creations take numbers 1..${n} once`,
      run: (makeLayer) =>
        withEngine(makeLayer, async (run) => {
          await run(
            Effect.gen(function* () {
              const live = yield* liveBusiness
              const invoice = yield* Invoices.createInvoice(live, {
                amount: 150_000n,
                customer_name: "Awa Jallow",
                customer_email: "awa@example.gm"
              })
              const exits = yield* all(() => Invoices.remindInvoice(live, invoice.id))
              const failures = exits.map(failureOf).filter((f) => f !== undefined)
              expect(
                failures.map(codeOf),
                'every reminder succeeds (a StoreError "too many concurrent updates" is the engine\'s 8 retries run out on a hot row: the store must queue the writers of a row that lost a race, see "Hot rows" in the testkit README)'
              ).toStrictEqual([])
              const counts = exits.flatMap((e) => (Exit.isSuccess(e) ? [e.value.reminder_count] : []))
              expect(
                [...counts].sort((a, b) => a - b),
                "each reminder saw the one before it"
              ).toStrictEqual(Array.from({ length: n }, (_, i) => i + 1))
              expect((yield* Invoices.getInvoice(live, invoice.id)).reminder_count).toBe(n)

              const created = yield* all((i) =>
                Invoices.createInvoice(live, {
                  amount: 1_000n + BigInt(i),
                  customer_name: `Customer ${i}`,
                  customer_email: `customer${i}@example.gm`
                })
              )
              const refused = created.map(failureOf).filter((f) => f !== undefined)
              expect(refused.map(codeOf), "every creation succeeds").toStrictEqual([])
              const numbers = created.flatMap((e) => (Exit.isSuccess(e) ? [e.value.invoice_number] : []))
              // the first invoice took number 1
              expect(
                [...numbers].map(Number).sort((a, b) => a - b),
                "sequential numbers, each once, no gaps"
              ).toStrictEqual(Array.from({ length: n }, (_, i) => i + 2))
            })
          )
        })
    },

    {
      title: `${n} concurrent immediate rolls of one business's key leave exactly one working key`,
      run: (makeLayer) =>
        withEngine(makeLayer, async (run) => {
          await run(
            Effect.gen(function* () {
              const created = yield* Businesses.createBusiness({ name: "Rolling Stones" })
              const rolls = yield* all(() => Businesses.rollApiKey({ business_id: created.id, mode: "live" }))
              const refused = rolls.map(failureOf).filter((f) => f !== undefined)
              // a roll may lose the race too often and answer a (retryable) store failure: it then changed nothing
              expect(
                refused.map(codeOf).filter((c) => !c.startsWith("StoreError")),
                "every roll succeeds or fails retryably"
              ).toStrictEqual([])
              const keys = rolls.flatMap((e) => (Exit.isSuccess(e) ? [e.value.secret_key] : []))
              expect(keys.length, "at least one roll succeeds").toBeGreaterThanOrEqual(1)
              const works = (key: string) =>
                Effect.match(Businesses.authenticate(key), { onFailure: () => false, onSuccess: () => true })
              const working: Array<string> = []
              for (const key of [created.secret_key_live, ...keys]) if (yield* works(key)) working.push(key)
              expect(working.length, "exactly one live key works").toBe(1)
              expect(working[0], "the original key is revoked").not.toBe(created.secret_key_live)
              expect(yield* works(created.secret_key_test), "the test key is untouched").toBe(true)
              const rows = yield* Effect.flatMap(Store, (store) =>
                readUnit(store, (tx) =>
                  tx.list("api_key", { business_id: created.id, mode: "live" }, { limit: n + 10, offset: 0 })
                )
              )
              expect(rows.total, "one key row per successful roll, plus the original").toBe(keys.length + 1)
            })
          )
        })
    }
  ]
}

/** Registers the concurrency suite as a vitest `describe` block. `makeLayer` must give a fresh, empty engine. */
export const concurrencySuite = (
  name: string,
  makeLayer: () => Layer.Layer<Services, unknown>,
  options?: ConcurrencySuiteOptions
): void => {
  const timeout = options?.timeout ?? 120_000
  describe(`Concurrency: ${name}`, () => {
    for (const check of concurrencyChecks(options)) it(check.title, () => check.run(makeLayer), timeout)
  })
}
