/**
 * Versioned schema migrations of the PostgreSQL store.
 *
 * `steps` is the ordered list of every change ever made to the schema. A
 * database records the versions it has in `schema_migrations`; on start,
 * `migrate` applies the missing ones, in order, inside ONE transaction that
 * first takes a transaction-scoped advisory lock (`pg_advisory_xact_lock`)
 * named after the schema: two processes starting at once queue on the lock,
 * and the second finds everything applied. A database that records a version
 * this code does not know (a newer release migrated it) is refused: the code
 * would read and write tables whose meaning it does not know.
 *
 * To add a migration: append a step with the next version and the SQL of the
 * change. Never edit or reorder a step that has shipped; fix it with a new one.
 */

import type { PoolClient } from "pg"

export interface Step {
  /** 1, 2, 3…: strictly increasing, no gaps. */
  readonly version: number
  readonly name: string
  /** One or more statements, run with the simple query protocol (no parameters). */
  readonly sql: string
}

/**
 * Text columns that are compared or sorted (kind, id, key) use the "C"
 * collation: byte order, the same order as the in-memory store's `<` on ASCII
 * ids, independent of the database's locale, and cheaper to compare.
 */
export const steps: ReadonlyArray<Step> = [
  {
    version: 1,
    name: "documents, unique keys and the ledger",
    sql: `
CREATE TABLE docs (
  kind        text COLLATE "C" NOT NULL,
  id          text COLLATE "C" NOT NULL,
  business_id text COLLATE "C",
  mode        text CHECK (mode IN ('test', 'live')),
  created_at  bigint NOT NULL,
  version     integer NOT NULL CHECK (version >= 1),
  due_at      bigint,
  keys        text[] NOT NULL,
  data        text NOT NULL,
  -- the transaction that inserted the row: tells a concurrent insert of the same id from an old one
  xact        xid8 NOT NULL DEFAULT pg_current_xact_id(),
  PRIMARY KEY (kind, id)
);
CREATE INDEX docs_scope_idx ON docs (kind, business_id, mode, created_at DESC, id DESC);
CREATE INDEX docs_due_idx ON docs (kind, due_at) WHERE due_at IS NOT NULL;

CREATE TABLE doc_keys (
  kind  text COLLATE "C" NOT NULL,
  key   text COLLATE "C" NOT NULL,
  id    text COLLATE "C" NOT NULL,
  xact  xid8 NOT NULL DEFAULT pg_current_xact_id(),
  PRIMARY KEY (kind, key)
);
CREATE INDEX doc_keys_owner_idx ON doc_keys (kind, id);

CREATE TABLE ledger (
  seq            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id             text COLLATE "C" NOT NULL UNIQUE,
  transaction_id text COLLATE "C" NOT NULL,
  business_id    text COLLATE "C" NOT NULL,
  mode           text NOT NULL CHECK (mode IN ('test', 'live')),
  account        text COLLATE "C" NOT NULL,
  currency       text NOT NULL CHECK (currency IN ('GMD', 'USD')),
  amount         numeric(39, 0) NOT NULL,
  created_at     bigint NOT NULL,
  cause          text NOT NULL
);
CREATE INDEX ledger_scope_idx ON ledger (business_id, mode, account, currency);
CREATE INDEX ledger_transaction_idx ON ledger (transaction_id);
`
  },
  {
    // API key rows were written without an owner; key rolling lists a business's keys by owner.
    version: 2,
    name: "API keys owned by their business and mode",
    sql: `
UPDATE docs
   SET business_id = data::jsonb ->> 'business_id',
       mode        = data::jsonb ->> 'mode'
 WHERE kind = 'api_key' AND business_id IS NULL;
`
  },
  {
    // the API's rate limit shared by every process on the database (RateBuckets.ts). UNLOGGED: no WAL for
    // a row written on every request; after a crash the table comes back empty, which is every bucket full.
    // IF NOT EXISTS: a migration record lost or rolled back by hand must not make the step fail for ever.
    version: 3,
    name: "shared rate-limit buckets",
    sql: `
CREATE UNLOGGED TABLE IF NOT EXISTS rate_buckets (
  key     text PRIMARY KEY,
  tokens  double precision NOT NULL,
  at      timestamptz NOT NULL,
  allowed boolean NOT NULL,
  rps     double precision NOT NULL,
  burst   double precision NOT NULL
);
`
  }
]

/** The newest schema version this code knows. */
export const latest = (list: ReadonlyArray<Step> = steps): number => list.reduce((m, s) => Math.max(m, s.version), 0)

/** A database migrated by newer code: refused. */
export class DatabaseTooNew extends Error {
  readonly found: number
  readonly known: number
  constructor(found: number, known: number) {
    super(
      `the database schema is at version ${found}, newer than this code knows (${known}); run a release that knows it`
    )
    this.name = "DatabaseTooNew"
    this.found = found
    this.known = known
  }
}

/** An identifier safe to splice into SQL unquoted (and in a `search_path`). */
export const isPlainIdentifier = (name: string): boolean => /^[a-z_][a-z0-9_]{0,62}$/.test(name)

const checkSteps = (list: ReadonlyArray<Step>): void => {
  list.forEach((s, i) => {
    if (s.version !== i + 1) throw new Error(`migration steps must be numbered 1, 2, 3… (step ${i} is ${s.version})`)
  })
}

/**
 * Brings the schema of `client`'s connection (its `search_path`; `schema`,
 * when given, is created first) up to the newest step, in one transaction under
 * an advisory lock. Returns the versions it applied (empty when up to date).
 * Throws `DatabaseTooNew`, or the database's error (the transaction is then
 * rolled back: nothing of a failed migration stays).
 */
export const migrate = async (
  client: PoolClient,
  options: { readonly schema?: string | undefined; readonly steps?: ReadonlyArray<Step> } = {}
): Promise<ReadonlyArray<number>> => {
  const list = options.steps ?? steps
  checkSteps(list)
  const schema = options.schema
  if (schema !== undefined && !isPlainIdentifier(schema)) throw new Error("invalid schema name")
  await client.query("BEGIN")
  try {
    // one lock per schema: processes migrating other schemas of the same database do not wait (a schema
    // chosen by the connection's search_path, e.g. `options=-c search_path=…` in the URL, is current_schema())
    await client.query(
      "SELECT pg_advisory_xact_lock(hashtextextended('xaalis.migrations:' || coalesce($1::text, current_schema(), '(search_path)'), 0))",
      [schema ?? null]
    )
    if (schema !== undefined) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      await client.query(`SET LOCAL search_path TO ${schema}`)
    }
    // created only when missing: `CREATE TABLE IF NOT EXISTS` needs CREATE on the schema even when the table is
    // there, which a role that owns its tables but not the schema (a restore into `public` on PostgreSQL 15+) lacks
    const present = (await client.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t"))
      .rows[0]?.t
    if (present === null || present === undefined) {
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version    integer PRIMARY KEY,
           name       text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`
      )
    }
    const found = Number(
      (await client.query<{ v: number }>("SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations")).rows[0]
        ?.v ?? 0
    )
    const known = latest(list)
    if (found > known) throw new DatabaseTooNew(found, known)
    const applied: Array<number> = []
    for (const step of list) {
      if (step.version <= found) continue
      await client.query(step.sql)
      await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [step.version, step.name])
      applied.push(step.version)
    }
    await client.query("COMMIT")
    return applied
  } catch (e) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw e
  }
}
