/**
 * The same formulas as the core, written with native floats. For the benchmark
 * only: this is how NOT to compute money (0.1 + 0.2 !== 0.3), kept as the speed
 * baseline the exact kernels are measured against.
 */
const P = 1 // fee percent
const CAP = 2
const NET = 1.5

export const priceFloat = (g: number, r: number): number => {
  const base = Math.ceil((g / r) * 100) / 100
  const service = Math.min(Math.round(base * P) / 100, CAP)
  return base + service + NET
}

export interface FloatQuote {
  gmd_amount: number
  base_usd: number
  service_fee_usd: number
  fee: number
  pay_amount: number
}

export const quoteGmdFloat = (g: number, r: number): FloatQuote => {
  const base = Math.ceil((g / r) * 100) / 100
  const service = Math.min(Math.round(base * P) / 100, CAP)
  return {
    gmd_amount: g,
    base_usd: base,
    service_fee_usd: service,
    fee: service + NET,
    pay_amount: base + service + NET
  }
}

export const quotePayFloat = (pay: number, r: number): FloatQuote => {
  let base = (pay - NET) / (1 + P / 100)
  if ((base * P) / 100 >= CAP) base = pay - NET - CAP
  let g = Math.max(0, Math.floor(base * r))
  while (g > 0 && priceFloat(g, r) > pay) g -= 1
  while (priceFloat(g + 1, r) <= pay) g += 1
  return { ...quoteGmdFloat(g, r), pay_amount: pay }
}

export const creditedFloat = (g: number, pay: number, arrived: number): number =>
  Math.min(g, Math.floor((g * arrived * 100) / pay) / 100)

export const invoiceTotalFloat = (lines: ReadonlyArray<readonly [number, number]>, discountPercent: number): number => {
  let sub = 0
  for (const [q, price] of lines) sub += Math.round(q * price * 100) / 100
  return sub - Math.round(sub * discountPercent) / 100
}
