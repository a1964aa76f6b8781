/**
 * Group commit: units of work that queue for the connection at once run one
 * after another in one transaction, each after the first in its own
 * savepoint, and share one COMMIT. What must hold (and fails when grouping is
 * broken):
 * - they do share one COMMIT, and none of them answers before it;
 * - a unit that fails, clashes or conflicts inside a group undoes only its own
 *   writes and reports its own outcome; the others commit;
 * - a failed COMMIT fails every unit of the group with a StoreError and leaves
 *   nothing; so does a transaction SQLite rolled back under the group;
 * - a lone unit commits alone; groups are bounded by `group_commit_max`;
 * - `ledger` never reads a group's uncommitted writes.
 */

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { DatabaseSync } from "node:sqlite"
import { type Doc, type LedgerEntry, Store, type Tx } from "@xaalis/engine"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Result } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SqliteStore } from "../src/index.ts"

const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-groupcommit-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

const doc = (id: string, keys: ReadonlyArray<string> = [`k:${id}`]): Doc => ({
  kind: "invoice",
  id,
  business_id: "biz",
  mode: "live",
  created_at: 1_700_000_000_000,
  version: 1,
  due_at: null,
  keys,
  data: { id }
})

const lines = (transaction_id: string): Array<LedgerEntry> =>
  [5n, -5n].map((amount, i) => ({
    id: `${transaction_id}:${i}`,
    transaction_id,
    business_id: "biz",
    mode: "live",
    account: i === 0 ? "conversion_clearing" : "business_balance",
    currency: "USD",
    amount,
    created_at: 1,
    cause: `test/${transaction_id}`
  }))

/** What each COMMIT held, and the connection (captured at the first COMMIT). */
interface Probe {
  readonly commits: Array<number>
  db: DatabaseSync | undefined
  /** Runs right before the next COMMIT (then forgotten); may throw to fail it. */
  before: ((db: DatabaseSync, units: number) => void) | undefined
}

const fileStore = (probe: Probe, options?: Partial<SqliteStore.SqliteStoreOptions>) =>
  Layer.orDie(
    SqliteStore.layer({
      path: join(dir, `g-${files++}.sqlite`),
      // groups stay open while the test composes them: a loaded machine (CI beside other work) once took more
      // than the default 10 ms between a group's first unit and the next, and split a group of 8 into 1 + 7
      group_open_ms: 60_000,
      ...options,
      hooks: {
        beforeCommit: (db, units) => {
          probe.db = db
          const before = probe.before
          probe.before = undefined
          before?.(db, units)
          probe.commits.push(units)
        }
      }
    })
  )

const newProbe = (): Probe => ({ commits: [], db: undefined, before: undefined })

const run = <A, E>(layer: Layer.Layer<Store>, body: (store: Store["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.provide(Effect.flatMap(Store, body), layer))

const errorOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  if (Exit.isSuccess(exit)) return undefined
  const e = Cause.findError(exit.cause)
  return Result.isSuccess(e) ? e.success : Cause.squash(exit.cause)
}

/**
 * Runs `works` so that they queue together: the first holds the connection
 * (its work waits on a latch) while the others are started and queue behind
 * it; then the latch opens. Every outcome, in order, and how many units had
 * answered when each COMMIT began.
 */
const queued = <A, E>(
  store: Store["Service"],
  probe: Probe,
  works: ReadonlyArray<(tx: Tx) => Effect.Effect<A, E>>,
  after?: ReadonlyArray<Effect.Effect<unknown, unknown>>
) =>
  Effect.gen(function* () {
    const latch = yield* Deferred.make<void>()
    let answered = 0
    const answeredAtCommit: Array<number> = []
    const hook = probe.before
    probe.before = undefined
    const watch = <X, Y>(effect: Effect.Effect<X, Y>) =>
      Effect.exit(effect).pipe(
        Effect.tap(() =>
          Effect.sync(() => {
            answered += 1
          })
        )
      )
    const [first, ...rest] = works
    if (first === undefined) return { exits: [], answeredAtCommit }
    const leader = yield* Effect.forkChild(
      watch(store.transact((tx) => Effect.andThen(Deferred.await(latch), first(tx))))
    )
    for (let i = 0; i < 5; i++) yield* Effect.yieldNow
    const followers = yield* Effect.forEach(rest, (work) => Effect.forkChild(watch(store.transact(work))))
    const others = yield* Effect.forEach(after ?? [], (effect) => Effect.forkChild(Effect.exit(effect)))
    for (let i = 0; i < 5; i++) yield* Effect.yieldNow
    // every COMMIT from now on records how many units had answered when it began
    probe.before = (db, units) => {
      answeredAtCommit.push(answered)
      hook?.(db, units)
    }
    yield* Deferred.succeed(latch, undefined)
    const exits = yield* Effect.forEach([leader, ...followers], Fiber.join)
    const otherExits = yield* Effect.forEach(others, Fiber.join)
    probe.before = undefined
    return { exits, answeredAtCommit, otherExits }
  })

const present = (store: Store["Service"], ids: ReadonlyArray<string>) =>
  store.transact((tx) =>
    Effect.map(
      Effect.forEach(ids, (id) => tx.get("invoice", id)),
      (docs) => ids.filter((_, i) => docs[i] !== undefined)
    )
  )

describe("group commit", () => {
  it("units that queue together share one COMMIT, and none of them answers before it", async () => {
    const probe = newProbe()
    await run(fileStore(probe), (store) =>
      Effect.gen(function* () {
        const ids = Array.from({ length: 8 }, (_, i) => `inv_${i}`)
        const { exits, answeredAtCommit } = yield* queued(
          store,
          probe,
          ids.map((id) => (tx: Tx) => Effect.as(tx.insert(doc(id)), id))
        )
        expect(exits.map((e) => (Exit.isSuccess(e) ? e.value : errorOf(e)))).toStrictEqual(ids)
        expect(probe.commits).toStrictEqual([8])
        expect(answeredAtCommit).toStrictEqual([0])
        expect(yield* present(store, ids)).toStrictEqual(ids)
      })
    )
  })

  it("a unit that fails, clashes or conflicts inside a group undoes only its own writes; the others commit", async () => {
    const probe = newProbe()
    await run(fileStore(probe), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => tx.insert(doc("shared")))
        const readShared = yield* store.transact((tx) => tx.get("invoice", "shared"))
        probe.commits.length = 0
        const bump = (tx: Tx, by: string) =>
          Effect.flatMap(tx.get("invoice", "shared"), (d) => tx.update({ ...(d as Doc), version: 2, data: { by } }))
        const staleUpdate = (tx: Tx, by: string) => tx.update({ ...(readShared as Doc), version: 2, data: { by } })
        const works: ReadonlyArray<(tx: Tx) => Effect.Effect<unknown, unknown>> = [
          (tx) => Effect.andThen(Effect.andThen(tx.insert(doc("a")), tx.post(lines("ta"))), bump(tx, "a")),
          (tx) => tx.insert(doc("b", ["k:b", "taken"])),
          // writes, then fails: its row and its ledger lines must go
          (tx) =>
            Effect.andThen(
              Effect.andThen(tx.insert(doc("c")), tx.post(lines("tc"))),
              Effect.fail({ _tag: "Refused" as const })
            ),
          // clashes on a key an earlier unit of the group claimed, after a write of its own
          (tx) => Effect.andThen(tx.insert(doc("d")), tx.insert(doc("d2", ["taken"]))),
          // updates the row unit a already updated in this transaction, from the version it read before
          (tx) => Effect.andThen(tx.insert(doc("e")), staleUpdate(tx, "e")),
          (tx) => Effect.andThen(tx.insert(doc("f")), tx.post(lines("tf")))
        ]
        const { exits } = yield* queued(store, probe, works)
        expect(probe.commits).toStrictEqual([6])
        expect(exits.map((e) => (Exit.isSuccess(e) ? "ok" : (errorOf(e) as { _tag: string })._tag))).toStrictEqual([
          "ok",
          "ok",
          "Refused",
          "DuplicateKey",
          "VersionConflict",
          "ok"
        ])
        expect(yield* present(store, ["a", "b", "c", "d", "d2", "e", "f"])).toStrictEqual(["a", "b", "f"])
        expect((yield* store.ledger).map((e) => e.transaction_id)).toStrictEqual(["ta", "ta", "tf", "tf"])
        const shared = yield* store.transact((tx) => tx.get("invoice", "shared"))
        expect({ version: shared?.version, data: shared?.data }).toStrictEqual({ version: 2, data: { by: "a" } })
        expect((yield* store.transact((tx) => tx.getByKey("invoice", "taken")))?.id).toBe("b")
      })
    )
  })

  it("a failed COMMIT fails every unit of the group with a StoreError and leaves nothing; the store goes on", async () => {
    const probe = newProbe()
    await run(fileStore(probe), (store) =>
      Effect.gen(function* () {
        const ids = Array.from({ length: 5 }, (_, i) => `inv_${i}`)
        // a real COMMIT failure: a deferred foreign key violation is checked at COMMIT, which refuses
        probe.before = (db) => {
          db.exec("PRAGMA defer_foreign_keys = ON")
          db.exec("INSERT INTO doc_keys (kind, key, id) VALUES ('invoice', 'orphan', 'no such row')")
        }
        const { exits, answeredAtCommit } = yield* queued(
          store,
          probe,
          ids.map((id, i) =>
            i === 2
              ? (tx: Tx) => Effect.andThen(tx.insert(doc(id)), Effect.fail({ _tag: "Refused" as const }))
              : (tx: Tx) => Effect.andThen(tx.insert(doc(id)), tx.post(lines(`t${id}`)))
          )
        )
        expect(answeredAtCommit).toStrictEqual([0])
        for (const exit of exits) {
          expect(errorOf(exit)).toMatchObject({ _tag: "StoreError" })
          expect((errorOf(exit) as Error).message).toContain("commit failed")
        }
        expect(yield* present(store, ids)).toStrictEqual([])
        expect(yield* store.ledger).toStrictEqual([])
        expect(yield* store.transact((tx) => tx.getByKey("invoice", "orphan"))).toBeUndefined()
        // nothing is left open: the same units now commit
        const again = yield* Effect.forEach(ids, (id) => Effect.exit(store.transact((tx) => tx.insert(doc(id)))), {
          concurrency: "unbounded"
        })
        expect(again.every(Exit.isSuccess)).toBe(true)
        expect(yield* present(store, ids)).toStrictEqual(ids)
      })
    )
  })

  it("a transaction SQLite rolled back under a group fails every unit in it, and nothing is written outside it", async () => {
    const probe = newProbe()
    await run(fileStore(probe), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => tx.insert(doc("before")))
        const db = probe.db as DatabaseSync
        const ids = ["a", "b", "c", "d"]
        const { exits } = yield* queued(
          store,
          probe,
          ids.map((id) =>
            id === "c"
              ? // as SQLite does on some I/O errors: the whole transaction is rolled back under the unit,
                // which carries on writing
                (tx: Tx) =>
                  Effect.andThen(
                    Effect.sync(() => db.exec("ROLLBACK")),
                    Effect.andThen(
                      Effect.ignore(tx.insert(doc("c"))),
                      Effect.andThen(Effect.ignore(tx.insert(doc("c2"))), tx.post(lines("tc")))
                    )
                  )
              : (tx: Tx) => tx.insert(doc(id))
          )
        )
        // a, b and c were in the lost transaction; d, after them, began a new one
        expect(exits.map((e) => (errorOf(e) as { _tag?: string } | undefined)?._tag)).toStrictEqual([
          "StoreError",
          "StoreError",
          "StoreError",
          undefined
        ])
        expect(yield* present(store, ["before", ...ids, "c2"])).toStrictEqual(["before", "d"])
        expect(yield* store.ledger).toStrictEqual([])
        yield* store.transact((tx) => tx.insert(doc("after")))
        expect(yield* present(store, ["after"])).toStrictEqual(["after"])
      })
    )
  })

  it("a lone unit commits alone; groups never exceed group_commit_max", async () => {
    const probe = newProbe()
    await run(fileStore(probe, { group_commit_max: 4 }), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => tx.insert(doc("alone")))
        expect(probe.commits).toStrictEqual([1])
        probe.commits.length = 0
        const ids = Array.from({ length: 10 }, (_, i) => `inv_${i}`)
        const { exits } = yield* queued(
          store,
          probe,
          ids.map((id) => (tx: Tx) => tx.insert(doc(id)))
        )
        expect(exits.every(Exit.isSuccess)).toBe(true)
        expect(probe.commits).toStrictEqual([4, 4, 2])
        expect(yield* present(store, ids)).toStrictEqual(ids)
      })
    )
  })

  it("group_commit_max 1 turns it off: one transaction per unit", async () => {
    const probe = newProbe()
    await run(fileStore(probe, { group_commit_max: 1 }), (store) =>
      Effect.gen(function* () {
        const ids = Array.from({ length: 5 }, (_, i) => `inv_${i}`)
        const { exits } = yield* queued(
          store,
          probe,
          ids.map((id) => (tx: Tx) => tx.insert(doc(id)))
        )
        expect(exits.every(Exit.isSuccess)).toBe(true)
        expect(probe.commits).toStrictEqual([1, 1, 1, 1, 1])
      })
    )
  })

  it("an interrupted unit inside a group is rolled back to its savepoint; the others commit", async () => {
    const probe = newProbe()
    await run(fileStore(probe), (store) =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const latch = yield* Deferred.make<void>()
        const first = yield* Effect.forkChild(
          store.transact((tx) => Effect.andThen(Deferred.await(latch), tx.insert(doc("a"))))
        )
        for (let i = 0; i < 5; i++) yield* Effect.yieldNow
        const stuck = yield* Effect.forkChild(
          store.transact((tx) =>
            Effect.andThen(Effect.andThen(tx.insert(doc("b")), Deferred.succeed(started, undefined)), Effect.never)
          )
        )
        const last = yield* Effect.forkChild(store.transact((tx) => tx.insert(doc("c"))))
        for (let i = 0; i < 5; i++) yield* Effect.yieldNow
        yield* Deferred.succeed(latch, undefined)
        yield* Deferred.await(started)
        yield* Fiber.interrupt(stuck)
        expect(Exit.isSuccess(yield* Fiber.await(first))).toBe(true)
        expect(Exit.isSuccess(yield* Fiber.await(last))).toBe(true)
        expect(probe.commits).toStrictEqual([3])
        expect(yield* present(store, ["a", "b", "c"])).toStrictEqual(["a", "c"])
      })
    )
  })

  it("ledger waits for the COMMIT of the group ahead of it and never reads uncommitted writes", async () => {
    const probe = newProbe()
    await run(fileStore(probe), (store) =>
      Effect.gen(function* () {
        const { exits, otherExits } = yield* queued(
          store,
          probe,
          ["a", "b", "c"].map((t) => (tx: Tx) => tx.post(lines(t))),
          [store.ledger, store.transact((tx) => tx.post(lines("d")))]
        )
        expect(exits.every(Exit.isSuccess)).toBe(true)
        const [read, later] = otherExits ?? []
        const entries = read !== undefined && Exit.isSuccess(read) ? (read.value as ReadonlyArray<LedgerEntry>) : []
        expect(entries.map((e) => e.transaction_id)).toStrictEqual(["a", "a", "b", "b", "c", "c"])
        expect(later !== undefined && Exit.isSuccess(later)).toBe(true)
        expect(probe.commits).toStrictEqual([3, 1])
      })
    )
  })
})

describe("a long queue", () => {
  // Found by a two-process audit: `passOn` woke the next unit inside its own call, and a unit that ended at
  // once (here: a read; there: a BEGIN refused while the other process held the lock) passed the connection on
  // inside that call, and so on down the queue: thousands of waiters overflowed the stack inside `passOn`, which
  // left the transaction open and the write lock held for good.
  it("hands the connection down 20,000 waiting units without growing the stack", async () => {
    const probe = newProbe()
    const store = fileStore(probe)
    const reads = Array.from({ length: 20_000 }, () => (tx: Tx) => tx.get("invoice", "none"))
    const { exits } = await run(store, (s) => queued(s, probe, reads))
    expect(exits.filter(Exit.isFailure).map(errorOf)).toEqual([])
    expect(exits.length).toBe(20_000)
    // the store still works afterwards: a write commits and reads back
    await run(store, (s) => s.transact((tx) => tx.insert(doc("after"))))
    expect(await run(store, (s) => s.transact((tx) => tx.get("invoice", "after")))).toMatchObject({ id: "after" })
  }, 30_000)
})
