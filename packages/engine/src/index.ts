/**
 * @xaalis/engine: the application layer of xaalis. Use cases are Effects that
 * require the ports (Store, Rates, Chain, Processor, Payouts, Notifier, Ids and
 * effect's Clock); `adapters/` holds the in-memory and sandbox implementations.
 */

export * as IdsAdapter from "./adapters/Ids.ts"
export * as MemoryNotifier from "./adapters/memory/MemoryNotifier.ts"
export * as MemoryStore from "./adapters/memory/MemoryStore.ts"
export * as Sandbox from "./adapters/sandbox/Sandbox.ts"
export * as EngineConfig from "./Config.ts"
export { createEngine, type Engine, type EngineOptions } from "./facade/createEngine.ts"
export * as Ledger from "./ledger/Ledger.ts"
export * as Backoff from "./outbox/Backoff.ts"
export * as Dispatcher from "./outbox/Dispatcher.ts"
export * as Outbox from "./outbox/Outbox.ts"
export * from "./ports/Chain.ts"
export * from "./ports/Ids.ts"
export * from "./ports/Notifier.ts"
export * from "./ports/Payouts.ts"
export * from "./ports/Processor.ts"
export * from "./ports/Rates.ts"
export * from "./ports/Store.ts"
export * as Present from "./present.ts"
export * as PresentBilling from "./present-billing.ts"
export * as Scheduler from "./Scheduler.ts"
export * as Balance from "./usecases/Balance.ts"
export * as Businesses from "./usecases/Businesses.ts"
export * as Conversions from "./usecases/Conversions.ts"
export * as Invoices from "./usecases/Invoices.ts"
export * as PaymentIntents from "./usecases/PaymentIntents.ts"
export * as PaymentLinks from "./usecases/PaymentLinks.ts"
export * as PaymentRequests from "./usecases/PaymentRequests.ts"
export * as Transfers from "./usecases/Transfers.ts"
