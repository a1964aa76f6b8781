/**
 * Versioned schema migrations of the embedded store. `migrations` is an
 * ordered list of SQL steps; `migrate` applies the ones a database has not seen
 * yet, all in one transaction, and records each in `schema_migrations`. A
 * database stamped with a version this code does not know (written by a newer
 * xaalis) is refused rather than used: the code cannot know what that version
 * changed.
 *
 * Rules for adding a step: append it with the next version; never edit or
 * reorder a released step (databases in the field have already applied it).
 */

import type { DatabaseSync } from "node:sqlite"
import { Data } from "effect"

export interface Migration {
  /** 1, 2, 3…: strictly increasing, no gaps. */
  readonly version: number
  readonly name: string
  readonly sql: string
}

/** The database was written by a newer version of xaalis than this one. */
export class SchemaTooNew extends Data.TaggedError("SchemaTooNew")<{
  readonly message: string
  /** The newest version recorded in the database. */
  readonly found: number
  /** The newest version this code knows. */
  readonly supported: number
}> {}

/** The list of steps is malformed (a bug in this package, caught by its tests). */
export class InvalidMigrations extends Data.TaggedError("InvalidMigrations")<{ readonly message: string }> {}

/**
 * Version 1. Amounts of the ledger are INTEGER (64-bit, signed), bound and read
 * as bigint: exact, summed by SQLite itself, and far above any amount the
 * engine can produce (±9.2e18 minor units). STRICT tables refuse a value of the
 * wrong type instead of storing it. The list and due indexes are partial: system
 * rows (no owner: transfer identities, late funds) are never listed, and rows
 * with no `due_at` are never due, so neither costs an index entry.
 */
const v1 = `
CREATE TABLE docs (
  kind        TEXT    NOT NULL,
  id          TEXT    NOT NULL,
  business_id TEXT,
  mode        TEXT    CHECK (mode IN ('test', 'live')),
  created_at  INTEGER NOT NULL,
  version     INTEGER NOT NULL,
  due_at      INTEGER,
  keys        TEXT    NOT NULL,
  data        TEXT,
  PRIMARY KEY (kind, id)
) STRICT;

CREATE INDEX docs_list ON docs (kind, business_id, mode, created_at DESC, id DESC) WHERE business_id IS NOT NULL;
CREATE INDEX docs_due ON docs (kind, due_at, id) WHERE due_at IS NOT NULL;

CREATE TABLE doc_keys (
  kind TEXT NOT NULL,
  key  TEXT NOT NULL,
  id   TEXT NOT NULL,
  PRIMARY KEY (kind, key),
  FOREIGN KEY (kind, id) REFERENCES docs (kind, id)
) STRICT, WITHOUT ROWID;

CREATE TABLE ledger (
  seq            INTEGER PRIMARY KEY,
  id             TEXT    NOT NULL UNIQUE,
  transaction_id TEXT    NOT NULL,
  business_id    TEXT    NOT NULL,
  mode           TEXT    NOT NULL CHECK (mode IN ('test', 'live')),
  account        TEXT    NOT NULL,
  currency       TEXT    NOT NULL CHECK (currency IN ('GMD', 'USD')),
  amount         INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  cause          TEXT    NOT NULL
) STRICT;

CREATE INDEX ledger_balances ON ledger (business_id, mode, account, currency, amount);
`

/**
 * Version 2. API key rows were written without an owner; key rolling lists a
 * business's keys by owner, so each row takes the business and mode its own
 * record names. Rows already owned are left as they are.
 */
const v2 = `
UPDATE docs
   SET business_id = json_extract(data, '$.business_id'),
       mode        = json_extract(data, '$.mode')
 WHERE kind = 'api_key' AND business_id IS NULL;
`

/** Every step, in order. The last one's version is the schema this code writes. */
export const migrations: ReadonlyArray<Migration> = [
  { version: 1, name: "documents, unique keys and the ledger", sql: v1 },
  { version: 2, name: "API keys owned by their business and mode", sql: v2 }
]

/** The schema version this code writes and reads. */
export const latestVersion = (steps: ReadonlyArray<Migration> = migrations): number => steps.at(-1)?.version ?? 0

const validate = (steps: ReadonlyArray<Migration>): void => {
  steps.forEach((step, i) => {
    if (step.version !== i + 1) {
      throw new InvalidMigrations({
        message: `migration #${i} has version ${step.version}; versions must be 1, 2, 3… in order`
      })
    }
  })
}

const currentVersion = (db: DatabaseSync): number => {
  const row = db.prepare("SELECT coalesce(max(version), 0) AS v FROM schema_migrations").get() as { v: number }
  return row.v
}

/** The version recorded in `db`, read without a write lock; undefined when nothing is recorded yet. */
const readVersion = (db: DatabaseSync): number | undefined => {
  const table = db
    .prepare("SELECT 1 AS found FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
    .get()
  return table === undefined ? undefined : currentVersion(db)
}

const tooNew = (found: number, supported: number) =>
  new SchemaTooNew({
    message: `The database has schema version ${found}, newer than this version of xaalis knows (${supported}). It was written by a newer release: upgrade xaalis, or restore a backup made by this version.`,
    found,
    supported
  })

export interface MigrationOutcome {
  /** The version the database had when opened (0: empty). */
  readonly from: number
  /** The version it has now. */
  readonly to: number
  /** The versions applied by this call (none when the database was current). */
  readonly applied: ReadonlyArray<number>
}

/**
 * Brings `db` to the newest version of `steps`, in one `BEGIN IMMEDIATE`
 * transaction: with several processes opening one file at once, one migrates
 * and the others then find nothing to do. A database already at the newest
 * version is only read (no write lock taken). Throws `SchemaTooNew` (nothing
 * changed) when the database is newer than `steps`; any failing step rolls the
 * whole migration back.
 */
export const migrate = (
  db: DatabaseSync,
  now: number,
  steps: ReadonlyArray<Migration> = migrations
): MigrationOutcome => {
  validate(steps)
  const supported = latestVersion(steps)
  // an up-to-date database is read, not locked: a process starting beside others that keep the write lock
  // busy (a restart under load) opens at once instead of waiting its busy timeout for the lock
  const seen = readVersion(db)
  if (seen !== undefined && seen >= supported) {
    if (seen > supported) throw tooNew(seen, supported)
    return { from: seen, to: seen, applied: [] }
  }
  db.exec("BEGIN IMMEDIATE")
  try {
    db.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT"
    )
    const from = currentVersion(db)
    if (from > supported) throw tooNew(from, supported)
    const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
    const applied: Array<number> = []
    for (const step of steps) {
      if (step.version <= from) continue
      db.exec(step.sql)
      record.run(step.version, step.name, now)
      applied.push(step.version)
    }
    db.exec("COMMIT")
    return { from, to: Math.max(from, supported), applied }
  } catch (e) {
    if (db.isTransaction) db.exec("ROLLBACK")
    throw e
  }
}
