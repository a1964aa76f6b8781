import { Instant, Resources } from "@xaalis/core"
import type { Dispatcher } from "@xaalis/engine"
import { Schema } from "effect"

/**
 * Response schemas of the operations the core's `Resources` does not cover:
 * webhook deliveries (manual resend) and the API description itself.
 */

const DateTime = (description: string) => Schema.String.annotate({ description, format: "date-time" })

/** One webhook delivery (an outbox row: one event to one URL). */
export const WebhookDelivery = Schema.Struct({
  id: Schema.String.annotate({ description: "Delivery ID: pass it to the resend operation" }),
  event_id: Schema.String.annotate({ description: "Event ID, stable across retries and resends (webhook-id)" }),
  event: Resources.EventName,
  url: Schema.String.annotate({ description: "Where the event is POSTed", format: "uri" }),
  target: Schema.Literals(["callback_url", "webhook_url"]).annotate({
    description: "The object's callback_url, or the business's webhook URL"
  }),
  status: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ description: "Attempts made so far" }),
  last_error: Schema.NullOr(Schema.String).annotate({ description: "Why the last attempt failed" }),
  next_attempt_at: Schema.NullOr(DateTime("When the next attempt is due")).annotate({
    description: "null once delivered or failed"
  }),
  delivered_at: Schema.NullOr(DateTime("When it was delivered")).annotate({ description: "null until delivered" }),
  createdAt: DateTime("When the event was written")
}).annotate({ identifier: "WebhookDelivery", description: "A webhook delivery: one event to one URL" })

export const WebhookDeliveryList = Resources.List(WebhookDelivery, "WebhookDeliveryList")

/** GET /v1/openapi.json answers an OpenAPI 3.1 document. */
export const OpenApiDocument = Schema.Record(Schema.String, Schema.Unknown).annotate({
  identifier: "OpenApiDocument",
  description: "This API's OpenAPI 3.1 description"
})

/** The wire form of an outbox row. */
export const webhookDelivery = (doc: Dispatcher.OutboxDoc): typeof WebhookDelivery.Type => ({
  id: doc.id,
  event_id: doc.data.event_id,
  event: doc.data.event,
  url: doc.data.url,
  target: doc.data.target,
  status: doc.data.status,
  attempts: doc.data.attempts,
  last_error: doc.data.last_error,
  next_attempt_at: doc.data.status === "pending" && doc.due_at !== null ? Instant.toIso(doc.due_at) : null,
  delivered_at: doc.data.delivered_at === null ? null : Instant.toIso(doc.data.delivered_at),
  createdAt: Instant.toIso(doc.created_at)
})
