import type { Layer } from "effect"
import { expect } from "vitest"
import type { PortCheck } from "../src/index.ts"

/** The check of `checks` whose title contains `part` (exactly one). */
export const checkAbout = <R>(checks: ReadonlyArray<PortCheck<R>>, part: string): PortCheck<R> => {
  const found = checks.filter((c) => c.title.includes(part))
  if (found.length !== 1) throw new Error(`${found.length} checks about "${part}"`)
  return found[0]!
}

/** The message of an error and of its causes (fast-check puts the failed expectation in `cause`). */
const messages = (e: unknown): string => {
  const parts: Array<string> = []
  for (let at: unknown = e, depth = 0; at !== undefined && at !== null && depth < 5; depth++) {
    parts.push(at instanceof Error ? at.message : String(at))
    at = at instanceof Error ? at.cause : undefined
  }
  return parts.join("\n")
}

/**
 * Runs `check` on a broken adapter and asserts that the suite reports it: the
 * check rejects (it neither passes nor skips), naming the broken promise.
 */
export const expectCheckFails = async <R>(
  check: PortCheck<R>,
  makeLayer: () => Layer.Layer<R, unknown>,
  message: RegExp
): Promise<void> => {
  const settled = await check.run(makeLayer).then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => ({ ok: false as const, error })
  )
  if (settled.ok) {
    expect.fail(`the check "${check.title}" did not fail on a broken adapter: ${JSON.stringify(settled.result)}`)
  }
  expect(messages(settled.error)).toMatch(message)
}

/** Runs every check on a sound adapter: each must pass (not skip). */
export const expectAllPass = async <R>(
  checks: ReadonlyArray<PortCheck<R>>,
  makeLayer: () => Layer.Layer<R, unknown>
): Promise<void> => {
  for (const check of checks) expect(await check.run(makeLayer), check.title).toBe("passed")
}
