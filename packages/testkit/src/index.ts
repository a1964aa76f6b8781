/**
 * @xaalis/testkit: conformance suites that every xaalis adapter and build must pass.
 * They register vitest tests, so `vitest` and `fast-check` are peer dependencies.
 *
 * - `storeConformance`: the Store port (atomicity, isolation, versions, keys, lists, ledger).
 * - `engineModelSuite`: model-based runs of the whole engine (ledger, settlement, outbox, scoping).
 * - `concurrencySuite`: many requests at once on the same objects (transfers, idempotency keys, invoices).
 * - `financeLawSuite`: the finance laws of @xaalis/core (quotes, settlement, invoice totals).
 * - `ratesConformance`, `payoutsConformance`, `notifierConformance`: the Rates, Payouts and Notifier ports.
 * - `Arbitraries`: fast-check arbitraries of every request body and resource of the API.
 */
export * as Arbitraries from "./Arbitraries.ts"
export {
  type ConcurrencyCheck,
  type ConcurrencySuiteOptions,
  concurrencyChecks,
  concurrencySuite
} from "./ConcurrencySuite.ts"
export { type EngineModelOptions, type EngineServices, engineModelSuite, runEngineModel } from "./EngineModel.ts"
export { type FinanceCore, type FinanceLawOptions, financeLawSuite } from "./FinanceLaws.ts"
export {
  type Arrival,
  type NotifierConformanceOptions,
  NotifierHarness,
  type NotifierReceiver,
  notifierChecks,
  notifierConformance,
  type ReceiverAnswer
} from "./NotifierConformance.ts"
export {
  type PayoutsConformanceOptions,
  PayoutsRail,
  payoutsChecks,
  payoutsConformance,
  type RailPayment
} from "./PayoutsConformance.ts"
export type { CheckResult, PortCheck, PortSuiteOptions } from "./PortChecks.ts"
export { type RatesConformanceOptions, RatesFeed, ratesChecks, ratesConformance } from "./RatesConformance.ts"
export { runsFromEnv, type StoreConformanceOptions, storeConformance } from "./StoreConformance.ts"
