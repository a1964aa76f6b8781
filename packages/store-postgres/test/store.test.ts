import { randomBytes } from "node:crypto"
import { Decimal } from "@xaalis/core"
import {
  Businesses,
  Conversions,
  type Doc,
  IdsAdapter,
  MemoryNotifier,
  Sandbox,
  Store,
  type StoreError,
  Transfers,
  unbalanced
} from "@xaalis/engine"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Result } from "effect"
import { Pool } from "pg"
import { describe, expect, it } from "vitest"
import { blank, fromQuery, isConnectionError, secretsOf, toStoreError } from "../src/errors.ts"
import { PostgresStore } from "../src/index.ts"
import { DATABASE_URL, withPostgres } from "./pg.ts"
import { silentRelay } from "./relay.ts"

type StoreShape = (typeof Store)["Service"]

const getStore = Effect.gen(function* () {
  return yield* Store
})

const withStore = <A, E>(layer: Layer.Layer<Store, unknown>, body: (store: StoreShape) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.provide(Effect.flatMap(getStore, body), layer))

const failureOf = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(self), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const e = Cause.findError(exit.cause)
    if (Result.isFailure(e)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
    return e.success
  })

const tagOf = (u: unknown) => (u as { _tag?: unknown } | null)?._tag

const doc = (over: Partial<Doc> & Pick<Doc, "id">): Doc => ({
  kind: "invoice",
  business_id: "biz_a",
  mode: "test",
  created_at: 1_700_000_000_000,
  version: 1,
  due_at: null,
  keys: [],
  data: null,
  ...over
})

/** `url` with one more query parameter. */
const withParam = (url: string, name: string, value: string) => {
  const u = new URL(url)
  u.searchParams.set(name, value)
  return u.toString()
}

describe("error messages", () => {
  it("serialization failures and deadlocks are VersionConflict; other failures StoreError in our words", () => {
    const target = { kind: "conversion", id: "c1" } as const
    expect(tagOf(fromQuery(Object.assign(new Error("x"), { code: "40001" }), "w", target, []))).toBe("VersionConflict")
    expect(fromQuery(Object.assign(new Error("x"), { code: "40P01" }), "w", target, [])).toMatchObject(target)
    const e = toStoreError(
      Object.assign(new Error('password authentication failed for user "alice" (pw hunter2)'), { code: "28P01" }),
      "connecting",
      ["hunter2", "alice"]
    )
    expect(e.message).toBe("connecting failed: PostgreSQL refused it (SQLSTATE 28P01)")
    expect(String((e.cause as Error).message)).not.toMatch(/hunter2|alice/)
    // a user name is blanked where it stands alone, not inside other words (a short one mangled messages);
    // the password wherever it appears
    const secrets = secretsOf("postgres://u:p%40ss@db.internal:5432/x")
    const short = toStoreError(new Error('timeout due to connection timeout for user "u" with p@ss'), "x", secrets)
    expect(String((short.cause as Error).message)).toBe('timeout due to connection timeout for user "***" with ***')
    expect(blank("alice: alice2 malice alice_x", secretsOf("postgres://alice@h/db"))).toBe("***: alice2 malice alice_x")
    expect(blank("xhunter2x", secretsOf("postgres://alice:hunter2@h/db"))).toBe("x***x")
    // node-postgres gave up waiting: the connection's answers are out of step with its statements
    expect(isConnectionError(new Error("Query read timeout"))).toBe(true)
    expect(isConnectionError(Object.assign(new Error("x"), { code: "23505" }))).toBe(false)
    const lost = toStoreError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), "x", [])
    expect(lost.message).toBe("x failed: PostgreSQL is unreachable or the connection was lost (ECONNREFUSED)")
  })

  it("an unreachable server is a StoreError that names no credentials", async () => {
    const secret = `pw-${randomBytes(6).toString("hex")}`
    const url = `postgres://alice_${secret}:${secret}@127.0.0.1:1/test`
    const exit = await Effect.runPromiseExit(Effect.provide(getStore, PostgresStore.layer({ connectionString: url })))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isSuccess(exit)) return
    const error = Result.getOrUndefined(Cause.findError(exit.cause)) as StoreError | undefined
    expect(tagOf(error)).toBe("StoreError")
    expect(error?.message).toMatch(/unreachable/)
    const everything = `${error?.message} ${String(error?.cause)} ${JSON.stringify(error)} ${Cause.pretty(exit.cause)}`
    expect(everything).not.toContain(secret)
  })
})

withPostgres("PostgresStore specifics", (db) => {
  const layer = () => db.store()

  it("a refused user is a StoreError that names neither the user nor the password", async () => {
    const secret = randomBytes(6).toString("hex")
    const u = new URL(DATABASE_URL)
    u.username = `nobody_${secret}`
    u.password = `pw_${secret}`
    const exit = await Effect.runPromiseExit(
      Effect.provide(getStore, PostgresStore.layer({ connectionString: u.toString() }))
    )
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isSuccess(exit)) return
    const error = Result.getOrUndefined(Cause.findError(exit.cause)) as StoreError | undefined
    expect(error?.message).toMatch(/SQLSTATE 28/)
    expect(`${error?.message} ${String(error?.cause)} ${Cause.pretty(exit.cause)}`).not.toContain(secret)
  })

  it("each statement has a client-side timeout by default (30 s), which queryTimeoutMs sets or turns off", async () => {
    const timeoutOf = (options: Partial<PostgresStore.PostgresStoreOptions>) =>
      Effect.runPromise(
        Effect.scoped(
          Effect.map(
            PostgresStore.openMigratedPool({ connectionString: DATABASE_URL, schema: db.schema, ...options }),
            (pool) => {
              const { query_timeout, statement_timeout, lock_timeout } = (
                pool as unknown as {
                  options: { query_timeout?: number; statement_timeout?: number; lock_timeout?: number }
                }
              ).options
              return { query_timeout, statement_timeout, lock_timeout }
            }
          )
        )
      )
    expect(PostgresStore.defaultQueryTimeoutMs).toBe(30_000)
    // the server's lock_timeout a little shorter: it cancels a lock wait before the client gives up on it; no
    // statement_timeout, which would also cut COMMIT's wait for a synchronous standby (and report it done)
    const none = { statement_timeout: undefined }
    expect(await timeoutOf({})).toStrictEqual({ ...none, query_timeout: 30_000, lock_timeout: 29_000 })
    expect(await timeoutOf({ queryTimeoutMs: 1_500 })).toStrictEqual({
      ...none,
      query_timeout: 1_500,
      lock_timeout: 1_350
    })
    expect(await timeoutOf({ queryTimeoutMs: 0 })).toStrictEqual({ ...none, query_timeout: 0, lock_timeout: undefined })
  })

  it("a statement waiting on a lock past the timeout is cancelled by PostgreSQL, not only abandoned by the client", async () => {
    const layer = PostgresStore.layer({ connectionString: DATABASE_URL, schema: db.schema, queryTimeoutMs: 1_000 })
    const holder = new Pool({ connectionString: DATABASE_URL, max: 1, options: `-c search_path=${db.schema}` })
    holder.on("error", () => undefined)
    try {
      await withStore(layer, (store) =>
        Effect.gen(function* () {
          yield* Effect.promise(() => db.truncate())
          const row = doc({ id: "inv_locked", keys: ["locked"] })
          yield* store.transact((tx) => tx.insert(row))
          const client = yield* Effect.promise(() => holder.connect())
          try {
            yield* Effect.promise(() => client.query("BEGIN"))
            yield* Effect.promise(() => client.query("SELECT 1 FROM docs WHERE id = 'inv_locked' FOR UPDATE"))
            const started = Date.now()
            const error = yield* failureOf(
              store.transact((tx) => tx.update({ ...row, version: 2, data: { changed: true } }))
            )
            expect(tagOf(error)).toBe("StoreError")
            expect(Date.now() - started).toBeLessThan(2_000)
            // nothing of the store's is left waiting on the lock in the server
            const waiting = yield* Effect.promise(() =>
              db.query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'xaalis' AND wait_event_type = 'Lock' AND datname = current_database()"
              )
            )
            expect(waiting).toStrictEqual([])
          } finally {
            yield* Effect.promise(() => client.query("ROLLBACK"))
            client.release()
          }
          // the row can be changed again at once
          yield* store.transact((tx) => tx.update({ ...row, version: 2, data: { changed: true } }))
        })
      )
    } finally {
      await holder.end()
    }
  })

  it("a database gone silent (no reset) fails the unit within queryTimeoutMs, and the connection is not reused", async () => {
    const relay = await silentRelay(DATABASE_URL)
    try {
      // one connection, so that a connection left in the pool out of step would serve the next unit
      const silentLayer = PostgresStore.layer({
        connectionString: relay.url,
        schema: db.schema,
        poolMax: 1,
        queryTimeoutMs: 700
      })
      await withStore(silentLayer, (store) =>
        Effect.gen(function* () {
          yield* Effect.promise(() => db.truncate())
          yield* store.transact((tx) => tx.insert(doc({ id: "inv_before", keys: ["before"] })))
          relay.silence()
          const started = Date.now()
          const error = yield* failureOf(store.transact((tx) => tx.insert(doc({ id: "inv_lost", keys: ["lost"] }))))
          const took = Date.now() - started
          expect(tagOf(error)).toBe("StoreError")
          // the statement's timeout, not also a ROLLBACK's on the same silent connection
          expect(took).toBeLessThan(1_400)
          relay.resume()
          // a fresh connection: each unit sees the rows as they are (the lost insert was never committed)
          for (let i = 0; i < 5; i++) {
            expect((yield* store.transact((tx) => tx.get("invoice", "inv_before")))?.id).toBe("inv_before")
            expect(yield* store.transact((tx) => tx.get("invoice", "inv_lost"))).toBeUndefined()
            yield* store.transact((tx) => tx.insert(doc({ id: `inv_after_${i}`, keys: [`after_${i}`] })))
          }
        })
      )
      expect((await db.query("SELECT count(*)::int AS n FROM docs WHERE id LIKE 'inv_after_%'"))[0]?.n).toBe(5)
    } finally {
      await relay.close()
    }
  })

  it("data round-trips as text: key order, NUL and lone surrogates, $-keys, __proto__, bigints", () =>
    withStore(layer(), (store) =>
      Effect.gen(function* () {
        const data = JSON.parse('{"zeta":1,"alpha":2,"__proto__":{"x":1},"$b":"not a bigint","mid":3}') as Record<
          string,
          unknown
        >
        data.amount = 2n ** 100n + 7n
        data.text = "nul\u0000 lone\ud800 pair😀 dalasi Kër"
        data.list = [{ b: 1, a: 2 }, -(2n ** 64n), null]
        const row = doc({ id: "inv_text", data })
        yield* store.transact((tx) => tx.insert(row))
        const read = yield* store.transact((tx) => tx.get("invoice", "inv_text"))
        expect(read).toStrictEqual(row)
        const back = read?.data as Record<string, unknown>
        expect(Object.keys(back)).toStrictEqual(Object.keys(data))
        expect(Object.keys((back.list as Array<object>)[0] as object)).toStrictEqual(["b", "a"])
        expect(Object.hasOwn(back, "__proto__")).toBe(true)
        expect(back.text).toBe(data.text)
      })
    ))

  it("ledger amounts up to numeric(39,0) come back as the same bigints", () =>
    withStore(layer(), (store) =>
      Effect.gen(function* () {
        const huge = 10n ** 38n - 1n
        const lines = [
          ["a", huge],
          ["b", -huge],
          ["c", 1n],
          ["d", -1n]
        ].map(([account, amount], i) => ({
          id: `l${i}`,
          transaction_id: "t1",
          business_id: "biz_a",
          mode: "live" as const,
          account: account as string,
          currency: "USD" as const,
          amount: amount as bigint,
          created_at: 1,
          cause: "test/1"
        }))
        yield* store.transact((tx) => tx.post(lines))
        const read = yield* store.ledger
        expect([...read].sort((x, y) => (x.id < y.id ? -1 : 1))).toStrictEqual(lines)
        const balances = yield* store.transact((tx) => tx.balances({ business_id: "biz_a", mode: "live" }))
        expect(balances.find((b) => b.account === "a")?.amount).toBe(huge)
      })
    ))

  it("a statement PostgreSQL refuses midway aborts the unit: nothing commits, even if the work swallows the error", () =>
    withStore(layer(), (store) =>
      Effect.gen(function* () {
        const overflow = [
          { id: "x1", amount: 10n ** 40n },
          { id: "x2", amount: -(10n ** 40n) }
        ].map((l) => ({
          ...l,
          transaction_id: "tx",
          business_id: "biz_a",
          mode: "test" as const,
          account: l.id,
          currency: "GMD" as const,
          created_at: 1,
          cause: "test/overflow"
        }))
        const error = yield* failureOf(
          store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.insert(doc({ id: "inv_1", keys: ["k1"] }))
              // numeric(39,0) overflow (SQLSTATE 22003): the transaction is now aborted
              yield* Effect.ignore(tx.post(overflow))
              yield* Effect.ignore(tx.insert(doc({ id: "inv_2" })))
              return "the work says it succeeded"
            })
          )
        )
        expect(tagOf(error)).toBe("StoreError")
        expect((error as StoreError).message).toMatch(/SQLSTATE 22003/)
        expect(yield* store.transact((tx) => tx.get("invoice", "inv_1"))).toBeUndefined()
        expect(yield* store.transact((tx) => tx.getByKey("invoice", "k1"))).toBeUndefined()
        expect(yield* store.ledger).toStrictEqual([])
        // the connection went back to the pool clean
        yield* store.transact((tx) => tx.insert(doc({ id: "inv_1", keys: ["k1"] })))
        expect((yield* store.transact((tx) => tx.getByKey("invoice", "k1")))?.id).toBe("inv_1")
      })
    ))

  /** A balanced pair of ledger lines of `amount` (and its negation) under one transaction of `cause`. */
  const linesOf = (cause: string, amount: bigint) =>
    [
      { id: `${cause}_1`, amount },
      { id: `${cause}_2`, amount: -amount }
    ].map((l) => ({
      ...l,
      transaction_id: `tx_${cause}`,
      business_id: "biz_a",
      mode: "test" as const,
      account: l.id,
      currency: "GMD" as const,
      created_at: 1,
      cause: `test/${cause}`
    }))
  /** Amounts past the ledger's numeric(39, 0) column: refused by the database. */
  const overflowLines = (cause: string) => linesOf(cause, 10n ** 40n)
  const fineLines = (cause: string) => linesOf(cause, 5n)

  it("post is pipelined: a post PostgreSQL refuses fails the unit at its next statement or at commit, with its own error; nothing commits", () =>
    withStore(layer(), (store) =>
      Effect.gen(function* () {
        // refused post last: the commit reports it
        const atCommit = yield* failureOf(
          store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.insert(doc({ id: "inv_1", keys: ["k1"] }))
              expect(Exit.isSuccess(yield* Effect.exit(tx.post(overflowLines("a"))))).toBe(true)
            })
          )
        )
        expect(tagOf(atCommit)).toBe("StoreError")
        expect((atCommit as StoreError).message).toMatch(/^posting ledger lines failed: .*SQLSTATE 22003/)
        // the statement behind it reports it, even when its answer arrived long before
        const behind = yield* failureOf(
          store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.insert(doc({ id: "inv_1", keys: ["k1"] }))
              yield* tx.post(overflowLines("b"))
              yield* Effect.sleep("50 millis")
              const next = yield* failureOf(tx.get("invoice", "inv_1"))
              expect((next as StoreError).message).toMatch(/^posting ledger lines failed: .*SQLSTATE 22003/)
            })
          )
        )
        expect((behind as StoreError).message).toMatch(/^posting ledger lines failed: .*SQLSTATE 22003/)
        // a refused post followed by a good one: the first failure is the unit's
        const first = yield* failureOf(
          store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.post(overflowLines("c"))
              yield* tx.post(fineLines("d"))
            })
          )
        )
        expect((first as StoreError).message).toMatch(/^posting ledger lines failed: .*SQLSTATE 22003/)
        expect(yield* store.transact((tx) => tx.get("invoice", "inv_1"))).toBeUndefined()
        expect(yield* store.ledger).toStrictEqual([])
        // connections went back to the pool clean; good posts commit
        yield* store.transact((tx) =>
          Effect.gen(function* () {
            yield* tx.post(fineLines("e"))
            yield* tx.post(fineLines("f"))
            yield* tx.insert(doc({ id: "inv_1", keys: ["k1"] }))
          })
        )
        expect((yield* store.ledger).map((l) => l.id).sort()).toStrictEqual(["e_1", "e_2", "f_1", "f_2"])
        expect((yield* store.transact((tx) => tx.getByKey("invoice", "k1")))?.id).toBe("inv_1")
      })
    ))

  it("a unit's first read takes its start snapshot: a clash with a row committed before it is a DuplicateKey, after it a VersionConflict", () =>
    withStore(layer(), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => tx.insert(doc({ id: "inv_old", keys: ["k_old"] })))
        for (const first of [
          (tx: Parameters<Parameters<StoreShape["transact"]>[0]>[0]) => tx.get("invoice", "inv_none"),
          (tx: Parameters<Parameters<StoreShape["transact"]>[0]>[0]) => tx.getByKey("invoice", "k_none")
        ]) {
          const old = yield* failureOf(
            store.transact((tx) =>
              Effect.gen(function* () {
                expect(yield* first(tx)).toBeUndefined()
                yield* tx.insert(doc({ id: "inv_other", keys: ["k_old"] }))
              })
            )
          )
          expect(old).toMatchObject({ _tag: "DuplicateKey", key: "k_old" })
        }
        let n = 0
        for (const first of [
          (tx: Parameters<Parameters<StoreShape["transact"]>[0]>[0], id: string) => tx.get("invoice", id),
          (tx: Parameters<Parameters<StoreShape["transact"]>[0]>[0], id: string) => tx.getByKey("invoice", `k_${id}`)
        ]) {
          const id = `inv_new_${n++}`
          const late = yield* failureOf(
            store.transact((tx) =>
              Effect.gen(function* () {
                expect(yield* first(tx, id)).toBeUndefined()
                // another unit commits the row after this unit's first read
                yield* store.transact((other) => other.insert(doc({ id, keys: [`k_${id}`] })))
                yield* tx.insert(doc({ id, keys: [`k_${id}`] }))
              })
            )
          )
          expect(tagOf(late)).toBe("VersionConflict")
        }
      })
    ))

  it("a row restored from another cluster (its xact beyond every transaction id here) is old: a clash with it is a DuplicateKey, and a transfer reported again answers applied: false", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* Store
        const transfer = {
          network: "TRC20" as const,
          coin: "USDT" as const,
          to_address: "Tnobody",
          amount: 5_000_000n,
          tx_hash: "0xabc",
          log_index: 0
        }
        yield* Transfers.applyChainTransfer(transfer)
        yield* store.transact((tx) => tx.insert(doc({ id: "inv_restored", keys: ["k_restored"] })))
        // what a pg_dump of an older cluster restored here leaves: xact values this cluster has not reached
        yield* Effect.promise(() =>
          db.query("UPDATE docs SET xact = (pg_current_xact_id()::text::bigint + 50000000)::text::xid8")
        )
        yield* Effect.promise(() =>
          db.query("UPDATE doc_keys SET xact = (pg_current_xact_id()::text::bigint + 50000000)::text::xid8")
        )
        const again = yield* Transfers.applyChainTransfer(transfer)
        expect(again.applied).toBe(false)
        expect(tagOf(yield* failureOf(store.transact((tx) => tx.insert(doc({ id: "inv_restored" })))))).toBe(
          "DuplicateKey"
        )
        expect(
          yield* failureOf(store.transact((tx) => tx.insert(doc({ id: "inv_other", keys: ["k_restored"] }))))
        ).toMatchObject({ _tag: "DuplicateKey", key: "k_restored" })
      }).pipe(
        Effect.provide(
          Layer.mergeAll(layer(), Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal })).pipe(
            Layer.provideMerge(IdsAdapter.layer)
          )
        )
      )
    ))

  it("a row read by key brings its owner business along: a later get answers that read's version; a stale write is refused, the unit's own write is read back", () =>
    withStore(layer(), (store) =>
      Effect.gen(function* () {
        const business = doc({ kind: "business", id: "biz_a", business_id: null, mode: null, data: { name: "v1" } })
        yield* store.transact((tx) =>
          Effect.andThen(
            tx.insert(business),
            tx.insert(doc({ kind: "conversion", id: "conv_1", keys: ["addr_1"], data: { n: 1 } }))
          )
        )
        const rename = (name: string) =>
          store.transact((tx) =>
            Effect.flatMap(tx.get("business", "biz_a"), (b) =>
              tx.update({ ...(b as Doc), version: (b?.version ?? 0) + 1, data: { name } })
            )
          )
        yield* store.transact((tx) =>
          Effect.gen(function* () {
            const b = yield* Effect.andThen(tx.getByKey("conversion", "addr_1"), tx.get("business", "biz_a"))
            expect(b?.data).toStrictEqual({ name: "v1" })
            yield* tx.update({ ...(b as Doc), version: 2, data: { name: "v2" } })
            expect(yield* tx.get("business", "biz_a")).toMatchObject({ version: 2, data: { name: "v2" } })
          })
        )
        const stale = yield* failureOf(
          store.transact((tx) =>
            Effect.gen(function* () {
              expect((yield* tx.getByKey("conversion", "addr_1"))?.id).toBe("conv_1")
              yield* rename("v3")
              const b = yield* tx.get("business", "biz_a")
              expect(b).toMatchObject({ version: 2, data: { name: "v2" } })
              ;(b?.data as { name: string }).name = "mutated"
              expect((yield* tx.get("business", "biz_a"))?.data).toStrictEqual({ name: "v2" })
              yield* tx.update({ ...business, version: 3, data: { name: "v4" } })
            })
          )
        )
        expect(tagOf(stale)).toBe("VersionConflict")
        expect(yield* store.transact((tx) => tx.get("business", "biz_a"))).toMatchObject({
          version: 3,
          data: { name: "v3" }
        })
      })
    ))

  it("a connection killed midway: StoreError, nothing commits, the next unit gets a fresh connection", async () => {
    const app = `xaalis_kill_${randomBytes(4).toString("hex")}`
    const killable = Layer.unwrap(
      Effect.as(
        Effect.promise(() => db.truncate()),
        PostgresStore.layer({
          connectionString: withParam(db.url, "application_name", app),
          schema: db.schema,
          poolMax: 2
        })
      )
    )
    await withStore(killable, (store) =>
      Effect.gen(function* () {
        const error = yield* failureOf(
          store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.insert(doc({ id: "inv_1" }))
              yield* Effect.promise(() =>
                db.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [app])
              )
              yield* tx.insert(doc({ id: "inv_2" }))
            })
          )
        )
        expect(tagOf(error)).toBe("StoreError")
        expect((error as StoreError).message).toMatch(/connection was lost/)
        expect(yield* store.transact((tx) => tx.get("invoice", "inv_1"))).toBeUndefined()
        yield* store.transact((tx) => tx.insert(doc({ id: "inv_3" })))
        expect((yield* store.transact((tx) => tx.get("invoice", "inv_3")))?.id).toBe("inv_3")
      })
    )
  })

  it("a deadlock between two units is a VersionConflict for one of them; the other commits", () =>
    withStore(layer(), (store) =>
      Effect.gen(function* () {
        const aHolds = yield* Deferred.make<void>()
        const bHolds = yield* Deferred.make<void>()
        // each unit claims one key, then waits for the other's (still uncommitted) key
        const unit = (first: string, second: string, mine: Deferred.Deferred<void>, theirs: Deferred.Deferred<void>) =>
          Effect.exit(
            store.transact((tx) =>
              Effect.gen(function* () {
                yield* tx.insert(doc({ id: `inv_${first}`, keys: [first] }))
                yield* Deferred.succeed(mine, undefined)
                yield* Deferred.await(theirs)
                yield* tx.insert(doc({ id: `inv_${first}_${second}`, keys: [second] }))
              })
            )
          )
        const a = yield* Effect.forkChild(unit("ka", "kb", aHolds, bHolds))
        const b = yield* Effect.forkChild(unit("kb", "ka", bHolds, aHolds))
        const exits = [yield* Fiber.join(a), yield* Fiber.join(b)]
        const tags = exits.map((e) =>
          Exit.isSuccess(e) ? "ok" : tagOf(Result.getOrUndefined(Cause.findError(e.cause)))
        )
        expect([...tags].sort()).toStrictEqual(["VersionConflict", "ok"])
        // the winner holds both keys: its first one on its first row, the other on its second
        const expected = tags.indexOf("ok") === 0 ? ["inv_ka", "inv_ka_kb"] : ["inv_kb_ka", "inv_kb"]
        const holders = yield* store.transact((tx) =>
          Effect.all([tx.getByKey("invoice", "ka"), tx.getByKey("invoice", "kb")])
        )
        expect(holders.map((d) => d?.id)).toStrictEqual(expected)
      })
    ))

  it("the pool is closed when the layer is released", async () => {
    const app = `xaalis_pool_${randomBytes(4).toString("hex")}`
    const count = async () =>
      Number(
        (
          await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [
            app
          ])
        )[0]?.n
      )
    const layerWithName = PostgresStore.layer({
      connectionString: withParam(db.url, "application_name", app),
      schema: db.schema,
      poolMax: 4
    })
    await withStore(layerWithName, (store) =>
      Effect.gen(function* () {
        yield* Effect.forEach([1, 2, 3], () => store.transact((tx) => tx.get("invoice", "x")), { concurrency: 3 })
        expect(yield* Effect.promise(count)).toBeGreaterThan(0)
      })
    )
    // the server notices closed connections asynchronously (up to 10 s on a loaded machine)
    for (let i = 0; i < 500 && (await count()) > 0; i++) await new Promise((r) => setTimeout(r, 20))
    expect(await count()).toBe(0)
  })

  it("a chain transfer whose unit fails halfway leaves nothing; reported again, it is applied once", async () => {
    let failNextPost = true
    const flaky = Layer.effect(
      Store,
      Effect.map(getStore, (inner) =>
        Store.of({
          ledger: inner.ledger,
          transact: (work) =>
            inner.transact((tx) =>
              work({
                ...tx,
                post: (entries) =>
                  failNextPost
                    ? Effect.andThen(
                        Effect.sync(() => {
                          failNextPost = false
                        }),
                        tx.post(entries.map((e, i) => (i === 0 ? { ...e, amount: e.amount + 1n } : e)))
                      )
                    : tx.post(entries)
              })
            )
        })
      )
    ).pipe(Layer.provide(Layer.orDie(db.store())))
    const engine = Layer.mergeAll(
      flaky,
      Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(IdsAdapter.layer)),
      MemoryNotifier.layer
    )
    await Effect.runPromise(
      Effect.provide(
        Effect.gen(function* () {
          const created = yield* Businesses.createBusiness({ name: "Halfway", webhook_url: "https://m.example/h" })
          const live = yield* Businesses.authenticate(created.secret_key_live)
          const c = yield* Conversions.createConversion(live, { gmd_amount: 500_000n })
          const t = {
            network: "TRC20" as const,
            coin: "USDT" as const,
            to_address: c.pay_address,
            amount: 10_000_000n,
            tx_hash: "0xhalfway",
            log_index: 0
          }
          const store = yield* Store
          const snapshot = () =>
            Effect.gen(function* () {
              const conv = yield* store.transact((tx) => tx.get("conversion", c.id))
              const seen = yield* store.transact((tx) => tx.get("transfer", "TRC20:0xhalfway:0"))
              const outbox = yield* store.transact((tx) => tx.list("outbox", live, { limit: 100, offset: 0 }))
              return { conv, seen, outbox: outbox.total, ledger: (yield* store.ledger).length }
            })
          const before = yield* snapshot()
          // the transfer identity, the conversion update and the payout are written before the (broken) posting
          const error = yield* failureOf(Transfers.applyChainTransfer(t))
          expect(tagOf(error)).toBe("StoreError")
          expect(yield* snapshot()).toStrictEqual(before)
          expect(before.seen).toBeUndefined()
          const first = yield* Transfers.applyChainTransfer(t)
          const again = yield* Transfers.applyChainTransfer(t)
          expect([first.applied, again.applied]).toStrictEqual([true, false])
          const after = yield* snapshot()
          expect(after.seen).toBeDefined()
          expect(after.conv?.version).toBe((before.conv?.version ?? 0) + 1)
          expect(after.outbox).toBe(before.outbox + 1)
          expect(unbalanced(yield* store.ledger)).toStrictEqual([])
        }),
        engine
      )
    )
  })
})
