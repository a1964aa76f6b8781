import * as Errors from "../Errors.ts"
import { type FiatCode, fiat_codes } from "../money/Currency.ts"
import { characters } from "../Text.ts"
import { fail, ok, type Step } from "../Transition.ts"

/**
 * Payment links (decisions §5): `{id, url, amount, currency}` plus `title`,
 * `description`, `metadata`, `status` and the creation time. A link is created
 * `active`; it can be deactivated and activated again. Asking for the status it
 * already has is `invalid_state`. No webhook event is defined for links.
 */

export type PaymentLinkStatus = "active" | "inactive"
export const payment_link_statuses: ReadonlyArray<PaymentLinkStatus> = ["active", "inactive"]

export interface PaymentLink {
  readonly id: string
  readonly url: string
  readonly title: string | null
  readonly description: string | null
  /** Minor units of `currency`. */
  readonly amount: bigint
  readonly currency: FiatCode
  readonly metadata: Readonly<Record<string, unknown>>
  readonly status: PaymentLinkStatus
  readonly created_at: number
  readonly updated_at: number
}

/** The create-link request after wire decoding (types and scales already checked). */
export interface CreatePaymentLink {
  /** Minor units of `currency`, positive. */
  readonly amount: bigint
  /** Defaults to GMD. */
  readonly currency?: FiatCode | undefined
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

export interface CreateContext {
  readonly id: string
  readonly url: string
  readonly now: number
}

export type PaymentLinkStep = Step<PaymentLink, never>

export const title_length_max = 255
export const description_length_max = 5000

const textProblem = (value: string | undefined, param: string, max: number): Errors.DomainError | undefined =>
  value === undefined || (typeof value === "string" && value.length > 0 && characters(value) <= max)
    ? undefined
    : Errors.validation(`${param} must be a non-empty string of at most ${max} characters.`, param)

/** Creation: status `active`. */
export const create = (input: CreatePaymentLink, ctx: CreateContext): PaymentLinkStep => {
  if (input.amount <= 0n) return fail(Errors.validation("amount must be positive.", "amount"))
  const currency = input.currency ?? "GMD"
  if (!fiat_codes.includes(currency)) return fail(Errors.validation("currency must be GMD or USD.", "currency"))
  const problem =
    textProblem(input.title, "title", title_length_max) ??
    textProblem(input.description, "description", description_length_max)
  if (problem !== undefined) return fail(problem)
  const m = input.metadata
  if (m !== undefined && (typeof m !== "object" || m === null || Array.isArray(m))) {
    return fail(Errors.validation("metadata must be an object.", "metadata"))
  }
  return ok({
    id: ctx.id,
    url: ctx.url,
    title: input.title ?? null,
    description: input.description ?? null,
    amount: input.amount,
    currency,
    metadata: m ?? {},
    status: "active",
    created_at: ctx.now,
    updated_at: ctx.now
  })
}

/** inactive -> active; an active link is `invalid_state`. */
export const activate = (state: PaymentLink, now: number): PaymentLinkStep =>
  state.status === "active"
    ? fail(Errors.invalidState("This payment link is already active."))
    : ok({ ...state, status: "active", updated_at: now })

/** active -> inactive; an inactive link is `invalid_state`. */
export const deactivate = (state: PaymentLink, now: number): PaymentLinkStep =>
  state.status === "inactive"
    ? fail(Errors.invalidState("This payment link is already inactive."))
    : ok({ ...state, status: "inactive", updated_at: now })

export type PaymentLinkCommand = { readonly type: "activate" } | { readonly type: "deactivate" }

export const transition = (state: PaymentLink, command: PaymentLinkCommand, now: number): PaymentLinkStep => {
  switch (command.type) {
    case "activate":
      return activate(state, now)
    case "deactivate":
      return deactivate(state, now)
  }
}
