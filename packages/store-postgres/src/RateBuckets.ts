/**
 * The API's rate-limit buckets in PostgreSQL, shared by every process on the
 * database: one limit per API key for the whole deployment, where each
 * process's in-memory buckets would allow N processes N times the rate.
 *
 * ```ts
 * import { RateLimiter } from "@xaalis/http"
 * import { RateBuckets } from "@xaalis/store-postgres"
 * const rateLimiter = RateLimiter.layerShared({ rps: 100, burst: 200 }, RateBuckets.make({ connectionString }))
 * makeHttpApi({ store, rateLimit: { rps: 100, burst: 200 }, rateLimiter })
 * ```
 *
 * One statement per request, atomic under the row lock of its upsert: the
 * bucket is refilled for the time since it was last spent, measured by the
 * database's clock (`statement_timestamp()`, one clock for every process), and
 * a token is taken when there is one. The table (`rate_buckets`, migration 3)
 * is UNLOGGED: no WAL for a row written on every request; after a crash it
 * comes back empty, which is every bucket full. Buckets full again (each by
 * the rate it was last spent at) are swept once a minute. Token counts are
 * binary floating point: they count requests, never money.
 */

import { Effect } from "effect"
import type { Pool } from "pg"
import { openMigratedPool, type PostgresStoreOptions } from "./PostgresStore.ts"

export interface RateBucketsOptions extends Pick<PostgresStoreOptions, "connectionString" | "schema"> {
  /** Connections of the limiter's own pool (default 4). */
  readonly poolMax?: number
  /**
   * Longest wait for the database, in ms (default 2,000): a statement or a
   * connection that takes longer fails, and `layerShared` counts the request
   * in the process's own bucket instead.
   */
  readonly timeoutMs?: number
  /** How often buckets full again are deleted, in ms (default 60,000). */
  readonly sweepEveryMs?: number
}

/** The row's refilled tokens: `$2` per second since `at`, at most `$3`. */
const refilled =
  "LEAST($3::float8, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.at)) * $2::float8)"

/**
 * Spends one token of bucket `$1` (`$2` tokens per second, `$3` at most); a new bucket starts full. The
 * row keeps the rate it was spent at, which the sweep measures it by. `at` never moves back: a statement
 * that started before another's but took the row lock after it must not count that time twice.
 */
const SPEND = `
INSERT INTO rate_buckets AS b (key, tokens, at, allowed, rps, burst)
VALUES ($1, $3::float8 - 1, statement_timestamp(), true, $2::float8, $3::float8)
ON CONFLICT (key) DO UPDATE SET
  tokens  = CASE WHEN ${refilled} >= 1 THEN ${refilled} - 1 ELSE ${refilled} END,
  allowed = ${refilled} >= 1,
  at      = GREATEST(b.at, statement_timestamp()),
  rps     = $2::float8,
  burst   = $3::float8
RETURNING tokens, allowed`

/** Deletes the buckets that are full again, each by its own rate (a missing bucket is full). */
const SWEEP = `
DELETE FROM rate_buckets AS b
 WHERE b.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - b.at)) * b.rps >= b.burst`

/**
 * The shared buckets over a pool of their own (scoped: the pool and the sweep
 * stop with the scope), the schema migrated first as the Store does.
 */
export const make = Effect.fnUntraced(function* (options: RateBucketsOptions) {
  const timeout = options.timeoutMs ?? 2_000
  const pool: Pool = yield* openMigratedPool({
    connectionString: options.connectionString,
    schema: options.schema,
    poolMax: options.poolMax ?? 4,
    connectTimeoutMs: timeout,
    // statement_timeout for a database that is slow; query_timeout for one that stopped answering at all
    statementTimeoutMs: timeout,
    queryTimeoutMs: timeout
  })
  const sweep = setInterval(() => {
    pool.query(SWEEP).catch(() => undefined)
  }, options.sweepEveryMs ?? 60_000)
  sweep.unref()
  yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(sweep)))
  return {
    spend: async (key: string, rps: number, burst: number) => {
      const { rows } = await pool.query<{ tokens: number; allowed: boolean }>(SPEND, [key, rps, burst])
      const row = rows[0]
      if (row === undefined) throw new Error("rate_buckets: the upsert returned no row")
      return { tokens: row.tokens, allowed: row.allowed }
    }
  }
})
