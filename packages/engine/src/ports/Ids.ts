import { Context, type Effect } from "effect"

/**
 * Identifiers and secrets: the engine's only source of randomness, so tests can
 * make it deterministic.
 */
export class Ids extends Context.Service<
  Ids,
  {
    /** A random UUID (v4). */
    readonly uuid: Effect.Effect<string>
    /** An unsigned 32-bit random integer. */
    readonly random32: Effect.Effect<number>
    /** `n` random bytes, for secrets and keys. */
    readonly bytes: (n: number) => Effect.Effect<Uint8Array>
  }
>()("@xaalis/engine/ports/Ids") {}
