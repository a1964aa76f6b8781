import type { Decimal } from "@xaalis/core"
import { Layer } from "effect"
import { Config, defaultEngineConfig, type EngineConfig } from "../Config.ts"
import type { Store } from "../ports/Store.ts"
import * as IdsAdapter from "./Ids.ts"
import * as MemoryNotifier from "./memory/MemoryNotifier.ts"
import * as MemoryStore from "./memory/MemoryStore.ts"
import * as Sandbox from "./sandbox/Sandbox.ts"

/**
 * Everything an engine needs, simulated: a Store (the in-memory one unless
 * `store` is given, e.g. `SqliteStore.layerFromDataDir(dir)`), the sandbox's
 * Rates/Chain/Processor/Payouts (and their control), the in-memory Notifier
 * (and its control), Ids (crypto, or deterministic with `seed`), and the
 * configuration. For tests, examples and embedding the engine in sandbox mode.
 *
 * @example
 * const layer = Layers.sandbox({ rate: Decimal.parse("70")!, store: SqliteStore.layerFromDataDir("./.data") })
 * // Effect.provide(program, layer): every use case of `program` writes to ./.data/xaalis.sqlite
 */
export const sandbox = <E = never>(options: {
  readonly rate: Decimal.Decimal
  readonly seed?: number
  readonly config?: Partial<EngineConfig>
  readonly store?: Layer.Layer<Store, E>
}) => {
  const config: EngineConfig = { ...defaultEngineConfig, ...options.config }
  const ids = options.seed === undefined ? IdsAdapter.layer : IdsAdapter.layerDeterministic(options.seed)
  const store: Layer.Layer<Store, E> = options.store ?? MemoryStore.layer
  return Layer.mergeAll(
    MemoryNotifier.layer,
    Sandbox.layer({ rate: options.rate, base_url: config.base_url }).pipe(Layer.provideMerge(ids)),
    Layer.succeed(Config, config)
  ).pipe(Layer.provideMerge(store))
}
