import { Result } from "effect"
import type { DomainError } from "./Errors.ts"

/**
 * What a state machine step returns: the next state, the domain events the
 * engine turns into webhooks (named as in the spec's event table), and the
 * effects the engine must book (ledger credits, payouts, late funds).
 *
 * Machines are pure: `(state, command, now) -> Result<Transition, DomainError>`.
 * `now` is epoch milliseconds supplied by the caller's clock.
 */
export interface Transition<S, E, F = never> {
  readonly state: S
  readonly events: ReadonlyArray<E>
  readonly effects: ReadonlyArray<F>
}

export type Step<S, E, F = never> = Result.Result<Transition<S, E, F>, DomainError>

export const ok = <S, E = never, F = never>(
  state: S,
  events: ReadonlyArray<E> = [],
  effects: ReadonlyArray<F> = []
): Step<S, E, F> => Result.succeed({ state, events, effects })

export const fail = (error: DomainError): Result.Result<never, DomainError> => Result.fail(error)
