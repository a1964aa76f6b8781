import { randomBytes, randomFillSync } from "node:crypto"
import { Effect, Layer } from "effect"
import { Ids } from "../ports/Ids.ts"

const hexDigits = Buffer.from("0123456789abcdef", "latin1")
/** Entropy for the next UUIDs, refilled from the CSPRNG when used up (as `crypto.randomUUID` does). */
const entropy = Buffer.alloc(16 * 256)
let entropyUsed = entropy.length
const uuidText = Buffer.alloc(36)

/**
 * A random (version 4) UUID, like `crypto.randomUUID()`, but returned as one
 * flat string. `randomUUID` builds its result by 20 concatenations, so V8
 * keeps it as a tree of ~15 cons strings: every id stored in a row then costs
 * that many objects to the garbage collector, and comparing two equal ids (a
 * Map lookup by id) walks both trees character by character.
 */
const randomUuid = (): string => {
  if (entropyUsed === entropy.length) {
    randomFillSync(entropy)
    entropyUsed = 0
  }
  let at = 0
  for (let i = 0; i < 16; i++) {
    let byte = entropy[entropyUsed + i] as number
    // the version (4) and variant (10xx) bits of RFC 9562
    if (i === 6) byte = (byte & 0x0f) | 0x40
    else if (i === 8) byte = (byte & 0x3f) | 0x80
    if (i === 4 || i === 6 || i === 8 || i === 10) uuidText[at++] = 0x2d // "-"
    uuidText[at++] = hexDigits[byte >> 4] as number
    uuidText[at++] = hexDigits[byte & 0x0f] as number
  }
  entropyUsed += 16
  return uuidText.toString("latin1")
}

/** Cryptographic randomness from Node's `crypto`. */
export const layer: Layer.Layer<Ids> = Layer.succeed(
  Ids,
  Ids.of({
    uuid: Effect.sync(randomUuid),
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
