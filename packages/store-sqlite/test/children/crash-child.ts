/**
 * The victim of crash.test.ts: opens the file store, creates a business and
 * conversions, then applies chain transfers (4 at a time) until it is killed,
 * re-reporting some earlier ones. It prints, on stdout:
 *
 *     business <id>        once the business exists
 *     ready                once the conversions exist (the parent starts its kill timer)
 *     ack <tx_hash>        after the transfer's unit of work committed (applied: true)
 *
 *     node --conditions=@xaalis/source crash-child.ts <db path> <round> <seed>
 */

import { writeSync } from "node:fs"
import { Effect, ManagedRuntime } from "effect"
import { SqliteStore } from "../../src/index.ts"
import { prng } from "../processes.ts"
import { applyTransfer, business, conversion, engineOn } from "../support.ts"
import { AMOUNT, CONVERSIONS, hashOf, MAX_TRANSFERS } from "./crash-plan.ts"

const [path, round, seed] = process.argv.slice(2)
if (path === undefined || round === undefined || seed === undefined) {
  throw new Error("usage: crash-child.ts <db path> <round> <seed>")
}
const random = prng(Number(seed))
/** Synchronous writes: a line is out before the next unit of work starts. */
const say = (line: string) => writeSync(1, `${line}\n`)

const runtime = ManagedRuntime.make(engineOn(SqliteStore.layer({ path })))

const main = Effect.gen(function* () {
  const biz = yield* business
  say(`business ${biz.id}`)
  const conversions = yield* Effect.forEach(Array.from({ length: CONVERSIONS }), () => conversion(biz.live))
  say("ready")
  const pick = () => conversions[Math.floor(random() * conversions.length)] as (typeof conversions)[number]
  // each transfer: a new one (90%) or a re-report of an earlier one, which must not apply again
  const plan = Array.from({ length: MAX_TRANSFERS }, (_, i) => {
    const again = i > 0 && random() < 0.1
    return { i: again ? Math.floor(random() * i) : i, again, to: pick().address }
  })
  const sent = new Map<number, string>()
  yield* Effect.forEach(
    plan,
    ({ i, again, to }) => {
      const address = again ? (sent.get(i) ?? to) : to
      if (!again) sent.set(i, to)
      return Effect.map(applyTransfer(address, AMOUNT, hashOf(round, i)), (outcome) => {
        if (outcome.applied) say(`ack ${outcome.tx_hash}`)
      })
    },
    { concurrency: 4, discard: true }
  )
})

runtime.runPromise(main).then(
  () => runtime.dispose(),
  (e: unknown) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(1)
  }
)
