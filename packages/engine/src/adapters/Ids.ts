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

/**
 * Time-ordered UUIDs in one process's sequence, laid out as UUIDv7 (RFC 9562)
 * but carrying the version digit 4, as "COMB" ids do: 48 bits of Unix
 * milliseconds, then a 12-bit sequence within the millisecond (RFC 9562 §6.2,
 * method 1, the counter's start drawn at random below its midpoint at each
 * new millisecond), then 62 random bits. Each id is greater than the one
 * before it (as bytes, and as text: lowercase hex), even when the wall clock
 * steps back or 2,048+ ids fall in one millisecond (the time part then runs
 * ahead of the clock until the clock catches up). So objects listed newest
 * first by `created_at`, then by id (the Store port's order), come back in
 * creation order when they were created in the same millisecond. The 62
 * random bits keep ids unguessable from one another (a hosted page's URL
 * carries its object's id). Why the digit 4 and not 7: a client that checks
 * ids with the common RFC 4122 pattern (versions 1 to 5) must take them.
 * @internal
 */
export const makeTimeOrderedUuid = (pool: EntropyPool, now: () => number = Date.now): (() => string) => {
  let lastMs = -1
  let seq = 0
  return () => {
    const entropy = pool.bytes
    const from = pool.take(16)
    let ms = now()
    if (ms > lastMs) {
      lastMs = ms
      // the sequence starts low enough to leave room for 2,048 more ids in this millisecond
      seq = (((entropy[from + 6] as number) << 8) | (entropy[from + 7] as number)) & 0x7ff
    } else {
      ms = lastMs
      seq += 1
      if (seq > 0xfff) {
        ms = lastMs += 1
        seq = 0
      }
    }
    const high = Math.floor(ms / 0x1_0000_0000)
    const low = ms >>> 0
    let at = 0
    for (let i = 0; i < 16; i++) {
      let byte: number
      if (i < 2) byte = (high >>> (8 * (1 - i))) & 0xff
      else if (i < 6) byte = (low >>> (8 * (5 - i))) & 0xff
      else if (i === 6)
        byte = 0x40 | (seq >>> 8) // the version digit 4, then the sequence's top 4 bits
      else if (i === 7) byte = seq & 0xff
      else if (i === 8)
        byte = ((entropy[from + i] as number) & 0x3f) | 0x80 // the variant (10xx)
      else byte = entropy[from + i] as number
      if (i === 4 || i === 6 || i === 8 || i === 10) uuidText[at++] = 0x2d // "-"
      uuidText[at++] = hexDigits[byte >> 4] as number
      uuidText[at++] = hexDigits[byte & 0x0f] as number
    }
    return uuidText.toString("latin1")
  }
}

/** The process's pool: UUIDs, 32-bit numbers and secrets all draw from it. */
const pool = new EntropyPool(4096)
/** The process's object ids (see `makeTimeOrderedUuid`). */
const timeOrderedUuid = makeTimeOrderedUuid(pool)

/** Cryptographic randomness from Node's `crypto` (CSPRNG), pooled; ids time-ordered (`makeTimeOrderedUuid`). */
export const layer: Layer.Layer<Ids> = Layer.succeed(
  Ids,
  Ids.of({
    uuid: Effect.sync(timeOrderedUuid),
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
