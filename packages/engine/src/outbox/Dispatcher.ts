import { type DomainError, Errors } from "@xaalis/core"
import { Clock, Context, Effect } from "effect"
import { Notifier } from "../ports/Notifier.ts"
import {
  type Doc,
  DuplicateKey,
  type Mode,
  type Page,
  type Scope,
  Store,
  StoreError,
  VersionConflict
} from "../ports/Store.ts"
import { unitOfWorkIn } from "../usecases/common.ts"
import { nextDue } from "./Backoff.ts"
import type { OutboxRow } from "./Outbox.ts"

/**
 * The webhook outbox dispatcher (decisions §8): at-least-once delivery of the
 * rows written by `enqueue`, retried on the `Backoff` schedule, then `failed`
 * and listable for a manual `resend`.
 *
 * Each due row goes through three steps, each its own short unit of work except
 * the delivery itself, which never runs inside a store transaction:
 *
 * 1. claim: the row's `due_at` moves `claim_ms` ahead (version + 1). A second
 *    dispatcher running at the same time either no longer sees the row as due or
 *    loses the version race, so a row is not attempted twice at once. If this
 *    process dies mid-attempt, the claim lapses and the row is attempted again
 *    (that is the "at least" of at-least-once).
 * 2. deliver: one `Notifier.deliver` attempt, with the stable `event_id` and the
 *    exact stored `body`.
 * 3. record: delivered, or retried at `nextDue`, or failed past the horizon
 *    (version + 1 of the claimed row). On `VersionConflict` the row is skipped:
 *    someone else (another dispatcher whose claim won after ours lapsed, a resend)
 *    changed it, and their write stands.
 *
 * One receiver cannot hold the lane for the others: a free slot takes a row of
 * a business with fewer than `business_concurrency_max` attempts in flight
 * first (so the other businesses' rows never wait behind one business's), and
 * another row only when there is none such (no slot idles while rows wait); once an attempt to a
 * destination (business and URL) fails in a call, that destination's
 * other rows of the call are not attempted: they are deferred (`defer_ms`,
 * attempts unchanged). A receiver that hangs thus costs one call about one
 * deadline, however many events it has due (a business spreading its events
 * over many hanging URLs lengthens a call, but holds only its own share of the
 * slots); before, a business with 80 events
 * to a hanging receiver kept every other business's webhooks (and the
 * scheduler's sweeps, on the same lane) waiting 100 s.
 *
 * `defer: false` attempts every due row instead (the sandbox: its clock
 * advance does all the work that fell due before it answers, decisions §9, and
 * tests predict every attempt from the backoff schedule).
 */

/** Rows loaded per `dispatchDue` call unless `limit` says otherwise. */
export const batch_max = 100
/** Deliveries in flight at once, across different rows. */
export const concurrency_max = 8
/** Deliveries of one business in flight at once while other businesses' rows wait (at most `concurrency`). */
export const business_concurrency_max = 4
/** How far a row is put off, unattempted, when an attempt to its destination failed in the same call. */
export const defer_ms = 30_000
/** How long a claimed row is hidden from other dispatchers; must exceed the notifier's time-out. */
export const claim_ms = 5 * 60 * 1000
/** Longest `last_error` stored (characters). */
export const last_error_max = 500
/** Rows read per `Tx.list` page while scanning for failed rows. */
export const list_chunk_max = 500

export type OutboxDoc = Doc<OutboxRow>

/** One delivery attempt of an outbox row, once its outcome is recorded. */
export interface DeliveryAttempt {
  readonly event_id: string
  readonly event: OutboxRow["event"]
  readonly business_id: string
  readonly mode: Mode
  /** Which of the business's URLs it went to (never the URL itself: it may carry a token). */
  readonly target: OutboxRow["target"]
  /** 1 for the first attempt. */
  readonly attempt: number
  /** `retried`: it failed and is due again at `next_attempt_at`; `failed`: it failed past the retry horizon. */
  readonly outcome: "delivered" | "retried" | "failed"
  /** Why it failed, in the notifier's words (`HTTP 500`, `connection refused`, …); null when delivered. */
  readonly error: string | null
  /** When the next attempt falls due (ms since the epoch, the engine's clock); null when delivered or given up. */
  readonly next_attempt_at: number | null
}

/**
 * Told of every attempt once its outcome is recorded: an operator's log or
 * metrics (the reference server logs failures as warnings, a row given up as
 * an error). Called synchronously; one that throws is ignored. Default: nobody.
 */
export const DeliveryObserver = Context.Reference<(attempt: DeliveryAttempt) => void>(
  "@xaalis/engine/Dispatcher/DeliveryObserver",
  { defaultValue: () => () => undefined }
)

export interface DispatchSummary {
  readonly delivered: number
  readonly retried: number
  readonly failed: number
  /** Rows another dispatcher (or a resend) changed first: left alone. */
  readonly skipped: number
  /** Rows put off unattempted: an attempt to their destination failed in the same call. */
  readonly deferred: number
}

/** What a call that found nothing due did: the start of a sum of summaries. */
export const nothingDispatched: DispatchSummary = { delivered: 0, retried: 0, failed: 0, skipped: 0, deferred: 0 }

/** The summaries of two calls added up. */
export const addSummaries = (a: DispatchSummary, b: DispatchSummary): DispatchSummary => ({
  delivered: a.delivered + b.delivered,
  retried: a.retried + b.retried,
  failed: a.failed + b.failed,
  skipped: a.skipped + b.skipped,
  deferred: a.deferred + b.deferred
})

/** Rows a call took out of the due set: a call that processed fewer than its `limit` left nothing due behind. */
export const processed = (s: DispatchSummary): number => s.delivered + s.retried + s.failed + s.skipped + s.deferred

type Outcome = "delivered" | "retried" | "failed" | "skipped" | "deferred"

/** Where a row goes: its business and its URL (two URLs of one host are two receivers: one may fail alone). */
const destinationOf = (doc: OutboxDoc): string => `${doc.business_id ?? ""} ${doc.data.url}`

const asOutbox = (doc: Doc): OutboxDoc => doc as OutboxDoc

/** Outbox rows never carry unique keys, so a `DuplicateKey` on update is a bug, not a business outcome. */
const dieOnDuplicateKey = <A, E, R>(self: Effect.Effect<A, E | DuplicateKey, R>): Effect.Effect<A, E, R> =>
  Effect.catch(self, (e) => (e instanceof DuplicateKey ? Effect.die(e) : Effect.fail(e as E)))

const truncate = (message: string): string =>
  message.length <= last_error_max ? message : `${message.slice(0, last_error_max - 1)}…`

/**
 * One batch: attempts every outbox row due at `Clock.currentTimeMillis` (at most
 * `limit`, oldest due first), up to `concurrency` deliveries at a time, at most
 * `business_concurrency_max` of one business, deferring the rest of a
 * destination's rows once one of its attempts failed (see above).
 * Every processed row leaves the due set (its next due time is in the future, or
 * null), so callers that must drain everything due (the sandbox clock advance)
 * may loop while `processed(summary) === limit`.
 */
export const dispatchDue = Effect.fn("Outbox.dispatchDue")(function* (options?: {
  readonly limit?: number
  readonly concurrency?: number
  /** Put off a failing destination's other rows (default true); false attempts every due row. */
  readonly defer?: boolean
  /**
   * A graceful stop: asked before each row is taken; once true, the attempts
   * in flight finish and are recorded, and no other row is claimed (they stay due).
   */
  readonly stopping?: () => boolean
}): Effect.fn.Return<DispatchSummary, StoreError, Store | Notifier> {
  const store = yield* Store
  const notifier = yield* Notifier
  const observe = yield* DeliveryObserver
  const now = yield* Clock.currentTimeMillis
  const limit = options?.limit ?? batch_max
  const due = yield* unitOfWorkIn(store, (tx) => tx.due("outbox", now, limit))

  const claim = (doc: OutboxDoc): Effect.Effect<OutboxDoc | undefined, StoreError> =>
    Effect.flatMap(Clock.currentTimeMillis, (at) => {
      // A due row that is not pending is inconsistent; clear its due time rather than deliver it again.
      const claimed: OutboxDoc =
        doc.data.status === "pending"
          ? { ...doc, version: doc.version + 1, due_at: at + claim_ms }
          : { ...doc, version: doc.version + 1, due_at: null }
      return store
        .transact((tx) => tx.update(claimed))
        .pipe(
          Effect.as(claimed.data.status === "pending" ? claimed : undefined),
          Effect.catchTag("VersionConflict", () => Effect.succeed(undefined)),
          dieOnDuplicateKey
        )
    })

  const processRow = (loaded: OutboxDoc): Effect.Effect<Outcome, StoreError> =>
    Effect.gen(function* () {
      const claimed = yield* claim(loaded)
      if (claimed === undefined) return "skipped" as const
      const row = claimed.data
      const attempt = row.attempts + 1

      const result = yield* Effect.result(
        notifier.deliver({
          event_id: row.event_id,
          url: row.url,
          body: row.body,
          business_id: claimed.business_id ?? "",
          // Outbox rows always carry a mode; a row without one gets the stricter rules.
          mode: claimed.mode ?? "live",
          attempt
        })
      )
      const at = yield* Clock.currentTimeMillis

      let outcome: DeliveryAttempt["outcome"]
      let data: OutboxRow
      let due_at: number | null
      if (result._tag === "Success") {
        outcome = "delivered"
        data = { ...row, status: "delivered", attempts: attempt, delivered_at: at }
        due_at = null
      } else {
        const failedRow: OutboxRow = { ...row, attempts: attempt, last_error: truncate(result.failure.message) }
        const next = nextDue(failedRow, at)
        outcome = next === null ? "failed" : "retried"
        data = next === null ? { ...failedRow, status: "failed" } : failedRow
        due_at = next
      }

      const recorded: OutboxDoc = { ...claimed, version: claimed.version + 1, due_at, data }
      const attempted: DeliveryAttempt = {
        event_id: row.event_id,
        event: row.event,
        business_id: claimed.business_id ?? "",
        mode: claimed.mode ?? "live",
        target: row.target,
        attempt,
        outcome,
        error: data.status === "delivered" ? null : data.last_error,
        next_attempt_at: due_at
      }
      return yield* store
        .transact((tx) => tx.update(recorded))
        .pipe(
          Effect.as(outcome),
          Effect.tap(() =>
            Effect.sync(() => {
              try {
                observe(attempted)
              } catch {
                // an observer's fault is its own: the attempt is recorded
              }
            })
          ),
          Effect.catchTag("VersionConflict", () => Effect.succeed("skipped" as const)),
          dieOnDuplicateKey
        )
    })

  /** Puts a row off, unattempted (its destination failed in this call); a row that is not pending leaves the due set. */
  const defer = (doc: OutboxDoc): Effect.Effect<Outcome, StoreError> =>
    Effect.flatMap(Clock.currentTimeMillis, (at) =>
      store
        .transact((tx) =>
          tx.update({ ...doc, version: doc.version + 1, due_at: doc.data.status === "pending" ? at + defer_ms : null })
        )
        .pipe(
          Effect.as<Outcome>("deferred"),
          Effect.catchTag("VersionConflict", () => Effect.succeed<Outcome>("skipped")),
          dieOnDuplicateKey
        )
    )

  const defers = options?.defer ?? true
  const concurrency = Math.max(1, options?.concurrency ?? concurrency_max)
  const per_business = Math.min(business_concurrency_max, concurrency)
  const queue = due.map(asOutbox)
  const in_flight = new Map<string, number>()
  const failing = new Set<string>()
  const outcomes: Array<Outcome> = []
  /**
   * The next row for a free slot: one of a failing destination (deferred at once) or of a business
   * under its share, oldest first; else the oldest of any (no slot idles while rows wait).
   */
  const take = (): OutboxDoc | undefined => {
    const preferred = queue.findIndex(
      (doc) => failing.has(destinationOf(doc)) || (in_flight.get(doc.business_id ?? "") ?? 0) < per_business
    )
    return queue.splice(preferred < 0 ? 0 : preferred, 1)[0]
  }
  const stopping = options?.stopping
  const slot = Effect.gen(function* () {
    for (;;) {
      const doc = stopping?.() === true ? undefined : take()
      if (doc === undefined) return
      const destination = destinationOf(doc)
      if (failing.has(destination)) {
        outcomes.push(yield* defer(doc))
        continue
      }
      const business = doc.business_id ?? ""
      in_flight.set(business, (in_flight.get(business) ?? 0) + 1)
      // a row once claimed is delivered and recorded whole, even if the dispatch is interrupted
      // (the attempt's own deadline is a timer)
      const outcome = yield* processRow(doc).pipe(
        Effect.uninterruptible,
        Effect.ensuring(Effect.sync(() => in_flight.set(business, (in_flight.get(business) ?? 1) - 1)))
      )
      if (defers && (outcome === "retried" || outcome === "failed")) failing.add(destination)
      outcomes.push(outcome)
    }
  })
  yield* Effect.all(
    Array.from({ length: Math.min(concurrency, queue.length) }, () => slot),
    { concurrency: "unbounded", discard: true }
  )
  const count = (o: Outcome) => outcomes.filter((x) => x === o).length
  return {
    delivered: count("delivered"),
    retried: count("retried"),
    failed: count("failed"),
    skipped: count("skipped"),
    deferred: count("deferred")
  }
})

/**
 * The failed rows of one business and mode (given up after the retry horizon,
 * waiting for a manual resend), newest first (`created_at`, then id), paged,
 * with their total.
 */
export const listFailed = Effect.fn("Outbox.listFailed")(function* (
  scope: Scope,
  page: Page
): Effect.fn.Return<{ readonly docs: ReadonlyArray<OutboxDoc>; readonly total: number }, StoreError, Store> {
  const store = yield* Store
  return yield* unitOfWorkIn(store, (tx) =>
    Effect.gen(function* () {
      // Tx.list pages before any filter, so the whole scope is scanned and paged afterwards.
      const failed: Array<OutboxDoc> = []
      let offset = 0
      for (;;) {
        const chunk = yield* tx.list("outbox", scope, { limit: list_chunk_max, offset })
        for (const doc of chunk.docs) {
          const row = asOutbox(doc)
          if (row.data.status === "failed") failed.push(row)
        }
        offset += chunk.docs.length
        if (chunk.docs.length === 0 || offset >= chunk.total) break
      }
      return { docs: failed.slice(page.offset, page.offset + page.limit), total: failed.length }
    })
  )
})

/** How often `resend` reruns its unit of work when a dispatcher updated the row first. */
export const resend_conflict_retries_max = 5

/**
 * Manual resend of a `failed` (or already `delivered`) row of the caller's
 * business and mode: it becomes `pending` and due now, with a new 3-day retry
 * window from now. `attempts` is kept (so the backoff resumes at its long
 * interval), and so are `event_id` and `body`. The next `dispatchDue` sends it.
 *
 * Another business's or mode's row, or an unknown id, is `not_found`; a row still
 * `pending` (already scheduled) is `invalid_state`.
 */
export const resend = Effect.fn("Outbox.resend")(function* (
  scope: Scope,
  outbox_id: string
): Effect.fn.Return<OutboxDoc, DomainError | StoreError, Store> {
  const store = yield* Store
  const now = yield* Clock.currentTimeMillis
  return yield* store
    .transact((tx) =>
      Effect.gen(function* () {
        const doc = yield* tx.get("outbox", outbox_id)
        if (doc === undefined || doc.business_id !== scope.business_id || doc.mode !== scope.mode) {
          return yield* Effect.fail(Errors.notFound(`No webhook delivery with id ${outbox_id}.`, "id"))
        }
        const current = asOutbox(doc)
        if (current.data.status === "pending") {
          return yield* Effect.fail(
            Errors.invalidState(
              `Webhook delivery ${outbox_id} is still pending; its next attempt is already scheduled.`
            )
          )
        }
        const next: OutboxDoc = {
          ...current,
          version: current.version + 1,
          due_at: now,
          data: { ...current.data, status: "pending", first_attempt_due: now, delivered_at: null }
        }
        yield* tx.update(next)
        return next
      })
    )
    .pipe(
      Effect.retry({ while: (e) => e instanceof VersionConflict, times: resend_conflict_retries_max }),
      Effect.catchTag("VersionConflict", (e) =>
        Effect.fail(new StoreError({ message: `too many concurrent updates of outbox ${e.id}` }))
      ),
      dieOnDuplicateKey
    )
})
