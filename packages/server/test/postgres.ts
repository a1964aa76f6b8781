import { randomBytes } from "node:crypto"
import { userInfo } from "node:os"
import { Pool } from "pg"
import { afterAll, beforeAll, describe } from "vitest"

/**
 * The reference server's PostgreSQL tests: `DATABASE_URL` (default
 * 127.0.0.1:5432/test), a fresh schema per file (prefix
 * `XAALIS_TEST_SCHEMA_PREFIX`, default `xaalis_t_`) created before its tests
 * and dropped after them; the tests are skipped when PostgreSQL is unreachable,
 * unless `XAALIS_REQUIRE_POSTGRES=1` (CI), which makes them fail instead.
 */
export const url = process.env.DATABASE_URL || "postgres://127.0.0.1:5432/test"
// node-postgres takes the user from the URL, PGUSER or USER only (the servers themselves fall back to the OS user)
if (!process.env.PGUSER && !process.env.USER) process.env.PGUSER = userInfo().username
const required = process.env.XAALIS_REQUIRE_POSTGRES === "1"
export const schema = `${process.env.XAALIS_TEST_SCHEMA_PREFIX ?? "xaalis_t_"}${randomBytes(6).toString("hex")}`
/** Queries of the test itself (the schema's tables are named with `schema.`). */
export const admin = new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 3_000 })
admin.on("error", () => undefined)
const reachable = await admin.query("SELECT 1").then(
  () => true,
  () => false
)

/** `base` (a PostgreSQL URL) with the file's schema as the search_path of every connection. */
export const inSchema = (base: string = url): string => {
  const database = new URL(base)
  database.searchParams.set("options", `-c search_path=${schema}`)
  return database.toString()
}

/** `describe` with the file's schema created before `register`'s tests and dropped after them. */
export const describeWithSchema = (title: string, register: () => void): void => {
  describe.skipIf(!reachable && !required)(title, () => {
    beforeAll(async () => {
      await admin.query(`CREATE SCHEMA ${schema}`)
    })
    afterAll(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
      await admin.end()
    })
    register()
  })
}
