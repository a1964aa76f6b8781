/**
 * The one place the PostgreSQL tests meet PostgreSQL.
 *
 * - `DATABASE_URL` (default `postgres://127.0.0.1:5432/test`) names the database.
 * - Each test file gets its own schema `xaalis_t_<random>`, migrated once,
 *   used through the `search_path` of every pooled connection, dropped at the end:
 *   runs (and files run in parallel) never see each other's rows.
 * - PostgreSQL not reachable: with `XAALIS_REQUIRE_POSTGRES=1` (CI) every file
 *   FAILS; otherwise its tests are skipped, saying why.
 */

import { randomBytes } from "node:crypto"
import { userInfo } from "node:os"
import type { Store, StoreError } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { Pool } from "pg"
import { afterAll, beforeAll, describe, it } from "vitest"
import { Migrations, PostgresStore } from "../src/index.ts"

export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/test"
// node-postgres takes the user from the URL, PGUSER or USER only; psql falls back to the OS user. So do the
// tests' own pools and child processes (the store itself does the same for a URL without a user).
if (!process.env.PGUSER && !process.env.USER) process.env.PGUSER = userInfo().username
const required = process.env.XAALIS_REQUIRE_POSTGRES === "1"

/** The URL without its password, fit to print. */
export const shownUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return "(DATABASE_URL is not a URL)"
  }
}

/** Why PostgreSQL cannot be used, or undefined when it can. */
const probe = async (): Promise<string | undefined> => {
  const pool = new Pool({ connectionString: DATABASE_URL, max: 1, connectionTimeoutMillis: 3_000 })
  pool.on("error", () => undefined)
  try {
    await pool.query("SELECT 1")
    return undefined
  } catch (e) {
    const code = (e as { code?: unknown }).code
    return `PostgreSQL not reachable at ${shownUrl(DATABASE_URL)}${typeof code === "string" ? ` (${code})` : ""}: skipped; set DATABASE_URL`
  } finally {
    await pool.end().catch(() => undefined)
  }
}

/** Undefined when PostgreSQL answers; otherwise the reason printed when skipping. */
export const unreachable: string | undefined = await probe()

/** A fresh schema name for one test file or one migration test. */
export const newSchemaName = (): string => `xaalis_t_${randomBytes(6).toString("hex")}`

/** A pool whose connections use `schema` (admin work of the tests: truncate, inspect, drop). */
export const poolFor = (schema: string, max = 2): Pool => {
  const pool = new Pool({ connectionString: DATABASE_URL, max, options: `-c search_path=${schema}` })
  pool.on("error", () => undefined)
  return pool
}

export interface TestDatabase {
  readonly url: string
  readonly schema: string
  /** Admin queries in the file's schema. */
  readonly query: <R extends Record<string, unknown>>(
    text: string,
    values?: ReadonlyArray<unknown>
  ) => Promise<ReadonlyArray<R>>
  /** Empties the file's tables (documents, keys, ledger; not the migration record). */
  readonly truncate: () => Promise<void>
  /** A fresh, empty Store on every build (tables truncated first), in the file's schema. */
  readonly store: (options?: { readonly poolMax?: number }) => Layer.Layer<Store, StoreError>
}

/**
 * Registers the tests of `register` against a fresh schema of the test
 * database, created and migrated before them and dropped after them; or skips
 * (or, in CI, fails) them when PostgreSQL is not reachable.
 */
export const withPostgres = (title: string, register: (db: TestDatabase) => void): void => {
  if (unreachable !== undefined) {
    if (required) {
      describe(title, () => {
        it("PostgreSQL is reachable (XAALIS_REQUIRE_POSTGRES=1)", () => {
          throw new Error(unreachable.replace(": skipped;", ": required by XAALIS_REQUIRE_POSTGRES=1;"))
        })
      })
    } else {
      console.warn(`[@xaalis/store-postgres] ${title}: ${unreachable}`)
      describe.skip(title, () => {
        it(unreachable, () => undefined)
      })
    }
    return
  }
  const schema = newSchemaName()
  const admin = poolFor(schema)
  beforeAll(async () => {
    const client = await admin.connect()
    try {
      await Migrations.migrate(client, { schema })
    } finally {
      client.release()
    }
  })
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
  })
  const query = async <R extends Record<string, unknown>>(text: string, values?: ReadonlyArray<unknown>) =>
    (await admin.query<R>(text, values as Array<unknown> | undefined)).rows
  const truncate = async () => {
    await admin.query("TRUNCATE docs, doc_keys, ledger")
  }
  const db: TestDatabase = {
    url: DATABASE_URL,
    schema,
    query,
    truncate,
    store: (options) =>
      Layer.unwrap(
        Effect.as(
          Effect.promise(() => truncate()),
          PostgresStore.layer({ connectionString: DATABASE_URL, schema, poolMax: options?.poolMax })
        )
      )
  }
  describe(title, () => register(db))
}
