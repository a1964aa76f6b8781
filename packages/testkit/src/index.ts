/**
 * @xaalis/testkit: conformance suites that every xaalis adapter must pass.
 * They register vitest tests, so `vitest` and `fast-check` are peer dependencies.
 */
export { runsFromEnv, type StoreConformanceOptions, storeConformance } from "./StoreConformance.ts"
