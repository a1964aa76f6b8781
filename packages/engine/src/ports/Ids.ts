import { Context, type Effect } from "effect"

/**
 * Identifiers and secrets: the engine's only source of randomness, so tests can
 * make it deterministic.
 */
export class Ids extends Context.Service<
  Ids,
  {
    /**
     * A fresh UUID, never guessable from another one. Ties in the Store's list
     * order (`created_at`, then id) follow the ids: the reference adapter's
     * are time-ordered, so objects created in the same millisecond list
     * in creation order; random (v4) ids are valid too, and leave such ties in
     * a fixed but arbitrary order.
     */
    readonly uuid: Effect.Effect<string>
    /** An unsigned 32-bit random integer. */
    readonly random32: Effect.Effect<number>
    /** `n` random bytes, for secrets and keys. */
    readonly bytes: (n: number) => Effect.Effect<Uint8Array>
  }
>()("@xaalis/engine/ports/Ids") {}
