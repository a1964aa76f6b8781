import { Effect } from "effect"
import { Ids } from "../ports/Ids.ts"
import type { Doc, DuplicateKey, Mode, StoreError, Tx, VersionConflict } from "../ports/Store.ts"

/** Event names of the spec's event table. */
export type EventName =
  | "payment_intent.created"
  | "payment_intent.cancelled"
  | "charge.succeeded"
  | "charge.failed"
  | "transfer.succeeded"
  | "ramp.underpaid"
  | "ramp.paid"
  | "ramp.overpaid"
  | "paymentrequest.success"
  | "invoice.overdue"

/**
 * One outbox row: one event for one target URL. Several targets of one event
 * share `event_id` (the `webhook-id`, stable across retries) and `body`.
 * The row's `due_at` is the time of the next attempt; null once delivered or failed.
 */
export interface OutboxRow {
  readonly event_id: string
  readonly event: EventName
  readonly url: string
  readonly target: "callback_url" | "webhook_url"
  /** `{event, payload}` serialised once, when the state change was committed. */
  readonly body: string
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly first_attempt_due: number
  readonly last_error: string | null
  readonly delivered_at: number | null
}

/** Outbox rows have no unique keys. */
const noKeys: ReadonlyArray<string> = Object.freeze([])

/** What `enqueue` writes: one event for its targets. */
export interface EnqueueInput {
  readonly ids: ReadonlyArray<string>
  readonly event_id: string
  readonly business_id: string
  readonly mode: Mode
  readonly event: EventName
  readonly payload: unknown
  readonly targets: ReadonlyArray<{ readonly url: string; readonly target: OutboxRow["target"] }>
  readonly now: number
}

/**
 * The outbox rows of one event: one per distinct target URL, sharing the event
 * id and the serialised body; the i-th row kept takes `ids[i]`. Pure: what
 * `enqueue` and `publish` insert.
 * @internal
 */
export const rowsOf = (input: EnqueueInput): Array<Doc<OutboxRow>> => {
  const body = JSON.stringify({ event: input.event, payload: input.payload })
  // one row per distinct URL, in order (`map` allocates the result once)
  const distinct =
    input.targets.length === 1
      ? input.targets
      : input.targets.filter((t, i, all) => all.findIndex((o) => o.url === t.url) === i)
  return distinct.map((t, i) => ({
    kind: "outbox" as const,
    id: input.ids[i] ?? `${input.event_id}:${i}`,
    business_id: input.business_id,
    mode: input.mode,
    created_at: input.now,
    version: 1,
    due_at: input.now,
    keys: noKeys,
    data: {
      event_id: input.event_id,
      event: input.event,
      url: t.url,
      target: t.target,
      body,
      status: "pending" as const,
      attempts: 0,
      first_attempt_due: input.now,
      last_error: null,
      delivered_at: null
    }
  }))
}

/** Inserts `docs` one after the other, stopping at the first failure. */
const insertAll = Effect.fnUntraced(function* (tx: Tx, docs: ReadonlyArray<Doc>) {
  for (const doc of docs) yield* tx.insert(doc)
})

/** How writing to the outbox fails: as the unit's inserts do. */
type WriteErr = StoreError | DuplicateKey | VersionConflict

/** Writes an event to the outbox inside the caller's unit of work: one row per distinct target URL. */
export const enqueue = (tx: Tx, input: EnqueueInput): Effect.Effect<void, WriteErr> => {
  const docs = rowsOf(input)
  return docs.length === 1 ? tx.insert(docs[0] as Doc) : insertAll(tx, docs)
}

/** What `publish` writes: one event of one scope for its targets. */
export interface PublishInput {
  readonly scope: { readonly business_id: string; readonly mode: Mode }
  readonly event: EventName
  readonly payload: unknown
  readonly targets: ReadonlyArray<{ readonly url: string; readonly target: OutboxRow["target"] }>
  readonly now: number
}

/**
 * Publishes one event in the caller's unit of work: draws its event id and one
 * row id per target from the Ids port, then writes it as `enqueue` does. No
 * targets, no rows.
 */
export const publish: (tx: Tx, input: PublishInput) => Effect.Effect<void, WriteErr, Ids> = Effect.fnUntraced(
  function* (tx: Tx, input: PublishInput) {
    if (input.targets.length === 0) return
    const ids = yield* Ids
    const event_id = yield* ids.uuid
    const rowIds: Array<string> = []
    for (let i = 0; i < input.targets.length; i++) rowIds.push(yield* ids.uuid)
    const docs = rowsOf({
      ids: rowIds,
      event_id,
      business_id: input.scope.business_id,
      mode: input.scope.mode,
      event: input.event,
      payload: input.payload,
      targets: input.targets,
      now: input.now
    })
    for (const doc of docs) yield* tx.insert(doc)
  }
)
