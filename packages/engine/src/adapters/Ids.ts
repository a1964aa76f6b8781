import { randomBytes, randomFillSync } from "node:crypto"
import { Effect, Layer } from "effect"
import { Ids } from "../ports/Ids.ts"

/**
 * Cryptographically random bytes served from a pooled buffer, refilled from
 * the CSPRNG (`randomFillSync`) when what is left cannot serve a request, as
 * `crypto.randomUUID` does internally: one system call per `size` bytes rather
 * than one (plus two `getpid`) per draw. Every byte is handed out once: a
 * draw takes the bytes after the previous draw's, and a refill overwrites the
 * whole buffer before any of it is served again. Draws larger than a quarter
 * of the pool get bytes of their own.
 * @internal exported for its tests
 */
export class EntropyPool {
  /** The pooled bytes; `take` says where a draw starts. */
  readonly bytes: Buffer
  private used: number
  private readonly fill: (buffer: Buffer) => void

  constructor(size: number, fill: (buffer: Buffer) => void = randomFillSync) {
    this.bytes = Buffer.alloc(size)
    this.used = size // empty: the first draw fills it
    this.fill = fill
  }

  /** The largest draw served from the pool. */
  get draw_max(): number {
    return this.bytes.length >> 2
  }

  /** Reserves `n` fresh bytes of `bytes` (0 <= n <= its length) for one draw and returns where they start. */
  take(n: number): number {
    if (!(n >= 0 && n <= this.bytes.length))
      throw new RangeError(`a draw of ${n} bytes from a pool of ${this.bytes.length}`)
    if (this.used + n > this.bytes.length) {
      this.fill(this.bytes)
      this.used = 0
    }
    const at = this.used
    this.used = at + n
    return at
  }

  /** `n` fresh random bytes in a buffer of their own (never a view of the pool). */
  draw(n: number): Uint8Array {
    // past the pool's share (or not a size at all: randomBytes throws the usual RangeError)
    if (!(n >= 0 && n <= this.draw_max)) return new Uint8Array(randomBytes(n))
    const at = this.take(n)
    return new Uint8Array(this.bytes.subarray(at, at + n))
  }

  /** An unsigned 32-bit integer from 4 fresh bytes. */
  uint32(): number {
    return this.bytes.readUInt32BE(this.take(4))
  }
}

const hexDigits = Buffer.from("0123456789abcdef", "latin1")
const uuidText = Buffer.alloc(36)

/**
 * A random (version 4) UUID from 16 bytes of `pool`, like `crypto.randomUUID()`,
 * but returned as one flat string. `randomUUID` builds its result by 20
 * concatenations, so V8 keeps it as a tree of ~15 cons strings: every id stored
 * in a row then costs that many objects to the garbage collector, and comparing
 * two equal ids (a Map lookup by id) walks both trees character by character.
 * @internal
 */
export const uuidFrom = (pool: EntropyPool): string => {
  const entropy = pool.bytes
  const from = pool.take(16)
  let at = 0
  for (let i = 0; i < 16; i++) {
    let byte = entropy[from + i] as number
    // the version (4) and variant (10xx) bits of RFC 9562
    if (i === 6) byte = (byte & 0x0f) | 0x40
    else if (i === 8) byte = (byte & 0x3f) | 0x80
    if (i === 4 || i === 6 || i === 8 || i === 10) uuidText[at++] = 0x2d // "-"
    uuidText[at++] = hexDigits[byte >> 4] as number
    uuidText[at++] = hexDigits[byte & 0x0f] as number
  }
  return uuidText.toString("latin1")
}

/** The process's pool: UUIDs, 32-bit numbers and secrets all draw from it. */
const pool = new EntropyPool(4096)

/** Cryptographic randomness from Node's `crypto` (CSPRNG), pooled. */
export const layer: Layer.Layer<Ids> = Layer.succeed(
  Ids,
  Ids.of({
    uuid: Effect.sync(() => uuidFrom(pool)),
    random32: Effect.sync(() => pool.uint32()),
    bytes: (n) => Effect.sync(() => pool.draw(n))
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
