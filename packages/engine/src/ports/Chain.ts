import type { Quote } from "@xaalis/core"
import { Context, Data, type Effect, type Stream } from "effect"

/** A confirmed stablecoin transfer seen on a chain. */
export interface ConfirmedTransfer {
  readonly network: Quote.Network
  readonly coin: Quote.Coin
  readonly to_address: string
  /** USD units of the coin, 6 places. */
  readonly amount: bigint
  readonly tx_hash: string
  readonly log_index: number
}

export class ChainError extends Data.TaggedError("ChainError")<{ readonly message: string }> {}

/**
 * The chains. `issueAddress` gives a deposit address that is unique to one
 * conversion or payment request on one network and coin; `confirmed` is the feed
 * of confirmed transfers (at-least-once: the engine applies each transfer at most
 * once by network + tx hash + log index).
 */
export class Chain extends Context.Service<
  Chain,
  {
    readonly issueAddress: (input: {
      readonly network: Quote.Network
      readonly coin: Quote.Coin
      readonly owner: string
    }) => Effect.Effect<string, ChainError>
    readonly confirmed: Stream.Stream<ConfirmedTransfer>
  }
>()("@xaalis/engine/ports/Chain") {}
