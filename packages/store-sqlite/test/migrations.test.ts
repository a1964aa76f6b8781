import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Businesses, IdsAdapter, Store } from "@xaalis/engine"
import { Cause, Effect, Exit, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { Migrations, SqliteStore } from "../src/index.ts"

const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-migrations-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshPath = () => join(dir, `db-${files++}`, "nested", "xaalis.sqlite")

/** Opens the store on `path`, runs `body`, closes it; the exit of the whole. */
const withStore = <A, E>(
  path: string,
  body: Effect.Effect<A, E, Store>,
  options?: Partial<SqliteStore.SqliteStoreOptions>
) => Effect.runPromiseExit(Effect.provide(body, SqliteStore.layer({ ...options, path })))

const raw = <A>(path: string, f: (db: DatabaseSync) => A): A => {
  const db = new DatabaseSync(path)
  try {
    return f(db)
  } finally {
    db.close()
  }
}

const versions = (path: string) =>
  raw(path, (db) =>
    db
      .prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
      .all()
      .map((r) => ({ ...r }))
  )

const tables = (db: DatabaseSync) =>
  db
    .prepare(
      "SELECT name FROM sqlite_schema WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    .all()
    .map((r) => r.name)

const doc = {
  kind: "invoice" as const,
  id: "inv_1",
  business_id: "biz",
  mode: "test" as const,
  created_at: 1,
  version: 1,
  due_at: null,
  keys: ["k"],
  data: { amount: 2n ** 70n }
}

describe("migrations", () => {
  it("an empty file (and its missing parent directories) is created and migrated to the latest version", async () => {
    const path = freshPath()
    expect(existsSync(path)).toBe(false)
    const exit = await withStore(path, Effect.void)
    expect(Exit.isSuccess(exit)).toBe(true)
    const applied = versions(path)
    expect(applied.map((r) => r.version)).toStrictEqual(Migrations.migrations.map((m) => m.version))
    expect(applied.at(-1)?.version).toBe(Migrations.latestVersion())
    raw(path, (db) => {
      expect(tables(db)).toStrictEqual([
        "doc_keys",
        "docs",
        "docs_due",
        "docs_list",
        "ledger",
        "ledger_balances",
        "schema_migrations"
      ])
      const columns = (table: string) =>
        db
          .prepare(`PRAGMA table_info(${table})`)
          .all()
          .map((c) => `${c.name} ${c.type}`)
      expect(columns("docs")).toStrictEqual([
        "kind TEXT",
        "id TEXT",
        "business_id TEXT",
        "mode TEXT",
        "created_at INTEGER",
        "version INTEGER",
        "due_at INTEGER",
        "keys TEXT",
        "data TEXT"
      ])
      expect(columns("ledger")).toContain("amount INTEGER")
      expect(db.prepare("PRAGMA journal_mode").get()?.journal_mode).toBe("wal")
    })
  })

  it("reopening is a no-op: nothing re-applied, rows kept", async () => {
    const path = freshPath()
    const write = Effect.flatMap(Store, (s) => s.transact((tx) => tx.insert(doc)))
    expect(Exit.isSuccess(await withStore(path, write))).toBe(true)
    const before = versions(path)
    const read = Effect.flatMap(Store, (s) => s.transact((tx) => tx.getByKey("invoice", "k")))
    const again = await withStore(path, read)
    expect(Exit.isSuccess(again) && again.value).toStrictEqual(doc)
    expect(versions(path)).toStrictEqual(before)
    // and straight through `migrate`: from the latest to the latest, nothing applied
    const outcome = raw(path, (db) => Migrations.migrate(db, 0))
    expect(outcome).toStrictEqual({
      from: Migrations.latestVersion(),
      to: Migrations.latestVersion(),
      applied: []
    })
  })

  it("an up-to-date database opens while another connection holds the write lock (a restart under load)", async () => {
    const path = freshPath()
    expect(Exit.isSuccess(await withStore(path, Effect.void))).toBe(true)
    const other = new DatabaseSync(path)
    try {
      other.exec("BEGIN IMMEDIATE")
      // before, opening took the write lock to check the schema and failed once its busy timeout ran out
      const opened = await withStore(path, Effect.void, { busy_timeout_ms: 200 })
      expect(Exit.isSuccess(opened)).toBe(true)
      // a database that needs a migration still waits for the lock, and says so when it cannot get it
      const stale = freshPath()
      expect(Exit.isSuccess(await withStore(stale, Effect.void))).toBe(true)
      raw(stale, (db) => db.exec(`DELETE FROM schema_migrations WHERE version = ${Migrations.latestVersion()}`))
      const holder = new DatabaseSync(stale)
      holder.exec("BEGIN IMMEDIATE")
      const refused = await withStore(stale, Effect.void, { busy_timeout_ms: 200 })
      holder.exec("ROLLBACK")
      holder.close()
      expect(Exit.isFailure(refused)).toBe(true)
    } finally {
      other.exec("ROLLBACK")
      other.close()
    }
  })

  it("a database stamped with a future version is refused with a clear error, and left untouched", async () => {
    const path = freshPath()
    expect(Exit.isSuccess(await withStore(path, Effect.void))).toBe(true)
    const future = Migrations.latestVersion() + 1
    raw(path, (db) =>
      db
        .prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 0)")
        .run(future)
    )
    const before = versions(path)
    const exit = await withStore(path, Effect.void)
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      const error = Cause.squash(exit.cause)
      expect(error).toBeInstanceOf(Migrations.SchemaTooNew)
      expect(error).toMatchObject({ _tag: "SchemaTooNew", found: future, supported: Migrations.latestVersion() })
      expect((error as Error).message).toContain(`schema version ${future}, newer than this version of xaalis`)
    }
    expect(versions(path)).toStrictEqual(before)
  })

  it("a new step is applied once, after the ones already applied; a failing step rolls the whole migration back", () => {
    const path = join(dir, `raw-${files++}.sqlite`)
    const v1 = Migrations.migrations.slice(0, 1)
    const v2 = [...v1, { version: 2, name: "a column", sql: "ALTER TABLE docs ADD COLUMN note TEXT" }]
    const broken = [
      ...v2,
      { version: 3, name: "half a step", sql: "CREATE TABLE side (x INTEGER); SELECT no_such_function()" }
    ]
    raw(path, (db) => {
      expect(Migrations.migrate(db, 1, v1)).toStrictEqual({ from: 0, to: 1, applied: [1] })
      expect(Migrations.migrate(db, 2, v2)).toStrictEqual({ from: 1, to: 2, applied: [2] })
      expect(Migrations.migrate(db, 3, v2)).toStrictEqual({ from: 2, to: 2, applied: [] })
      expect(() => Migrations.migrate(db, 4, broken)).toThrow(/no_such_function/)
      expect(tables(db)).not.toContain("side")
      expect(db.isTransaction).toBe(false)
      // and an older code (v1 only) refuses the v2 database
      expect(() => Migrations.migrate(db, 5, v1)).toThrow(Migrations.SchemaTooNew)
    })
    expect(versions(path).map((r) => [r.version, r.applied_at])).toStrictEqual([
      [1, 1],
      [2, 2]
    ])
  })

  it("a list of steps out of order is refused before touching the database", () => {
    const path = join(dir, `raw-${files++}.sqlite`)
    const [first] = Migrations.migrations
    if (first === undefined) throw new Error("no migrations")
    raw(path, (db) => {
      expect(() => Migrations.migrate(db, 0, [{ ...first, version: 2 }])).toThrow(Migrations.InvalidMigrations)
      expect(tables(db)).toStrictEqual([])
    })
  })

  it("layerFromDataDir opens <DATA_DIR>/xaalis.sqlite; the layer closes the database when it ends", async () => {
    const dataDir = join(dir, `data-${files++}`)
    const path = join(dataDir, "xaalis.sqlite")
    const during = await Effect.runPromiseExit(
      Effect.provide(
        Effect.flatMap(Store, (s) =>
          Effect.as(
            s.transact((tx) => tx.insert(doc)),
            existsSync(`${path}-wal`)
          )
        ),
        SqliteStore.layerFromDataDir(dataDir)
      )
    )
    // while open, the write-ahead log exists; closing the last connection checkpoints and removes it
    expect(Exit.isSuccess(during) && during.value).toBe(true)
    expect(existsSync(path)).toBe(true)
    expect(existsSync(`${path}-wal`)).toBe(false)
    expect(raw(path, (db) => db.prepare("SELECT count(*) AS n FROM docs").get()?.n)).toBe(1)
  })

  it("version 2 gives API key rows written without an owner their business and mode, so rolling finds them", async () => {
    const path = freshPath()
    const engine = Layer.merge(SqliteStore.layer({ path }), IdsAdapter.layer)
    const created = await Effect.runPromise(Effect.provide(Businesses.createBusiness({ name: "Old" }), engine))
    // the rows as version 1 code wrote them: no owner, and the database at version 1
    raw(path, (db) => {
      db.exec("UPDATE docs SET business_id = NULL, mode = NULL WHERE kind = 'api_key'")
      db.exec("DELETE FROM schema_migrations WHERE version >= 2")
    })
    const owners = () =>
      raw(path, (db) =>
        db
          .prepare("SELECT business_id, mode FROM docs WHERE kind = 'api_key' ORDER BY mode")
          .all()
          .map((r) => ({ ...r }))
      )
    expect(owners()).toStrictEqual([
      { business_id: null, mode: null },
      { business_id: null, mode: null }
    ])
    const rolled = await Effect.runPromise(
      Effect.provide(Businesses.rollApiKey({ business_id: created.id, mode: "live" }), engine)
    )
    expect(rolled.previous_keys).toBe(1)
    expect(versions(path).map((r) => r.version)).toStrictEqual([1, 2])
    const outcome = (key: string) =>
      Effect.runPromise(
        Effect.provide(
          Effect.match(Businesses.authenticate(key), { onFailure: () => "refused", onSuccess: (c) => c.mode }),
          engine
        )
      )
    expect(await outcome(created.secret_key_live)).toBe("refused")
    expect(await outcome(created.secret_key_test)).toBe("test")
    expect(await outcome(rolled.secret_key)).toBe("live")
    expect(owners()).toStrictEqual([
      { business_id: created.id, mode: "live" },
      { business_id: created.id, mode: "live" },
      { business_id: created.id, mode: "test" }
    ])
  })
})
