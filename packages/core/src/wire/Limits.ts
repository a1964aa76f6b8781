import type { Butut, Cents, Micros } from "../money/Money.ts"

/**
 * Every limit of the public HTTP surface, checked at the edge (wire decoding).
 * Anything a caller can make grow has a `*_max` here, with the reason it exists.
 *
 * Amount maxima keep every amount at <= 15 significant digits at its scale, so
 * the double that carries it in JSON is exactly the decimal (`Money.toJsonNumber`)
 * and `number -> minor -> number` round-trips.
 */

// ---------------------------------------------------------------- body
/** Request body size in UTF-8 bytes: a full invoice (100 line items, metadata) is ~60 KB; more is abuse. */
export const body_bytes_max = 262_144
/** Array/object nesting of a body: ours needs 4 levels plus metadata; deep nesting only costs stack. */
export const body_depth_max = 32

// ---------------------------------------------------------------- metadata
/** Serialized metadata in UTF-8 bytes: stored and echoed on every read and webhook of the object. */
export const metadata_bytes_max = 8_192
/** Keys in one metadata object (Stripe uses 50): metadata is for references, not documents. */
export const metadata_keys_max = 50
/** Length of one metadata key: keys are names, not data. */
export const metadata_key_length_max = 100

// ---------------------------------------------------------------- strings
/** General single-line text (names, titles, identifiers): one database row field, one UI line. */
export const string_length_max = 255
/** URLs (return, cancel, callback, webhook): the de-facto browser and proxy limit. */
export const url_length_max = 2_048
/** Email addresses: RFC 5321 path limit. */
export const email_length_max = 254
/** Phone numbers as typed (E.164 is 15 digits; room for +, spaces, dashes). */
export const phone_length_max = 32
/** The business's own customer identifier (decisions §6: up to 255 characters). */
export const customer_length_max = 255
/** A custom invoice number: printed on the invoice, so short. */
export const invoice_number_length_max = 64
/** Largest numeric invoice number: exact as a JSON number. */
export const invoice_number_max = Number.MAX_SAFE_INTEGER
/** Free-text description of a payment link. */
export const description_length_max = 1_000
/** Free-text notes printed on an invoice. */
export const notes_length_max = 2_000
/** Line item `item` (product SKU or ID). */
export const line_item_length_max = 255
/** Mobile-money account number as sent (the 7-digit rule of payout_method is the domain's). */
export const account_number_length_max = 32
/** Mobile-money account holder name. */
export const account_name_length_max = 255
/** Chain address (Tron base58 is 34, EVM hex 42): room for any chain, no more. */
export const address_length_max = 128
/** Chain transaction hash (64 hex + 0x prefix on EVM). */
export const tx_hash_length_max = 128
/** Log index of a token transfer inside one transaction. */
export const log_index_max = 1_000_000

// ---------------------------------------------------------------- collections and pages
/** Line items of one invoice: a printable invoice; keeps totals bounded too. */
export const line_items_max = 100
/** Page size of every list (decisions §7: 1..100). */
export const page_limit_max = 100
/** Page size when `limit` is absent (spec: default 10). */
export const page_limit_default = 10
/**
 * Deepest offset: any whole number a JSON number carries exactly (decisions §7
 * says only `offset >= 0`); past the end a page is simply empty.
 */
export const page_offset_max = Number.MAX_SAFE_INTEGER

// ---------------------------------------------------------------- amounts (minor units)
/** GMD amounts: 1,000,000,000.00 dalasi (12 significant digits at 2 places). */
export const gmd_amount_max: Butut = 100_000_000_000n
/** USD amounts (quotes, fees, invoices): 10,000,000.00 dollars (10 digits at 2 places). */
export const usd_amount_max: Cents = 1_000_000_000n
/** On-chain stablecoin amounts: 10,000,000.000000 USD (14 digits at 6 places). */
export const chain_amount_max: Micros = 10_000_000_000_000n
/** Decimal places of on-chain stablecoin amounts (USDT/USDC token precision, decisions §1). */
export const chain_amount_places = 6

/** Largest amount in minor units for a fiat currency code. */
export const amountMax = (currency: "GMD" | "USD"): bigint => (currency === "GMD" ? gmd_amount_max : usd_amount_max)

// ---------------------------------------------------------------- quantities, rates, percentages
/** Line-item quantity: 1,000,000 units (11 digits at 4 places). */
export const quantity_max = 1_000_000
/** Decimal places of a line-item quantity (decisions §6). */
export const quantity_places_max = 4
/** Decimal places of a percentage (discounts, markups): 12.3456 %. */
export const percent_places_max = 4
/** Decimal places of an exchange rate (GMD per USD). */
export const rate_places_max = 8
/** Largest exchange rate accepted (GMD per USD): 15 digits at 8 places; the real rate is ~70. */
export const rate_max = 1_000_000

// ---------------------------------------------------------------- sandbox helpers
/** One sandbox clock advance: ten years, enough for any expiry, overdue or retry schedule. */
export const clock_advance_seconds_max = 315_576_000
/** Payouts queued to fail at once in the sandbox. */
export const payouts_fail_next_max = 1_000
