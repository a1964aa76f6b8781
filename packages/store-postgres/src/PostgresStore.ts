/**
 * The PostgreSQL Store: several API processes on one database.
 *
 * Layout (see `Migrations.ts`): `docs` holds every document (envelope columns
 * plus `data`, the engine's `Codec` text), `doc_keys` the unique secondary keys
 * (primary key (kind, key)), `ledger` the ledger lines (`numeric(39,0)`
 * amounts, read back as bigint from their decimal text).
 *
 * Units of work: each `transact` takes its own pooled connection. BEGIN
 * (READ COMMITTED) goes out with the unit's first write or locking read, and
 * COMMIT at the end; any failure, defect or interruption rolls back. Reads
 * before the first write run without a transaction: under READ COMMITTED each
 * statement has its own snapshot anyway, so they see exactly what they would
 * inside one, and a unit that only reads costs no BEGIN and no COMMIT. The
 * connection is pipelined (node-postgres `pipeline`): BEGIN travels with the
 * statement behind it, no round trip of its own.
 *
 * Round trips (each one costs far more than the statement it carries):
 *
 * - The unit's start snapshot is answered by its first statement when that is
 *   a plain `get` or `getByKey` (an extra column, from the very snapshot of
 *   that read); otherwise a snapshot query is pipelined in front of it.
 * - A row read by key brings its owner business row along (same statement,
 *   same snapshot, `LEFT JOIN`); a later `get` of that business in the unit is
 *   answered from it, unless the row is hot or the unit wrote it. The chain
 *   transfer's webhook targets need it; any decision taken on it is still
 *   checked by a versioned update, as for every read.
 * - `post` does not wait for its answer: the unit's next statement, or its
 *   COMMIT, goes out right behind it and reports its failure (the failure of a
 *   `post` is a StoreError that aborts the unit anyway; the unit can never
 *   commit without its ledger lines). Inserts and updates wait: their
 *   DuplicateKey and VersionConflict are answers at the call.
 *
 * A chain transfer is then 5 round trips (read the conversion and its business
 * by address, BEGIN + insert the identity, update the conversion, post + insert
 * the outbox row, COMMIT), down from 8. A transfer reported again writes
 * nothing but now takes BEGIN, the refused insert, the `clashes` query (an old
 * row or a race?) and COMMIT after the read, where reading its identity first
 * answered at once: first reports are the usual case.
 *
 * Why READ COMMITTED is enough (every guarantee below holds across processes,
 * because PostgreSQL enforces it, not this process):
 *
 * - No lost update: every update is `UPDATE … WHERE kind, id AND version =
 *   v - 1`. A concurrent writer of the row holds its row lock until it commits;
 *   our UPDATE waits, re-reads the committed row, no longer matches `v - 1`,
 *   changes 0 rows, and the unit fails with `VersionConflict` (the engine runs
 *   it again from scratch).
 * - Uniqueness of ids and keys: primary keys of `docs` and `doc_keys`. Inserts
 *   use `ON CONFLICT DO NOTHING`, so a clash leaves the transaction usable (as
 *   the in-memory store does) and is reported as `DuplicateKey`, or as
 *   `VersionConflict` when the clashing row was committed by a transaction
 *   that ran concurrently with this unit (invisible to its start snapshot):
 *   this unit read a stale world, and running it again sees the winner (a
 *   second report of a chain transfer then answers `applied: false`). A row
 *   whose `xact` no transaction of this cluster has had yet (at or beyond the
 *   next transaction id: rows restored from a dump of another, older
 *   cluster) counts as committed before the unit: without that, such a row
 *   would read as a race on every run, and a transfer reported again after a
 *   restore would fail for ever instead of answering `applied: false`.
 * - Decisions the engine takes on reads are always re-validated inside the
 *   same unit by a versioned update or a unique insert of the row read (the
 *   transfer identity, the conversion, the idempotency record, the invoice
 *   counter, the outbox claim, the payout), so snapshot anomalies between
 *   statements (READ COMMITTED takes one per statement) cannot break an
 *   invariant: what was read is exactly what the version check protects.
 *   The reads that are not re-validated (a business's name and webhook URL)
 *   feed no invariant.
 *   Stronger levels would add serialization failures without protecting
 *   anything more. SERIALIZABLE or REPEATABLE READ would also make a waiting
 *   writer fail instead of reading the winner's row (see hot rows).
 * - A unit never sees uncommitted data of another (no dirty reads), and
 *   everything it wrote (rows, keys, ledger lines, outbox rows, idempotency
 *   record) commits in one COMMIT or not at all.
 * - Serialization failures and deadlocks (40001, 40P01) become
 *   `VersionConflict`: the unit is simply run again.
 *
 * Hot rows: optimistic versions make N writers of one row retry in a herd (one
 * wins per round). When an update of a row loses (VersionConflict), the row
 * (and its keys) is marked hot in this process for a short while; reads of a
 * hot row in later units take its row lock (`FOR NO KEY UPDATE`), so writers
 * queue on PostgreSQL's lock instead of racing, and each then reads the
 * previous writer's committed version (READ COMMITTED re-reads after the
 * wait). Reads of cold rows take no lock and write nothing.
 */

import { userInfo } from "node:os"
import {
  Codec,
  type Doc,
  DuplicateKey,
  type Kind,
  type LedgerEntry,
  type Mode,
  type Scope,
  Store,
  StoreError,
  StorePurge,
  type Tx,
  unbalanced,
  VersionConflict
} from "@xaalis/engine"
import { Context, Effect, Layer } from "effect"
import { Pool, type PoolClient, type PoolConfig, type QueryConfig, type QueryResult, type QueryResultRow } from "pg"
import { fromQuery, isConnectionError, secretsOf, toStoreError } from "./errors.ts"
import { isPlainIdentifier, migrate } from "./Migrations.ts"

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (libpq URL; `?sslmode=…` and friends as node-postgres reads them). */
  readonly connectionString: string
  /**
   * The schema holding the tables (created if missing; `[a-z_][a-z0-9_]*`).
   * Set as the `search_path` of every pooled connection. Default: the
   * connection's own search_path (usually `public`).
   */
  readonly schema?: string | undefined
  /** Connections in the pool (default 10): the most units of work this process runs at once. */
  readonly poolMax?: number | undefined
  /**
   * The client's own limit on each statement, in ms (node-postgres
   * `query_timeout`; default 30,000; 0: none). A database that stops answering
   * altogether (a network partition or a hung host: no reset, so no error and
   * no `statement_timeout`) fails the statement, and so the unit of work, with
   * a `StoreError`, and the connection is dropped from the pool instead of
   * being reused out of step. Without it such a unit, and the request behind
   * it, waited until the operating system gave up on the TCP connection. A
   * COMMIT that times out is in doubt, as one whose connection was reset: the
   * caller retries (idempotency keys, chain transaction hashes and the unique
   * keys make a retry apply once). The sessions also get PostgreSQL's
   * `lock_timeout`, a little shorter (29 s by default), so that a statement
   * waiting on a lock is cancelled by the server, releasing what its unit
   * holds, rather than abandoned by the client alone.
   */
  readonly queryTimeoutMs?: number | undefined
}

/** `PostgresStoreOptions.queryTimeoutMs` when not given. */
export const defaultQueryTimeoutMs = 30_000

/** A pool's options beyond the Store's (the shared rate buckets wait less than a unit of work may). */
export interface PoolOptions extends PostgresStoreOptions {
  /** Longest wait for a connection, in ms (default 10,000). */
  readonly connectTimeoutMs?: number | undefined
  /** PostgreSQL's `statement_timeout` for the pool's sessions, in ms (default: the server's). */
  readonly statementTimeoutMs?: number | undefined
}

// ---------------------------------------------------------------------------
// Hot rows

/** How long a row stays hot after its last lost update. */
const hot_ms = 2_000
/** Most hot entries remembered (a burst of conflicts cannot grow memory without bound). */
const hot_max = 10_000

class HotRows {
  private readonly until = new Map<string, number>()

  has(key: string): boolean {
    if (this.until.size === 0) return false
    const t = this.until.get(key)
    if (t === undefined) return false
    if (t > performance.now()) return true
    this.until.delete(key)
    return false
  }

  mark(key: string): void {
    const now = performance.now()
    if (this.until.size >= hot_max) {
      for (const [k, t] of this.until) if (t <= now) this.until.delete(k)
      if (this.until.size >= hot_max) this.until.clear()
    }
    this.until.set(key, now + hot_ms)
  }
}

const rowKey = (kind: Kind, id: string) => `${kind}\u0000${id}`
const keyKey = (kind: Kind, key: string) => `${kind}\u0001${key}`

// ---------------------------------------------------------------------------
// SQL

const COLS = "id, business_id, mode, created_at, version, due_at, keys, data"
const D_COLS = "d.id, d.business_id, d.mode, d.created_at, d.version, d.due_at, d.keys, d.data"

/** The owner business of a row read by key, read ahead in the same statement (`b_` columns). */
const B_COLS =
  "b.id AS b_id, b.business_id AS b_business_id, b.mode AS b_mode, b.created_at AS b_created_at, b.version AS b_version, b.due_at AS b_due_at, b.keys AS b_keys, b.data AS b_data"
const OWNER = "LEFT JOIN docs b ON b.kind = 'business' AND b.id = d.business_id"
/** A unit's first statement, when it is a plain read, carries the unit's start snapshot (one row even when nothing matches). */
const START = "(SELECT pg_current_snapshot()::text AS snapshot) s"

const sql = {
  snapshot: "SELECT pg_current_snapshot()::text AS snapshot",
  begin: "BEGIN ISOLATION LEVEL READ COMMITTED",
  get: `SELECT ${COLS} FROM docs WHERE kind = $1 AND id = $2`,
  getFirst: `SELECT s.snapshot, ${D_COLS} FROM ${START} LEFT JOIN docs d ON d.kind = $1 AND d.id = $2`,
  getLocked: `SELECT ${COLS} FROM docs WHERE kind = $1 AND id = $2 FOR NO KEY UPDATE`,
  getByKey: `SELECT ${D_COLS}, ${B_COLS} FROM doc_keys k JOIN docs d ON d.kind = k.kind AND d.id = k.id ${OWNER}
    WHERE k.kind = $1 AND k.key = $2`,
  getByKeyFirst: `SELECT s.snapshot, ${D_COLS}, ${B_COLS} FROM ${START}
    LEFT JOIN (doc_keys k JOIN docs d ON d.kind = k.kind AND d.id = k.id) ON k.kind = $1 AND k.key = $2 ${OWNER}`,
  getByKeyLocked: `SELECT ${D_COLS} FROM doc_keys k JOIN docs d ON d.kind = k.kind AND d.id = k.id WHERE k.kind = $1 AND k.key = $2 FOR NO KEY UPDATE OF d`,
  insert: `INSERT INTO docs (kind, id, business_id, mode, created_at, version, due_at, keys, data)
    VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8) ON CONFLICT DO NOTHING`,
  insertWithKeys: `WITH k AS (
      INSERT INTO doc_keys (kind, key, id) SELECT DISTINCT $1::text, x, $2::text FROM unnest($7::text[]) AS x
      ON CONFLICT DO NOTHING RETURNING key
    ), d AS (
      INSERT INTO docs (kind, id, business_id, mode, created_at, version, due_at, keys, data)
      VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING 1
    )
    SELECT (SELECT count(*) FROM d)::int AS inserted, ARRAY(SELECT key FROM k) AS claimed`,
  update: `UPDATE docs SET business_id = $3, mode = $4, created_at = $5, version = $6, due_at = $7, data = $8
    WHERE kind = $1 AND id = $2 AND version = $9`,
  lockVersion: "SELECT version, keys FROM docs WHERE kind = $1 AND id = $2 FOR NO KEY UPDATE",
  claimKeys: `INSERT INTO doc_keys (kind, key, id) SELECT DISTINCT $1::text, x, $2::text FROM unnest($3::text[]) AS x
    ON CONFLICT DO NOTHING RETURNING key`,
  updateWithKeys: `WITH released AS (DELETE FROM doc_keys WHERE kind = $1 AND id = $2 AND key = ANY($11::text[]))
    UPDATE docs SET business_id = $3, mode = $4, created_at = $5, version = $6, due_at = $7, data = $8, keys = $10
    WHERE kind = $1 AND id = $2 AND version = $9`,
  unclaim: "DELETE FROM doc_keys WHERE kind = $1 AND id = $2 AND key = ANY($3::text[])",
  uninsert: "DELETE FROM docs WHERE kind = $1 AND id = $2",
  clashes: `SELECT NULL::text AS key, xact = pg_current_xact_id_if_assigned() AS own,
      pg_visible_in_snapshot(xact, $3::pg_snapshot) OR xact >= pg_snapshot_xmax(pg_current_snapshot()) AS old
      FROM docs WHERE kind = $1 AND id = $2 AND $5::boolean
    UNION ALL
    SELECT key, xact = pg_current_xact_id_if_assigned(),
      pg_visible_in_snapshot(xact, $3::pg_snapshot) OR xact >= pg_snapshot_xmax(pg_current_snapshot())
      FROM doc_keys WHERE kind = $1 AND key = ANY($4::text[])`,
  list: `SELECT t.total, p.* FROM (SELECT count(*)::int AS total FROM docs WHERE kind = $1 AND business_id = $2 AND mode = $3) t
    LEFT JOIN LATERAL (
      SELECT ${COLS} FROM docs WHERE kind = $1 AND business_id = $2 AND mode = $3
      ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5
    ) p ON true
    ORDER BY p.created_at DESC, p.id DESC`,
  due: `SELECT ${COLS} FROM docs WHERE kind = $1 AND due_at IS NOT NULL AND due_at <= $2 ORDER BY due_at, id LIMIT $3`,
  post: `INSERT INTO ledger (id, transaction_id, business_id, mode, account, currency, amount, created_at, cause)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::bigint[], $9::text[])`,
  balances: `SELECT account, currency, sum(amount)::text AS amount FROM ledger
    WHERE business_id = $1 AND mode = $2 GROUP BY account, currency`,
  ledger: `SELECT id, transaction_id, business_id, mode, account, currency, amount::text AS amount, created_at, cause
    FROM ledger ORDER BY seq`,
  /**
   * `StorePurge`, in one statement: the due rows, locked (a row a unit is
   * writing is skipped, for the next purge), deleted with their keys.
   */
  purge: `WITH due AS (
      SELECT kind, id FROM docs WHERE kind = $1 AND due_at IS NOT NULL AND due_at <= $2
      ORDER BY due_at, id LIMIT $3 FOR UPDATE SKIP LOCKED
    ), keys AS (
      DELETE FROM doc_keys k USING due WHERE k.kind = due.kind AND k.id = due.id
    ), gone AS (
      DELETE FROM docs d USING due WHERE d.kind = due.kind AND d.id = due.id RETURNING 1
    )
    SELECT count(*)::int AS n FROM gone`
} as const

/** Named (server-side prepared, once per connection) statements. */
const named = (name: keyof typeof sql, values: ReadonlyArray<unknown>): QueryConfig => ({
  name: `xaalis_${name}`,
  text: sql[name],
  values: values as Array<unknown>
})

/**
 * Statements that only read committed rows: before a unit's first write they
 * run without a transaction (each statement is then its own snapshot, exactly
 * as under READ COMMITTED inside one), so a read-only unit costs no BEGIN and
 * no COMMIT. Everything else (writes, locking reads) first opens the unit's
 * transaction.
 */
const plainReads = new Set(
  ["get", "getFirst", "getByKey", "getByKeyFirst", "list", "due", "balances", "clashes"].map((n) => `xaalis_${n}`)
)

interface DocRow extends QueryResultRow {
  /** null only in the one row a unit's first read answers when nothing matched (`rowsToDocs` skips it). */
  readonly id: string
  readonly business_id: string | null
  readonly mode: Mode | null
  /** int8 arrives as decimal text. */
  readonly created_at: string
  readonly version: number
  readonly due_at: string | null
  readonly keys: Array<string>
  readonly data: string
}

/** A read by key: the row, then its owner business read ahead (`b_id` null when there is none). */
interface OwnedRow extends DocRow {
  readonly b_id: string | null
  readonly b_business_id: string | null
  readonly b_mode: Mode | null
  readonly b_created_at: string
  readonly b_version: number
  readonly b_due_at: string | null
  readonly b_keys: Array<string>
  readonly b_data: string
}

const ownerOf = (r: OwnedRow): DocRow => ({
  id: r.b_id as string,
  business_id: r.b_business_id,
  mode: r.b_mode,
  created_at: r.b_created_at,
  version: r.b_version,
  due_at: r.b_due_at,
  keys: r.b_keys,
  data: r.b_data
})

const toDoc = (kind: Kind, r: DocRow): Doc => ({
  kind,
  id: r.id,
  business_id: r.business_id,
  mode: r.mode,
  created_at: Number(r.created_at),
  version: r.version,
  due_at: r.due_at === null ? null : Number(r.due_at),
  keys: r.keys,
  data: Codec.decode(r.data)
})

const sameKeys = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a === b || (a.length === b.length && a.every((k, i) => k === b[i]))

// ---------------------------------------------------------------------------
// Units of work

interface Target {
  readonly kind: Kind
  readonly id: string
}

/** One unit of work: its connection, its start snapshot, what it has seen of rows' versions. */
interface Unit {
  readonly client: PoolClient
  /**
   * `pg_current_snapshot()` just before the unit's first statement: which
   * commits its reads could see from the start. Sent with that statement.
   */
  snapshot: Promise<string> | undefined
  /** BEGIN was sent (by the first write or locking read); its outcome, checked before COMMIT. */
  began: Promise<unknown> | undefined
  /**
   * Owner business rows read ahead with rows read by key (by `rowKey`), as of that read's snapshot: a
   * later `get` of one in this unit is answered from here, unless the row is hot or the unit wrote it.
   */
  readonly ahead: Map<string, DocRow>
  /** Version and keys of each row read or written by this unit (keys of a given version never change). */
  readonly seen: Map<string, { readonly version: number; readonly keys: ReadonlyArray<string> }>
  /**
   * Writes sent without waiting for their answer (see `defer`): resolves to undefined when all
   * succeeded, else to the first one's error. Settled by the next statement or by COMMIT.
   */
  deferred: Promise<StoreError | VersionConflict | undefined> | undefined
  /** The first failed statement: the transaction is aborted and can only roll back. */
  failed: StoreError | VersionConflict | undefined
  /** The connection itself failed: destroy it rather than pool it. */
  broken: boolean
  /** COMMIT was sent (whatever its outcome): no ROLLBACK needed. */
  done: boolean
  last: Target
  /** Listens for the connection dying between statements (a checked-out client has no other listener). */
  readonly onError: () => void
}

const nobody: Target = { kind: "counter", id: "(unit of work)" }

/** A deferred statement's failure, reported by the statement behind it. */
class Deferred {
  readonly error: StoreError | VersionConflict
  constructor(error: StoreError | VersionConflict) {
    this.error = error
  }
}

const aborted = (what: string) =>
  new StoreError({ message: `${what} failed: an earlier statement of this unit of work failed` })

/** The start snapshot a unit's first statement answers (`snapshot` column of its first row). */
const snapshotOf = (answer: Promise<QueryResult<QueryResultRow>>): Promise<string> => {
  const snapshot = answer.then((r) => {
    const text: unknown = r.rows[0]?.snapshot
    if (typeof text !== "string") throw new Error("no snapshot")
    return text
  })
  snapshot.catch(() => undefined)
  return snapshot
}

/**
 * A pool over `options` (scoped: it closes with the scope) whose schema has
 * been brought to the latest version: what the Store and the shared rate
 * buckets (`RateBuckets.ts`) each start from.
 */
export const openMigratedPool = Effect.fnUntraced(function* (options: PoolOptions) {
  const secrets = secretsOf(options.connectionString)
  const schema = options.schema
  if (schema !== undefined && !isPlainIdentifier(schema)) {
    return yield* Effect.fail(
      new StoreError({ message: "PostgresStore: schema must be a plain lower-case identifier ([a-z_][a-z0-9_]*)" })
    )
  }
  const pool = yield* Effect.acquireRelease(
    Effect.sync(() => new Pool(poolConfig(options))),
    (p) => Effect.promise(() => p.end().catch(() => undefined))
  )
  // an idle pooled connection that dies (server restart) must not crash the process; the pool drops it
  pool.on("error", () => undefined)

  // the migration waits as long as the Store's would (an advisory lock another process holds, a slow
  // start), whatever timeouts the pool's requests have: on a pool of its own then, closed after it
  const timed =
    options.connectTimeoutMs !== undefined ||
    options.statementTimeoutMs !== undefined ||
    (options.queryTimeoutMs ?? defaultQueryTimeoutMs) > 0
  const migrating = timed
    ? new Pool(
        poolConfig({
          ...options,
          poolMax: 1,
          connectTimeoutMs: undefined,
          statementTimeoutMs: undefined,
          queryTimeoutMs: 0
        })
      )
    : pool
  migrating.on("error", () => undefined)
  yield* Effect.tryPromise({
    try: async () => {
      const client = await migrating.connect()
      let broken = false
      const onError = () => {
        broken = true
      }
      client.on("error", onError)
      try {
        await migrate(client, { schema })
      } catch (e) {
        broken ||= isConnectionError(e)
        throw e
      } finally {
        client.off("error", onError)
        client.release(broken)
        if (migrating !== pool) await migrating.end().catch(() => undefined)
      }
    },
    catch: (e) =>
      e instanceof Error && e.name === "DatabaseTooNew"
        ? new StoreError({ message: `PostgresStore: ${e.message}` })
        : toStoreError(e, "PostgresStore: connecting and migrating the schema", secrets)
  })
  return pool
})

/** The Store and its `StorePurge` over one pool. */
const makeBoth = Effect.fnUntraced(function* (options: PostgresStoreOptions) {
  const secrets = secretsOf(options.connectionString)
  const pool = yield* openMigratedPool(options)
  const hot = new HotRows()

  /**
   * Sends one statement of `unit` (pipelined: nothing waits here). `first`: the same plain read, also
   * answering the start snapshot (column `snapshot`), sent instead when it is the unit's first
   * statement. Otherwise the unit's first statement takes the start snapshot in a statement of its own,
   * and its first write or locking read opens the transaction: both go out corked, in the same write
   * as the statement behind them, without waiting for their answers.
   */
  const send = <R extends QueryResultRow>(
    unit: Unit,
    config: QueryConfig,
    first?: QueryConfig
  ): Promise<QueryResult<R>> => {
    const client = unit.client
    const opening = unit.snapshot === undefined
    if (opening && first !== undefined) {
      const answer = client.query<R & { snapshot: string }>(first)
      unit.snapshot = snapshotOf(answer)
      return answer
    }
    const beginning = unit.began === undefined && !plainReads.has(config.name ?? "")
    if (!opening && !beginning) return client.query<R>(config)
    const stream = client.connection.stream
    stream.cork()
    try {
      if (opening) unit.snapshot = snapshotOf(client.query<{ snapshot: string }>(sql.snapshot))
      if (beginning) {
        const began = client.query(sql.begin)
        began.catch(() => undefined)
        unit.began = began
      }
      return client.query<R>(config)
    } finally {
      stream.uncork()
    }
  }

  /**
   * What a failed statement of `unit` becomes; the unit is then aborted (`unit.failed`, set later by
   * `settle` for a deferred statement, so that the statement behind it reports this very error).
   */
  const failure = (
    unit: Unit,
    e: unknown,
    what: string,
    target: Target,
    deferred = false
  ): StoreError | VersionConflict => {
    if (e instanceof Deferred) return e.error
    const error = fromQuery(e, what, target, secrets)
    if (!deferred) unit.failed = error
    if (isConnectionError(e)) unit.broken = true
    if (error instanceof VersionConflict) markHot(unit, target)
    return error
  }

  /**
   * The outcome of the unit's deferred statements (see `post`), once answered: undefined when they
   * succeeded, otherwise the first one's error, which is then the unit's failure.
   */
  const settle = async (unit: Unit): Promise<void> => {
    const deferred = unit.deferred
    if (deferred === undefined) return
    const error = await deferred
    if (unit.deferred === deferred) unit.deferred = undefined
    if (error !== undefined) {
      unit.failed ??= error
      throw new Deferred(error)
    }
  }

  /**
   * Runs one statement of `unit` and waits for its answer; the first failure aborts the unit (later
   * statements are not sent). A deferred statement's failure, answered before this one, is reported
   * here instead (the transaction was aborted by it).
   */
  const run = <R extends QueryResultRow>(
    unit: Unit,
    config: QueryConfig,
    what: string,
    target: Target,
    first?: QueryConfig
  ): Effect.Effect<QueryResult<R>, StoreError | VersionConflict> =>
    Effect.suspend(() => {
      if (unit.failed !== undefined) return Effect.fail(aborted(what))
      unit.last = target
      return Effect.tryPromise({
        try: () => {
          const answer = send<R>(unit, config, first)
          if (unit.deferred === undefined) return answer
          answer.catch(() => undefined)
          return settle(unit).then(() => answer)
        },
        catch: (e) => failure(unit, e, what, target)
      })
    })

  /**
   * Sends one write of `unit` without waiting for its answer (for writes whose only failure is a
   * StoreError: `post`). The unit's next statement (or its COMMIT) goes out right behind it and
   * reports its failure; the unit can never commit without it.
   */
  const defer = (
    unit: Unit,
    config: QueryConfig,
    what: string,
    target: Target
  ): Effect.Effect<void, StoreError | VersionConflict> =>
    Effect.suspend(() => {
      if (unit.failed !== undefined) return Effect.fail(aborted(what))
      unit.last = target
      let answer: Promise<unknown>
      try {
        answer = send(unit, config)
      } catch (e) {
        return Effect.fail(failure(unit, e, what, target))
      }
      const outcome = answer.then(
        () => undefined,
        (e: unknown) => failure(unit, e, what, target, true)
      )
      const before = unit.deferred
      unit.deferred = before === undefined ? outcome : before.then((error) => error ?? outcome)
      return Effect.void
    })

  /** A lost update of `target`: it and its keys are hot for a while in this process. */
  const markHot = (unit: Unit, target: Target) => {
    hot.mark(rowKey(target.kind, target.id))
    const seen = unit.seen.get(rowKey(target.kind, target.id))
    if (seen !== undefined) for (const k of seen.keys) hot.mark(keyKey(target.kind, k))
  }

  const conflict = (unit: Unit, target: Target) => {
    markHot(unit, target)
    return new VersionConflict({ kind: target.kind, id: target.id })
  }

  const remember = (unit: Unit, doc: Pick<Doc, "kind" | "id" | "version" | "keys">) => {
    unit.seen.set(rowKey(doc.kind, doc.id), { version: doc.version, keys: doc.keys })
  }

  /** The rows read (a unit's first read answers one row of nulls when nothing matched), remembered. */
  const rowsToDocs = (unit: Unit, kind: Kind, rows: ReadonlyArray<DocRow>): Array<Doc> => {
    const docs: Array<Doc> = []
    for (const r of rows) {
      if (r.id === null) continue
      const doc = toDoc(kind, r)
      remember(unit, doc)
      docs.push(doc)
    }
    return docs
  }

  /**
   * After an insert or key claim of `doc` clashed: DuplicateKey when every
   * clashing row was there before this unit began (or is this unit's own),
   * VersionConflict when one was committed by a concurrent transaction (or
   * has vanished since): this unit's reads were stale, run it again.
   */
  const clash = (
    unit: Unit,
    doc: Doc,
    idClash: boolean,
    keys: ReadonlyArray<string>
  ): Effect.Effect<DuplicateKey | VersionConflict, StoreError | VersionConflict> =>
    Effect.map(
      Effect.flatMap(
        Effect.tryPromise({
          try: () => unit.snapshot ?? Promise.reject(new Error("a clash before any statement")),
          catch: (e) => toStoreError(e, "starting a unit of work", secrets)
        }),
        (snapshot) =>
          run<{ key: string | null; own: boolean | null; old: boolean }>(
            unit,
            named("clashes", [doc.kind, doc.id, snapshot, keys, idClash]),
            `checking a clash of ${doc.kind} ${doc.id}`,
            doc
          )
      ),
      ({ rows }) => {
        const concurrent = rows.some((r) => r.own !== true && r.old !== true)
        const found = new Set(rows.map((r) => r.key))
        const vanished = (idClash && !found.has(null)) || keys.some((k) => !found.has(k))
        if (concurrent || vanished) return new VersionConflict({ kind: doc.kind, id: doc.id })
        if (idClash) return new DuplicateKey({ kind: doc.kind, key: `id:${doc.id}` })
        return new DuplicateKey({ kind: doc.kind, key: doc.keys.find((k) => keys.includes(k)) ?? keys[0] ?? "" })
      }
    )

  const params = (doc: Doc) => [
    doc.kind,
    doc.id,
    doc.business_id,
    doc.mode,
    doc.created_at,
    doc.due_at,
    doc.keys,
    Codec.encode(doc.data)
  ]

  const txOf = (unit: Unit): Tx => ({
    get: (kind, id) =>
      Effect.suspend(() => {
        if (id.includes("\u0000")) return Effect.succeed(undefined) // no row can have it: text cannot hold NUL
        const row = rowKey(kind, id)
        if (hot.has(row)) {
          return Effect.map(
            run<DocRow>(unit, named("getLocked", [kind, id]), `reading ${kind} ${id}`, { kind, id }),
            ({ rows }) => rowsToDocs(unit, kind, rows)[0]
          )
        }
        const ahead = unit.ahead.get(row)
        if (ahead !== undefined && unit.failed === undefined) return Effect.succeed(rowsToDocs(unit, kind, [ahead])[0])
        return Effect.map(
          run<DocRow>(
            unit,
            named("get", [kind, id]),
            `reading ${kind} ${id}`,
            { kind, id },
            named("getFirst", [kind, id])
          ),
          ({ rows }) => rowsToDocs(unit, kind, rows)[0]
        )
      }) as Effect.Effect<Doc | undefined, StoreError>,

    getByKey: (kind, key) =>
      Effect.suspend(() => {
        if (key.includes("\u0000")) return Effect.succeed(undefined) // as in get
        const what = `reading ${kind} by key`
        const target = { kind, id: `key:${key}` }
        if (hot.has(keyKey(kind, key))) {
          return Effect.map(
            run<DocRow>(unit, named("getByKeyLocked", [kind, key]), what, target),
            ({ rows }) => rowsToDocs(unit, kind, rows)[0]
          )
        }
        return Effect.map(
          run<OwnedRow>(unit, named("getByKey", [kind, key]), what, target, named("getByKeyFirst", [kind, key])),
          ({ rows }) => {
            for (const r of rows) {
              if (r.b_id !== null && kind !== "business") unit.ahead.set(rowKey("business", r.b_id), ownerOf(r))
            }
            return rowsToDocs(unit, kind, rows)[0]
          }
        )
      }) as Effect.Effect<Doc | undefined, StoreError>,

    insert: (doc) =>
      Effect.suspend((): Effect.Effect<void, StoreError | DuplicateKey | VersionConflict> => {
        const what = `inserting ${doc.kind} ${doc.id}`
        unit.ahead.delete(rowKey(doc.kind, doc.id))
        if (doc.keys.length === 0) {
          return Effect.flatMap(run(unit, named("insert", params(doc)), what, doc), (r) => {
            if (r.rowCount === 1) {
              remember(unit, { ...doc, version: 1 })
              return Effect.void
            }
            return Effect.flatMap(clash(unit, doc, true, []), Effect.fail)
          })
        }
        return Effect.flatMap(
          run<{ inserted: number; claimed: Array<string> }>(unit, named("insertWithKeys", params(doc)), what, doc),
          ({ rows }) => {
            const inserted = rows[0]?.inserted === 1
            const claimed = rows[0]?.claimed ?? []
            const missing = [...new Set(doc.keys)].filter((k) => !claimed.includes(k))
            if (inserted && missing.length === 0) {
              remember(unit, { ...doc, version: 1 })
              return Effect.void
            }
            // undo the half that went in, then report the clash
            return clash(unit, doc, !inserted, missing).pipe(
              Effect.tap(() =>
                claimed.length > 0 ? run(unit, named("unclaim", [doc.kind, doc.id, claimed]), what, doc) : Effect.void
              ),
              Effect.tap(() => (inserted ? run(unit, named("uninsert", [doc.kind, doc.id]), what, doc) : Effect.void)),
              Effect.flatMap(Effect.fail)
            )
          }
        )
      }) as Effect.Effect<void, StoreError | DuplicateKey>,

    update: (doc) =>
      Effect.suspend((): Effect.Effect<void, StoreError | VersionConflict | DuplicateKey> => {
        const what = `updating ${doc.kind} ${doc.id}`
        unit.ahead.delete(rowKey(doc.kind, doc.id))
        const previous = doc.version - 1
        const seen = unit.seen.get(rowKey(doc.kind, doc.id))
        const values = [
          doc.kind,
          doc.id,
          doc.business_id,
          doc.mode,
          doc.created_at,
          doc.version,
          doc.due_at,
          Codec.encode(doc.data),
          previous
        ]
        if (seen !== undefined && seen.version === previous && sameKeys(seen.keys, doc.keys)) {
          // the common case: the unit read this version and keeps its keys
          return Effect.flatMap(run(unit, named("update", values), what, doc), (r) => {
            if (r.rowCount !== 1) return Effect.fail(conflict(unit, doc))
            remember(unit, doc)
            return Effect.void
          })
        }
        return Effect.gen(function* () {
          const locked = yield* run<{ version: number; keys: Array<string> }>(
            unit,
            named("lockVersion", [doc.kind, doc.id]),
            what,
            doc
          )
          const current = locked.rows[0]
          if (current === undefined || current.version !== previous) return yield* Effect.fail(conflict(unit, doc))
          const released = current.keys.filter((k) => !doc.keys.includes(k))
          const wanted = [...new Set(doc.keys.filter((k) => !current.keys.includes(k)))]
          if (wanted.length > 0) {
            const claim = yield* run<{ key: string }>(unit, named("claimKeys", [doc.kind, doc.id, wanted]), what, doc)
            const claimed = claim.rows.map((r) => r.key)
            const missing = wanted.filter((k) => !claimed.includes(k))
            if (missing.length > 0) {
              const error = yield* clash(unit, doc, false, missing)
              if (claimed.length > 0) yield* run(unit, named("unclaim", [doc.kind, doc.id, claimed]), what, doc)
              return yield* Effect.fail(error)
            }
          }
          const r = yield* run(unit, named("updateWithKeys", [...values, doc.keys, released]), what, doc)
          if (r.rowCount !== 1) return yield* Effect.fail(conflict(unit, doc))
          remember(unit, doc)
        })
      }),

    list: (kind, scope, page) =>
      Effect.map(
        run<DocRow & { total: number }>(
          unit,
          named("list", [kind, scope.business_id, scope.mode, page.limit, page.offset]),
          `listing ${kind}`,
          { kind, id: "(list)" }
        ),
        ({ rows }) => ({
          docs: rowsToDocs(
            unit,
            kind,
            rows.filter((r) => r.id !== null)
          ),
          total: rows[0]?.total ?? 0
        })
      ) as Effect.Effect<{ readonly docs: ReadonlyArray<Doc>; readonly total: number }, StoreError>,

    due: (kind, now, limit) =>
      Effect.map(
        run<DocRow>(unit, named("due", [kind, now, limit]), `reading due ${kind}`, { kind, id: "(due)" }),
        ({ rows }) => rowsToDocs(unit, kind, rows)
      ) as Effect.Effect<ReadonlyArray<Doc>, StoreError>,

    post: (entries) =>
      Effect.suspend((): Effect.Effect<void, StoreError | VersionConflict> => {
        if (entries.length === 0) return Effect.void
        const broken = unbalanced(entries)
        if (broken.length > 0) {
          return Effect.fail(new StoreError({ message: `unbalanced ledger transaction ${broken.join(", ")}` }))
        }
        const cols: Array<Array<string>> = Array.from({ length: 9 }, () => [])
        for (const e of entries) {
          cols[0]?.push(e.id)
          cols[1]?.push(e.transaction_id)
          cols[2]?.push(e.business_id)
          cols[3]?.push(e.mode)
          cols[4]?.push(e.account)
          cols[5]?.push(e.currency)
          cols[6]?.push(e.amount.toString())
          cols[7]?.push(String(e.created_at))
          cols[8]?.push(e.cause)
        }
        return defer(unit, named("post", cols), "posting ledger lines", { kind: "counter", id: "(ledger)" })
      }) as Effect.Effect<void, StoreError>,

    balances: (scope: Scope) =>
      Effect.map(
        run<{ account: string; currency: "GMD" | "USD"; amount: string }>(
          unit,
          named("balances", [scope.business_id, scope.mode]),
          "reading balances",
          { kind: "counter", id: "(ledger)" }
        ),
        ({ rows }) => rows.map((r) => ({ account: r.account, currency: r.currency, amount: BigInt(r.amount) }))
      ) as Effect.Effect<
        ReadonlyArray<{ readonly account: string; readonly currency: "GMD" | "USD"; readonly amount: bigint }>,
        StoreError
      >
  })

  const begin: Effect.Effect<Unit, StoreError> = Effect.tryPromise({
    try: async (): Promise<Unit> => {
      const client = await pool.connect()
      const unit: Unit = {
        client,
        snapshot: undefined,
        began: undefined,
        ahead: new Map(),
        deferred: undefined,
        seen: new Map(),
        failed: undefined,
        broken: false,
        done: false,
        last: nobody,
        onError: () => {
          unit.broken = true
        }
      }
      client.on("error", unit.onError)
      return unit
    },
    catch: (e) => toStoreError(e, "starting a unit of work", secrets)
  })

  const commit = (unit: Unit): Effect.Effect<void, StoreError | VersionConflict> =>
    Effect.suspend(() => {
      if (unit.failed !== undefined) return Effect.fail(unit.failed)
      const began = unit.began
      // a unit that only read has nothing to commit
      if (began === undefined) return Effect.void
      unit.done = true
      return Effect.tryPromise({
        try: async () => {
          // pipelined behind the unit's last statements; a deferred write that failed has aborted the
          // transaction (COMMIT then answers ROLLBACK) and is the error reported
          const committed = unit.client.query("COMMIT")
          committed.catch(() => undefined)
          await began
          await settle(unit)
          return await committed
        },
        catch: (e) => {
          if (e instanceof Deferred) return e.error
          if (isConnectionError(e)) unit.broken = true
          return fromQuery(e, "committing a unit of work", unit.last, secrets)
        }
      }).pipe(
        Effect.flatMap((r) =>
          r.command === "COMMIT"
            ? Effect.void
            : Effect.fail(new StoreError({ message: "committing a unit of work failed: it was rolled back" }))
        )
      )
    })

  const end = (unit: Unit): Effect.Effect<void> =>
    Effect.promise(async () => {
      // a broken connection is dropped, which rolls its transaction back; a ROLLBACK sent on it could wait
      // for the whole query timeout again (a silent database) or be read out of step
      if (unit.began !== undefined && !unit.done && !unit.broken) {
        try {
          await unit.client.query("ROLLBACK")
        } catch {
          unit.broken = true
        }
      }
      // the pipelined snapshot query and deferred writes are answered before the connection goes back to the pool
      await unit.snapshot?.catch(() => {
        unit.broken = true
      })
      await unit.deferred
      unit.client.off("error", unit.onError)
      unit.client.release(unit.broken)
    })

  const transact = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.acquireUseRelease(
      begin,
      (unit) => Effect.flatMap(work(txOf(unit)), (a) => Effect.as(commit(unit), a)),
      end
    ) as Effect.Effect<A, E | StoreError, R>

  const ledger: Effect.Effect<ReadonlyArray<LedgerEntry>, StoreError> = Effect.tryPromise({
    try: async () => {
      const { rows } = await pool.query<{
        id: string
        transaction_id: string
        business_id: string
        mode: Mode
        account: string
        currency: "GMD" | "USD"
        amount: string
        created_at: string
        cause: string
      }>(named("ledger", []))
      return rows.map(
        (r): LedgerEntry => ({
          id: r.id,
          transaction_id: r.transaction_id,
          business_id: r.business_id,
          mode: r.mode,
          account: r.account,
          currency: r.currency,
          amount: BigInt(r.amount),
          created_at: Number(r.created_at),
          cause: r.cause
        })
      )
    },
    catch: (e) => toStoreError(e, "reading the ledger", secrets)
  })

  const purge = StorePurge.of({
    purgeDue: (kind, before, limit) =>
      Effect.tryPromise({
        try: async () => {
          const { rows } = await pool.query<{ n: number }>(
            named("purge", [kind, before, Math.max(0, Math.trunc(limit))])
          )
          return rows[0]?.n ?? 0
        },
        catch: (e) => toStoreError(e, "purging", secrets)
      })
  })
  return { store: Store.of({ transact, ledger }), purge }
})

/**
 * The Store over a pool of `poolMax` connections (scoped: the pool closes with
 * the scope). `layer` provides it with its `StorePurge`.
 */
export const make = (options: PostgresStoreOptions) => Effect.map(makeBoth(options), ({ store }) => store)

/**
 * The pool's configuration: `schema` goes into the `options` startup parameter
 * (`-c search_path=…`), so every connection the pool opens uses it from its
 * first statement. A connection string that carries its own `options` keeps
 * them (ours are appended). A URL without a user name connects as the
 * operating-system user when neither PGUSER nor USER says otherwise, as libpq
 * (psql) does; node-postgres alone would send no user at all.
 */
const poolConfig = (options: PoolOptions): PoolConfig => {
  const queryTimeout = options.queryTimeoutMs ?? defaultQueryTimeoutMs
  const lockTimeout = lockTimeoutFor(queryTimeout)
  const base: PoolConfig = {
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
    ...(lockTimeout === undefined ? {} : { lock_timeout: lockTimeout }),
    // 0 is none for node-postgres too
    query_timeout: queryTimeout,
    idleTimeoutMillis: 30_000,
    application_name: "xaalis",
    // a process that stops (SIGSTOP, a debugger, a hung event loop) in the middle of a unit must not hold
    // its row locks for ever: the server ends such a session after a minute (units never idle for long)
    idle_in_transaction_session_timeout: 60_000,
    // BEGIN and each unit's start snapshot go out right behind the unit's first statement
    pipeline: true
  }
  let connectionString = options.connectionString
  let extra: string | undefined = options.schema === undefined ? undefined : `-c search_path=${options.schema}`
  try {
    const url = new URL(connectionString)
    if (url.username === "" && !process.env.PGUSER && !process.env.USER) {
      url.username = encodeURIComponent(userInfo().username)
    }
    const given = url.searchParams.get("options")
    if (given !== null && extra !== undefined) {
      url.searchParams.set("options", `${given} ${extra}`)
      extra = undefined
    }
    connectionString = url.toString()
  } catch {
    // not a URL: node-postgres reports it when connecting
  }
  return extra === undefined ? { ...base, connectionString } : { ...base, connectionString, options: extra }
}

/**
 * PostgreSQL's `lock_timeout` for a client-side `query_timeout` (none when that
 * is 0): a little shorter, so that a statement waiting on a lock is cancelled
 * by the server, which then releases what its unit holds, before the client
 * gives up on it. A client that gave up alone left the statement waiting in
 * the server, its unit's locks and unique keys held, while the next unit on a
 * fresh connection queued behind them. Not `statement_timeout`: that one also
 * cuts COMMIT's wait for a synchronous standby, and PostgreSQL then reports
 * the COMMIT as done (committed locally, not yet on the standby), so an
 * answer could be acknowledged that a failover loses.
 */
const lockTimeoutFor = (queryTimeoutMs: number): number | undefined =>
  queryTimeoutMs > 0 ? Math.max(1, queryTimeoutMs - Math.min(1_000, Math.floor(queryTimeoutMs / 10))) : undefined

/**
 * The Store on PostgreSQL: a pool of `poolMax` connections, the schema
 * migrated on build (see `Migrations`), the pool closed when the layer is
 * released. Fails with StoreError when the database is unreachable, refuses
 * the migration, or is newer than this code.
 */
export const layer = (options: PostgresStoreOptions): Layer.Layer<Store | StorePurge, StoreError> =>
  Layer.effectContext(
    Effect.map(makeBoth(options), ({ store, purge }) => Context.make(Store, store).pipe(Context.add(StorePurge, purge)))
  )
