import { Businesses, type Ids, IdsAdapter, Store, type StoreError } from "@xaalis/engine"
import { Cause, Effect, Exit, Layer, Result } from "effect"
import type { Pool } from "pg"
import { afterAll, expect, it } from "vitest"
import { Migrations, PostgresStore } from "../src/index.ts"
import { DATABASE_URL, newSchemaName, poolFor, withPostgres } from "./pg.ts"

/** Builds the store layer on `schema` (creating and migrating it), runs one unit, releases it. */
const start = (schema: string) =>
  Effect.runPromiseExit(
    Effect.provide(
      Effect.gen(function* () {
        const store = yield* Store
        return yield* store.transact((tx) => tx.get("invoice", "nothing"))
      }),
      PostgresStore.layer({ connectionString: DATABASE_URL, schema })
    )
  )

const storeErrorOf = (exit: Exit.Exit<unknown, unknown>): StoreError | undefined =>
  Exit.isFailure(exit) ? (Result.getOrUndefined(Cause.findError(exit.cause)) as StoreError | undefined) : undefined

withPostgres("PostgresStore migrations", () => {
  const schemas: Array<string> = []
  const pools: Array<Pool> = []
  /** A schema that does not exist yet, dropped after the file. */
  const emptySchema = () => {
    const schema = newSchemaName()
    schemas.push(schema)
    const pool = poolFor(schema, 4)
    pools.push(pool)
    return { schema, pool }
  }
  afterAll(async () => {
    const [admin] = pools
    for (const s of schemas) await admin?.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`)
    for (const p of pools) await p.end()
  })

  const tables = async (pool: Pool, schema: string) =>
    (
      await pool.query<{ t: string }>(
        "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
        [schema]
      )
    ).rows.map((r) => r.t)
  const versions = async (pool: Pool) =>
    (await pool.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version")).rows.map(
      (r) => r.version
    )

  it("from an empty database: the first start creates the schema and applies every step once; a restart applies none", async () => {
    const { schema, pool } = emptySchema()
    expect(
      (await pool.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema])).rowCount
    ).toBe(0)
    const first = await start(schema)
    expect(Exit.isSuccess(first)).toBe(true)
    expect(await tables(pool, schema)).toStrictEqual([
      "doc_keys",
      "docs",
      "ledger",
      "rate_buckets",
      "schema_migrations"
    ])
    const all = Migrations.steps.map((s) => s.version)
    expect(await versions(pool)).toStrictEqual(all)
    expect(Migrations.latest()).toBe(all[all.length - 1])
    expect(Exit.isSuccess(await start(schema))).toBe(true)
    expect(await versions(pool)).toStrictEqual(all)
    // migrate says what it applied: nothing now
    const client = await pool.connect()
    try {
      expect(await Migrations.migrate(client, { schema })).toStrictEqual([])
    } finally {
      client.release()
    }
  })

  it("two processes starting at once on an empty database: the steps are applied once, both start", async () => {
    const { schema, pool } = emptySchema()
    const [a, b] = await Promise.all([start(schema), start(schema)])
    expect(Exit.isSuccess(a) && Exit.isSuccess(b)).toBe(true)
    expect(await versions(pool)).toStrictEqual(Migrations.steps.map((s) => s.version))
  })

  it("concurrent migrations queue on the advisory lock: one applies every step, the other none (slow steps)", async () => {
    const { schema, pool } = emptySchema()
    // a step slow enough that, without the lock, the second migration would read "nothing applied" and
    // run the same CREATE TABLE again (and fail on it)
    const steps: ReadonlyArray<Migrations.Step> = [
      { version: 1, name: "slow", sql: "CREATE TABLE slow_one (x int); SELECT pg_sleep(0.3)" },
      { version: 2, name: "second", sql: "CREATE TABLE slow_two (x int)" }
    ]
    const run = async () => {
      const client = await pool.connect()
      try {
        return await Migrations.migrate(client, { schema, steps })
      } finally {
        client.release()
      }
    }
    const applied = await Promise.all([run(), run()])
    expect([...applied].sort((x, y) => y.length - x.length)).toStrictEqual([[1, 2], []])
    expect(await versions(pool)).toStrictEqual([1, 2])
  })

  it("a schema chosen by the connection's search_path locks that schema only: another one's migration does not wait", async () => {
    const a = emptySchema()
    const b = emptySchema()
    for (const { pool, schema } of [a, b]) await pool.query(`CREATE SCHEMA ${schema}`)
    // a process holds schema a's migration lock
    const holder = await a.pool.connect()
    try {
      await holder.query("BEGIN")
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended('xaalis.migrations:' || $1, 0))", [a.schema])
      const migrateVia = async (pool: Pool) => {
        const client = await pool.connect()
        try {
          return await Migrations.migrate(client) // no schema option: the pool's search_path decides
        } finally {
          client.release()
        }
      }
      const started = Date.now()
      expect(await migrateVia(b.pool)).toStrictEqual(Migrations.steps.map((st) => st.version))
      expect(Date.now() - started).toBeLessThan(1_000)
      // schema a's own migration waits for its lock
      let done = false
      const waiting = migrateVia(a.pool).then((v) => {
        done = true
        return v
      })
      await new Promise((r) => setTimeout(r, 300))
      expect(done).toBe(false)
      await holder.query("COMMIT")
      expect(await waiting).toStrictEqual(Migrations.steps.map((st) => st.version))
    } finally {
      holder.release()
    }
  })

  it("an up-to-date database starts for a role that owns the tables but may not create in the schema", async () => {
    // a restore into `public` on PostgreSQL 15+: the application's role owns what it restored, not the schema
    const { schema, pool } = emptySchema()
    expect(Exit.isSuccess(await start(schema))).toBe(true)
    const role = `xaalis_r_${schema.slice(-12)}`
    await pool.query(`CREATE ROLE ${role} LOGIN`)
    try {
      await pool.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`)
      for (const table of await tables(pool, schema)) await pool.query(`ALTER TABLE ${table} OWNER TO ${role}`)
      const url = new URL(DATABASE_URL)
      url.username = role
      url.password = ""
      const started = await Effect.runPromiseExit(
        Effect.provide(
          Effect.flatMap(Store, (store) => store.transact((tx) => tx.get("invoice", "nothing"))),
          PostgresStore.layer({
            connectionString: `${url.toString()}${url.search === "" ? "?" : "&"}options=${encodeURIComponent(`-c search_path=${schema}`)}`
          })
        )
      )
      expect(storeErrorOf(started)?.message, "it started").toBeUndefined()
      expect(Exit.isSuccess(started)).toBe(true)
    } finally {
      for (const table of await tables(pool, schema)) await pool.query(`ALTER TABLE ${table} OWNER TO CURRENT_USER`)
      await pool.query(`REVOKE ALL ON SCHEMA ${schema} FROM ${role}`)
      await pool.query(`DROP ROLE ${role}`)
    }
  })

  it("a step that fails rolls the whole migration back: no step of it stays applied", async () => {
    const { schema, pool } = emptySchema()
    const steps: ReadonlyArray<Migrations.Step> = [
      { version: 1, name: "fine", sql: "CREATE TABLE fine (x int)" },
      { version: 2, name: "broken", sql: "CREATE TABLE broken (x no_such_type)" }
    ]
    const client = await pool.connect()
    try {
      await expect(Migrations.migrate(client, { schema, steps })).rejects.toMatchObject({ code: "42704" })
    } finally {
      client.release()
    }
    expect(await tables(pool, schema)).toStrictEqual([])
  })

  it("a database newer than the code is refused, and left as it was", async () => {
    const { schema, pool } = emptySchema()
    expect(Exit.isSuccess(await start(schema))).toBe(true)
    const newer = Migrations.latest() + 1
    await pool.query("INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')", [newer])
    const exit = await start(schema)
    expect(Exit.isFailure(exit)).toBe(true)
    const error = storeErrorOf(exit)
    expect(error?._tag).toBe("StoreError")
    expect(error?.message).toContain(`version ${newer}, newer than this code knows (${Migrations.latest()})`)
    expect(await versions(pool)).toStrictEqual([...Migrations.steps.map((s) => s.version), newer])
  })

  it("steps must be numbered 1, 2, 3…", async () => {
    const { schema, pool } = emptySchema()
    const client = await pool.connect()
    try {
      await expect(
        Migrations.migrate(client, { schema, steps: [{ version: 2, name: "gap", sql: "SELECT 1" }] })
      ).rejects.toThrow(/numbered/)
    } finally {
      client.release()
    }
  })

  it("a schema name that is not a plain identifier is refused before anything runs", async () => {
    const exit = await start("x; DROP TABLE docs")
    expect(storeErrorOf(exit)?.message).toMatch(/plain lower-case identifier/)
  })

  it("version 2 gives API key rows written without an owner their business and mode, so rolling finds them", async () => {
    const { schema, pool } = emptySchema()
    const engine = Layer.merge(PostgresStore.layer({ connectionString: DATABASE_URL, schema }), IdsAdapter.layer)
    const run = <A, E>(effect: Effect.Effect<A, E, Store | Ids>) =>
      Effect.runPromise(Effect.provide(effect, engine) as Effect.Effect<A, unknown>)
    const created = await run(Businesses.createBusiness({ name: "Old" }))
    // the rows as version 1 code wrote them: no owner, and the database at version 1
    await pool.query("UPDATE docs SET business_id = NULL, mode = NULL WHERE kind = 'api_key'")
    await pool.query("DELETE FROM schema_migrations WHERE version >= 2")
    const owners = async () =>
      (
        await pool.query<{ business_id: string | null; mode: string | null }>(
          "SELECT business_id, mode FROM docs WHERE kind = 'api_key' ORDER BY mode, business_id"
        )
      ).rows.map((r) => ({ ...r }))
    expect(await owners()).toStrictEqual([
      { business_id: null, mode: null },
      { business_id: null, mode: null }
    ])
    const rolled = await run(Businesses.rollApiKey({ business_id: created.id, mode: "live" }))
    expect(rolled.previous_keys).toBe(1)
    expect(await versions(pool)).toStrictEqual(Migrations.steps.map((s) => s.version))
    const outcome = (key: string) =>
      run(Effect.match(Businesses.authenticate(key), { onFailure: () => "refused", onSuccess: (c) => c.mode }))
    expect(await outcome(created.secret_key_live)).toBe("refused")
    expect(await outcome(created.secret_key_test)).toBe("test")
    expect(await outcome(rolled.secret_key)).toBe("live")
    expect(await owners()).toStrictEqual([
      { business_id: created.id, mode: "live" },
      { business_id: created.id, mode: "live" },
      { business_id: created.id, mode: "test" }
    ])
  })
})
