/**
 * A process that keeps the SQLite file's write lock busy (multiprocess.test.ts):
 * opens the file store, then runs small units of work back to back, `lanes`
 * at a time (more than a group holds: groups commit full, with units waiting),
 * for the given number of ms; says `busy` once its first unit committed and
 * `done` (with how many units it ran) at the end.
 *
 *     node --conditions=@xaalis/source hog.ts <db path> <ms> <lanes>
 */

import { Store } from "@xaalis/engine"
import { Effect, ManagedRuntime } from "effect"
import { SqliteStore } from "../../src/index.ts"

const [path, msText, lanesText] = process.argv.slice(2)
if (path === undefined || msText === undefined || lanesText === undefined) {
  throw new Error("usage: hog.ts <db path> <ms> <lanes>")
}
const runtime = ManagedRuntime.make(SqliteStore.layer({ path, synchronous: "NORMAL" }))

const unit = (store: Store["Service"], id: string) =>
  store.transact((tx) =>
    tx.insert({
      kind: "invoice",
      id,
      business_id: "hog",
      mode: "live",
      created_at: 1,
      version: 1,
      due_at: null,
      keys: [],
      data: { id }
    })
  )

const work = Effect.gen(function* () {
  const store = yield* Store
  yield* unit(store, "hog_first")
  process.send?.({ type: "busy" })
  const end = performance.now() + Number(msText)
  let n = 0
  const lane = Effect.whileLoop({
    while: () => performance.now() < end,
    body: () => unit(store, `hog_${n++}`),
    step: () => {}
  })
  yield* Effect.all(
    Array.from({ length: Number(lanesText) }, () => lane),
    { concurrency: "unbounded", discard: true }
  )
  return n
})

runtime
  .runPromise(work)
  .then(async (units) => {
    await runtime.dispose()
    process.send?.({ type: "done", units }, () => process.disconnect())
  })
  .catch((e: unknown) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(1)
  })
