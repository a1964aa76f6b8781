/** The webhook-over-HTTP notifier and its SSRF guard. */
export * as AddressGuard from "./AddressGuard.ts"
export * as HttpNotifier from "./HttpNotifier.ts"
