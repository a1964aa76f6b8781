/**
 * The core alone, no server: a conversion quoted in both modes, settled by two
 * chain transfers, a stablecoin payment request, and an invoice — every figure
 * computed exactly by @xaalis/core.
 *
 *   npm run example:quote            (from the repository root)
 */

import { Conversion, Currency, Decimal, Instant, Invoice, Money, PaymentRequest, Quote } from "@xaalis/core"
import { Result } from "effect"

const usd = (cents: bigint) => `${Money.format(cents, Currency.USD)} USD`
const gmd = (butut: bigint) => `${Money.format(butut, Currency.GMD)} GMD`
const chain = (micros: bigint) => `${Money.format(micros, Currency.USD_CHAIN)} USD`

const unwrap = <A>(r: Result.Result<A, { code: string; message: string }>): A => {
  if (Result.isFailure(r)) throw new Error(`${r.failure.code}: ${r.failure.message}`)
  return r.success
}

export const run = (now: number): Array<string> => {
  const out: Array<string> = []
  const rate = Decimal.parse("70") as Decimal.Decimal
  const config = Quote.defaultConversionConfig

  out.push("== Conversion quote (gmd_amount mode): 5,000 GMD on TRC20 at 70 GMD/USD")
  const q = Quote.quoteGmd(500000n, "TRC20", rate, undefined, config)
  out.push(
    `base ${usd(q.base_usd)} + service ${usd(q.service_fee_usd)} + network ${usd(q.network_fee_usd)} = pay_amount ${usd(q.pay_amount)}`
  )

  out.push("== Conversion quote (pay_amount mode): 100.00 USDT on TRC20")
  const p = Quote.quotePay(10000n, "TRC20", rate, undefined, config)
  out.push(`gmd_amount ${gmd(p.gmd_amount)}, fee ${usd(p.fee)}`)

  out.push("== Settlement: two halves of the 5,000 GMD conversion arrive")
  const ctx = { id: "conv_1", reference: "MP-20261121-090507-DEADBEEF", pay_address: "TQ-sandbox-1", now, rate, config }
  let conversion = unwrap(Conversion.create({ gmd_amount: 500000n }, ctx)).state
  for (const [i, amount] of [36_820_000n, 36_820_000n].entries()) {
    const transfer = { network: "TRC20" as const, coin: "USDT" as const, tx_hash: `0xfeed${i}`, log_index: 0, amount }
    const step = unwrap(Conversion.applyTransfer(conversion, transfer, now + (i + 1) * 60_000))
    conversion = step.state
    const credit = step.effects.find((e) => e.type === "credit")
    out.push(
      `${chain(amount)} arrived -> ${step.events.map((e) => e.type).join(", ")}; credited ${gmd(credit?.type === "credit" ? credit.gmd : 0n)}, total ${gmd(conversion.credited_gmd)}`
    )
  }

  out.push("== Stablecoin payment request: 1,000 GMD")
  const pr = unwrap(
    PaymentRequest.create(
      { amount: 100000n, currency: "GMD" },
      { id: "pr_1", link: "https://pay.example/pr_1", now, rate, config: PaymentRequest.defaultPaymentRequestConfig }
    )
  ).state
  out.push(`usd_amount ${usd(pr.usd_amount)}, fee ${usd(pr.fee)} (borne by the business)`)

  out.push("== Invoice: 2.5 x 12.99 + 3 x 100.00 GMD, 10 % discount")
  const invoice = unwrap(
    Invoice.create(
      {
        customer_email: "awa@example.gm",
        customer_name: "Awa Jallow",
        line_items: [
          { item: "SKU-COFFEE", quantity: Decimal.parse("2.5") as Decimal.Decimal, unit_price: 1299n },
          { item: "SKU-DELIVERY", quantity: Decimal.parse("3") as Decimal.Decimal, unit_price: 10000n }
        ],
        discount: { type: "percentage", amount: Decimal.parse("10") as Decimal.Decimal },
        due_date: Instant.toIsoDate(now + 7 * Instant.DAY_MS)
      },
      {
        id: "inv_1",
        reference: "INV-1",
        now,
        business_id: "biz_1",
        account_id: "acct_1",
        merchant_name: "Kairaba Coffee",
        test_mode: true,
        payment_link: "https://pay.example/inv_1",
        next_invoice_number: 1
      }
    )
  ).state
  for (const line of invoice.line_items ?? []) {
    out.push(`${line.item}: ${Decimal.format(line.quantity)} x ${gmd(line.unit_price)} = ${gmd(line.total_price)}`)
  }
  out.push(
    `sub_total ${gmd(invoice.sub_total)}, total ${gmd(invoice.total)}, type ${invoice.type}, status ${invoice.status}, number ${invoice.invoice_number}`
  )
  return out
}

if (import.meta.main) {
  for (const line of run(Date.now())) console.log(line)
}
