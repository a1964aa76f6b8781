/**
 * What the port conformance suites (`ratesConformance`, `payoutsConformance`,
 * `notifierConformance`) share: a check is a plain function of the adapter's
 * layer, so it can be registered as a vitest test by the suite or run directly
 * (to show, for instance, that a broken adapter fails it).
 */

import { Cause, Duration, Effect, Exit, type Layer, Option, Result, type Scope } from "effect"
import { describe, expect, it } from "vitest"

/** How a check ended without failing: it held, or the layer lacks the harness it needs. */
export type CheckResult = "passed" | { readonly skipped: string }

/**
 * One check of a port suite. `run` builds `makeLayer()` afresh and resolves
 * with `"passed"` when the adapter keeps the contract, with `{ skipped }` when
 * the layer does not provide the optional harness the check needs, and rejects
 * (with the failed expectation) when the adapter breaks it.
 */
export interface PortCheck<ROut> {
  readonly title: string
  readonly run: (makeLayer: () => Layer.Layer<ROut, unknown>) => Promise<CheckResult>
  /** vitest timeout of the check, ms. */
  readonly timeout: number
}

/** Options every port suite takes. */
export interface PortSuiteOptions {
  /** fast-check runs of each property (default depends on the suite; see `runsFromEnv`). */
  readonly runs?: number | undefined
  /** Replays a failure of a property: the `seed` and `path` fast-check printed. */
  readonly seed?: number | undefined
  readonly path?: string | undefined
  /**
   * Checks to leave out, each named by a part of its title, for what your
   * adapter cannot do (a notifier whose receivers cannot hang): otherwise such
   * a check is reported skipped. Each part must name exactly one check.
   */
  readonly omit?: ReadonlyArray<string> | undefined
}

/** `checks` without those `omit` names; a part naming no check, or several, throws (a typo must not pass silently). */
export const withoutOmitted = <C extends { readonly title: string }>(
  checks: ReadonlyArray<C>,
  omit: ReadonlyArray<string> | undefined
): ReadonlyArray<C> => {
  if (omit === undefined || omit.length === 0) return checks
  for (const part of omit) {
    const n = checks.filter((c) => c.title.includes(part)).length
    if (n !== 1) throw new Error(`omit: "${part}" names ${n} checks; name exactly one by a part of its title`)
  }
  return checks.filter((c) => !omit.some((part) => c.title.includes(part)))
}

/** The fast-check parameters of a property run by a check. */
export const propertyParameters = (options: PortSuiteOptions | undefined, defaultRuns: number) => ({
  numRuns: Math.max(1, options?.runs ?? defaultRuns),
  ...(options?.seed === undefined ? {} : { seed: options.seed }),
  ...(options?.path === undefined ? {} : { path: options.path })
})

/** Runs one check's body on a fresh build of the layer, in a scope closed at its end. */
export const runCheck = <ROut>(
  makeLayer: () => Layer.Layer<ROut, unknown>,
  body: Effect.Effect<CheckResult, unknown, ROut | Scope.Scope>
): Promise<CheckResult> => Effect.runPromise(Effect.scoped(body).pipe(Effect.provide(makeLayer())))

export const passed: Effect.Effect<CheckResult> = Effect.succeed("passed")

export const skipped = (reason: string): Effect.Effect<CheckResult> => Effect.succeed({ skipped: reason })

/** Registers `checks` as a vitest `describe` block; a check whose harness is missing is reported as skipped. */
export const registerChecks = <ROut>(
  label: string,
  checks: ReadonlyArray<PortCheck<ROut>>,
  makeLayer: () => Layer.Layer<ROut, unknown>
): void => {
  describe(label, () => {
    for (const check of checks) {
      it(
        check.title,
        async (context) => {
          const result = await check.run(makeLayer)
          if (result !== "passed") context.skip(result.skipped)
        },
        check.timeout
      )
    }
  })
}

// ---------------------------------------------------------------------------
// Outcomes of adapter calls

/** How one call of an adapter ended: a value, a typed failure, a defect (or an interruption), or no end in time. */
export type Outcome<A> =
  | { readonly _tag: "Success"; readonly value: A }
  | { readonly _tag: "Failure"; readonly error: unknown }
  | { readonly _tag: "Defect"; readonly cause: string }
  | { readonly _tag: "Late"; readonly after_ms: number }

/**
 * Runs one adapter call and reports how it ended, never failing: a throw when
 * the call is made counts as a defect; with `deadlineMs`, a call that has not
 * ended by then is interrupted and reported `Late` (the live clock).
 */
export const outcomeOf = <A, E, R>(
  call: () => Effect.Effect<A, E, R>,
  deadlineMs?: number
): Effect.Effect<Outcome<A>, never, R> => {
  const exited = Effect.exit(Effect.suspend(call))
  const timed: Effect.Effect<Option.Option<Exit.Exit<A, E>>, never, R> = deadlineMs === undefined
    ? Effect.map(exited, Option.some)
    : Effect.timeoutOption(exited, Duration.millis(deadlineMs))
  return Effect.map(timed, (exit): Outcome<A> => {
    if (Option.isNone(exit)) return { _tag: "Late", after_ms: deadlineMs ?? 0 }
    if (Exit.isSuccess(exit.value)) return { _tag: "Success", value: exit.value.value }
    const error = Cause.findError(exit.value.cause)
    if (Result.isSuccess(error)) return { _tag: "Failure", error: error.success }
    return { _tag: "Defect", cause: Cause.pretty(exit.value.cause) }
  })
}

export const tagOf = (u: unknown): unknown =>
  typeof u === "object" && u !== null && "_tag" in u ? (u as { readonly _tag: unknown })._tag : undefined

/** A JSON-ish rendering for messages (bigints as `123n`). */
export const show = (u: unknown): string => {
  try {
    return JSON.stringify(u, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(u)
  } catch {
    return String(u)
  }
}

/** Describes an outcome that is not what the contract allows. */
export const describeOutcome = (o: Outcome<unknown>): string => {
  switch (o._tag) {
    case "Success":
      return `succeeded with ${show(o.value)}`
    case "Failure":
      return `failed with ${show(o.error)}`
    case "Defect":
      return `died (a defect, not a typed failure): ${o.cause}`
    case "Late":
      return `had not ended after ${o.after_ms} ms`
  }
}

/** The value of a successful outcome; any other outcome fails the check with `what` and a description. */
export const expectSuccess = <A>(o: Outcome<A>, what: string): A => {
  if (o._tag !== "Success") expect.fail(`${what}: expected a success, but the call ${describeOutcome(o)}`)
  return o.value
}

/**
 * Checks that `o` is the port's typed failure `tag` with a string `message`
 * (compared by `_tag`, never by `instanceof`: the adapter may load another copy
 * of the engine).
 */
export const expectTypedFailure = (o: Outcome<unknown>, tag: string, what: string): void => {
  if (o._tag !== "Failure") expect.fail(`${what}: expected a ${tag}, but the call ${describeOutcome(o)}`)
  expect(tagOf(o.error), `${what}: the failure's _tag`).toBe(tag)
  expect(typeof (o.error as { readonly message?: unknown }).message, `${what}: the ${tag} has a message`).toBe("string")
}

/** Resolves `Effect.serviceOption` to `undefined` when absent. */
export const optional = <S>(option: Option.Option<S>): S | undefined => Option.getOrUndefined(option)
