/**
 * `npm run bench`: the finance kernels of @xaalis/core (exact, bigint minor units)
 * side by side with the same formulas on native floats, in one run, on the same
 * inputs. Target: every exact kernel within 10x of its float twin.
 *
 * A third column shows the gmd-mode quote and credit written with decimal.js:
 * the measurement behind the choice of representation (docs/decisions.md).
 */

import { Decimal, Invoice, Quote, Settlement } from "@xaalis/core"
import { Decimal as DecimalJs } from "decimal.js"
import { Bench } from "tinybench"
import { creditedDecimalJs, quoteGmdDecimalJs } from "./decimaljs-baseline.ts"
import { creditedFloat, invoiceTotalFloat, quoteGmdFloat, quotePayFloat } from "./float-baseline.ts"

const N = 1_000 // inputs per iteration; figures are per single kernel call
let seed = 42
const rnd = (max: number) => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return seed % max
}

const cfg = Quote.defaultConversionConfig
const rates = ["70", "72.35", "65.5", "68.125"]
const inputs = Array.from({ length: N }, () => {
  const gmd = 400 + rnd(2_000_000)
  const rate = rates[rnd(rates.length)] as string
  const pay = 2500 + rnd(5_000_000) // cents
  return {
    gmd,
    gmdMinor: BigInt(gmd) * 100n,
    rate,
    rateF: Number(rate),
    rateD: Decimal.parse(rate) as Decimal.Decimal,
    rateJs: new DecimalJs(rate),
    gmdJs: new DecimalJs(gmd),
    pay,
    payMinor: BigInt(pay),
    arrivedMicros: BigInt(rnd(2_000_000_000)),
    lines: Array.from({ length: 1 + rnd(8) }, () => [1 + rnd(40), 1 + rnd(500_000)] as const)
  }
})
const invoiceInputs = inputs.map((i) => ({
  currency: "GMD" as const,
  line_items: i.lines.map(([q, price]) => ({
    item: "sku",
    quantity: Decimal.make(BigInt(q), 0),
    unit_price: BigInt(price)
  })),
  discount: { type: "percentage" as const, amount: Decimal.make(5n, 0) }
}))

let sink: unknown
const bench = new Bench({ time: 400, warmupTime: 100 })
const pair = (name: string, exact: () => void, float: () => void, decimaljs?: () => void) => {
  bench.add(`${name} | exact`, exact)
  bench.add(`${name} | float`, float)
  if (decimaljs !== undefined) bench.add(`${name} | decimal.js`, decimaljs)
}

pair(
  "quote gmd mode",
  () => {
    for (const i of inputs) sink = Quote.quoteGmd(i.gmdMinor, "TRC20", i.rateD, undefined, cfg)
  },
  () => {
    for (const i of inputs) sink = quoteGmdFloat(i.gmd, i.rateF)
  },
  () => {
    for (const i of inputs) sink = quoteGmdDecimalJs(i.gmdJs, i.rateJs)
  }
)
pair(
  "quote pay mode",
  () => {
    for (const i of inputs) sink = Quote.quotePay(i.payMinor, "TRC20", i.rateD, undefined, cfg)
  },
  () => {
    for (const i of inputs) sink = quotePayFloat(i.pay / 100, i.rateF)
  }
)
pair(
  "credit",
  () => {
    for (const i of inputs) sink = Settlement.credited(i.gmdMinor, i.payMinor, i.arrivedMicros)
  },
  () => {
    for (const i of inputs) sink = creditedFloat(i.gmd, i.pay / 100, Number(i.arrivedMicros) / 1e6)
  },
  () => {
    for (const i of inputs)
      sink = creditedDecimalJs(i.gmdJs, new DecimalJs(i.pay).div(100), new DecimalJs(String(i.arrivedMicros)).div(1e6))
  }
)
pair(
  "invoice totals",
  () => {
    for (const i of invoiceInputs) sink = Invoice.Totals.totals(i)
  },
  () => {
    for (const i of inputs)
      sink = invoiceTotalFloat(
        i.lines.map(([q, p]) => [q, p / 100] as const),
        5
      )
  }
)

await bench.run()
void sink

const nsPerCall = (name: string): number => {
  const task = bench.tasks.find((t) => t.name === name)
  const r = task?.result
  if (r === undefined || !("latency" in r)) throw new Error(`benchmark ${name} did not complete`)
  return (r.latency.mean * 1e6) / N
}

const rows: Array<Record<string, string>> = []
let worst = 0
for (const kernel of ["quote gmd mode", "quote pay mode", "credit", "invoice totals"]) {
  const exact = nsPerCall(`${kernel} | exact`)
  const float = nsPerCall(`${kernel} | float`)
  const ratio = exact / float
  worst = Math.max(worst, ratio)
  const djs = bench.tasks.some((t) => t.name === `${kernel} | decimal.js`)
    ? nsPerCall(`${kernel} | decimal.js`)
    : undefined
  rows.push({
    kernel,
    "exact ns/call": exact.toFixed(1),
    "float ns/call": float.toFixed(1),
    "exact/float": `${ratio.toFixed(2)}x`,
    "decimal.js ns/call": djs === undefined ? "-" : djs.toFixed(1),
    "decimal.js/exact": djs === undefined ? "-" : `${(djs / exact).toFixed(2)}x`
  })
}
console.log(`@xaalis/core kernels, ${N} inputs per iteration, Node ${process.version}`)
console.table(rows)
const target = 10
console.log(
  `worst exact/float ratio: ${worst.toFixed(2)}x (target <= ${target}x): ${worst <= target ? "MET" : "MISSED"}`
)
if (worst > target) process.exitCode = 1
