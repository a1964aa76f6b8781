import { Effect } from "effect"
import * as Dispatcher from "./outbox/Dispatcher.ts"
import * as Conversions from "./usecases/Conversions.ts"
import * as Idempotency from "./usecases/Idempotency.ts"
import * as Invoices from "./usecases/Invoices.ts"
import * as PaymentIntents from "./usecases/PaymentIntents.ts"
import * as PaymentRequests from "./usecases/PaymentRequests.ts"

/** What one pass of the scheduler did. */
export interface SchedulerRun {
  readonly conversions_expired: number
  readonly payment_requests_expired: number
  readonly payment_intents_expired: number
  readonly invoices_overdue: number
  /** Idempotency keys forgotten, their 24 hours over (with a Store that has a `StorePurge`). */
  readonly idempotency_keys_purged: number
  readonly payouts_sent: number
  readonly webhooks: Dispatcher.DispatchSummary
}

const batch = 100

/** Repeats a batch job until a batch comes back smaller than the batch size, or `stopping` says so. */
const drain = <E, R>(job: Effect.Effect<number, E, R>, stopping: () => boolean): Effect.Effect<number, E, R> =>
  Effect.gen(function* () {
    let total = 0
    while (!stopping()) {
      const n = yield* job
      total += n
      if (n < batch) return total
    }
    return total
  })

const never = () => false

/**
 * Runs everything that fell due at the Clock's current time: expiries of
 * conversions, payment requests and payment intents, overdue marks of live
 * invoices, payouts left pending (after a crash), then webhook deliveries and
 * retries (after those, so events written by the expiries go out in the same
 * pass), and last the idempotency keys answered more than 24 hours ago
 * (forgotten, when the Store can purge). Driven by
 * the Clock port: with a test clock, advancing time and calling `runDue` runs
 * exactly what fell due. `defer` is the dispatcher's (`Dispatcher.dispatchDue`):
 * false attempts every due delivery, as the sandbox clock advance must.
 * `stopping` (a graceful stop) is asked before each batch, payout and
 * delivery: once it says true, the work in flight finishes, nothing more
 * starts, and the rest stays due for the next pass.
 */
export const runDue = Effect.fnUntraced(function* (options?: {
  readonly defer?: boolean
  readonly stopping?: () => boolean
}) {
  const stopping = options?.stopping ?? never
  const conversions_expired = yield* drain(Conversions.expireDueConversions(batch), stopping)
  const payment_requests_expired = yield* drain(PaymentRequests.expireDuePaymentRequests(batch), stopping)
  const payment_intents_expired = yield* drain(PaymentIntents.expireDuePaymentIntents(batch), stopping)
  const invoices_overdue = yield* drain(Invoices.markOverdueInvoices(batch), stopping)
  const payouts_sent = stopping() ? 0 : yield* Conversions.runDuePayouts(batch, stopping)
  let webhooks = Dispatcher.nothingDispatched
  while (!stopping()) {
    const s = yield* Dispatcher.dispatchDue({ limit: batch, defer: options?.defer ?? true, stopping })
    webhooks = Dispatcher.addSummaries(webhooks, s)
    if (Dispatcher.processed(s) < batch) break
  }
  // last: a store that fails to purge does not hold back the payouts and deliveries of the pass
  const idempotency_keys_purged = yield* drain(Idempotency.purgeExpired(batch), stopping)
  const run: SchedulerRun = {
    conversions_expired,
    payment_requests_expired,
    payment_intents_expired,
    invoices_overdue,
    idempotency_keys_purged,
    payouts_sent,
    webhooks
  }
  return run
})
