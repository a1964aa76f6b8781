import { randomBytes, randomUUID } from "node:crypto"
import { Effect, Layer } from "effect"
import { Ids } from "../ports/Ids.ts"

/** Cryptographic randomness from Node's `crypto`. */
export const layer: Layer.Layer<Ids> = Layer.succeed(
  Ids,
  Ids.of({
    uuid: Effect.sync(() => randomUUID()),
    random32: Effect.sync(() => randomBytes(4).readUInt32BE(0)),
    bytes: (n) => Effect.sync(() => new Uint8Array(randomBytes(n)))
  })
)

/**
 * Deterministic ids for tests: a counter-based UUID-shaped id and a seeded
 * xorshift generator, so a failing run can be replayed exactly.
 */
export const layerDeterministic = (seed = 1): Layer.Layer<Ids> =>
  Layer.effect(
    Ids,
    Effect.sync(() => {
      let state = seed >>> 0 || 1
      let counter = 0
      const next = () => {
        state ^= state << 13
        state >>>= 0
        state ^= state >>> 17
        state ^= state << 5
        state >>>= 0
        return state
      }
      return Ids.of({
        uuid: Effect.sync(() => {
          counter += 1
          const hex = counter.toString(16).padStart(12, "0")
          return `00000000-0000-4000-8000-${hex}`
        }),
        random32: Effect.sync(next),
        bytes: (n) => Effect.sync(() => Uint8Array.from({ length: n }, () => next() & 0xff))
      })
    })
  )
