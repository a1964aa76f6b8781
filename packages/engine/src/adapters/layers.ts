import type { Decimal } from "@xaalis/core"
import { Layer } from "effect"
import { Config, defaultEngineConfig, type EngineConfig } from "../Config.ts"
import * as IdsAdapter from "./Ids.ts"
import * as MemoryNotifier from "./memory/MemoryNotifier.ts"
import * as MemoryStore from "./memory/MemoryStore.ts"
import * as Sandbox from "./sandbox/Sandbox.ts"

/**
 * Everything an engine needs, in memory and simulated: the in-memory Store, the
 * sandbox's Rates/Chain/Processor/Payouts (and their control), the in-memory
 * Notifier (and its control), Ids (crypto, or deterministic with `seed`), and the
 * configuration. For tests, examples and the reference server's sandbox mode.
 */
export const sandbox = (options: {
  readonly rate: Decimal.Decimal
  readonly seed?: number
  readonly config?: Partial<EngineConfig>
}) => {
  const config: EngineConfig = { ...defaultEngineConfig, ...options.config }
  const ids = options.seed === undefined ? IdsAdapter.layer : IdsAdapter.layerDeterministic(options.seed)
  return Layer.mergeAll(
    MemoryStore.layer,
    MemoryNotifier.layer,
    Sandbox.layer({ rate: options.rate, base_url: config.base_url }).pipe(Layer.provideMerge(ids)),
    Layer.succeed(Config, config)
  )
}
