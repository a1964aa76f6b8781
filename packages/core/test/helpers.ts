import { type Conversion, Decimal, type DomainError, Quote, type Transition } from "@xaalis/core"
import { Result } from "effect"

export const dec = (s: string): Decimal.Decimal => {
  const d = Decimal.parse(s)
  if (d === undefined) throw new Error(`bad decimal ${s}`)
  return d
}

/** The success of a step, or a test failure naming the error. */
export const must = <S, E, F>(r: Transition.Step<S, E, F>): Transition.Transition<S, E, F> => {
  if (Result.isFailure(r)) throw new Error(`expected success, got ${r.failure.code}: ${r.failure.message}`)
  return r.success
}

/** The error of a step, or a test failure. */
export const mustFail = <S, E, F>(r: Transition.Step<S, E, F>): DomainError => {
  if (Result.isSuccess(r)) throw new Error("expected a DomainError, got success")
  return r.failure
}

export const T0 = 1_795_251_907_000 // 2026-11-21T09:05:07.000Z

/** A conversion's creation context at T0 and 70 GMD per USD. */
export const conversionContext: Conversion.CreateContext = {
  id: "c1",
  reference: "MP-20261121-090507-DEADBEEF",
  pay_address: "TXYZ",
  now: T0,
  rate: dec("70"),
  config: Quote.defaultConversionConfig
}
