/**
 * The embedded durable Store: one SQLite file through Node's built-in
 * `node:sqlite`, no server and no setup.
 *
 * - One connection per store. node:sqlite is synchronous, so a statement never
 *   yields; units of work take the connection one at a time (FIFO), so the
 *   statements of two concurrent units never interleave inside one transaction.
 * - Transactions are `BEGIN IMMEDIATE … COMMIT`: the write lock is taken at the
 *   start, so several processes on one file serialise their units (waiting up
 *   to `busy_timeout_ms`, without blocking the event loop) and a unit always
 *   reads the latest committed state.
 * - Group commit: units that queue for the connection together run one after
 *   another in one transaction, each after the first in its own savepoint (a
 *   unit that fails, dies or is interrupted is rolled back to it), and share one
 *   COMMIT; none answers before that COMMIT, and a failed COMMIT fails them all.
 * - WAL journal with `synchronous=FULL`: a commit is fsynced before it is
 *   acknowledged, so an acknowledged unit survives a power loss.
 * - Rows: `docs` (the envelope in columns, `data` as `Codec` text), `doc_keys`
 *   (unique keys per kind), `ledger` (amounts as 64-bit INTEGER, read as bigint).
 *   Every statement is prepared once, when the store opens.
 * - Reads decode fresh objects from the database, so callers may mutate what
 *   they get without touching stored state.
 */

import { randomBytes } from "node:crypto"
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fchownSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  writeSync
} from "node:fs"
import { dirname, join, resolve } from "node:path"
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite"
import {
  Codec,
  type Doc,
  DuplicateKey,
  type Kind,
  type LedgerEntry,
  type Mode,
  type Scope,
  Store,
  StoreChanges,
  StoreError,
  StorePurge,
  type Tx,
  unbalanced,
  VersionConflict
} from "@xaalis/engine"
import { Clock, Context, Deferred, Effect, type Scope as EffectScope, Exit, Layer } from "effect"
import { type Migration, migrate, migrations, type SchemaTooNew } from "./Migrations.ts"

export interface SqliteStoreOptions {
  /** The database file (parent directories are created), or `":memory:"`. */
  readonly path: string
  /**
   * `FULL` (default): every commit is fsynced before it is acknowledged; an
   * acknowledged unit of work survives a power loss. `NORMAL`: the WAL is
   * fsynced only at checkpoints; commits survive a crash of the process but the
   * last ones may be lost on a power loss or OS crash.
   */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  /**
   * How long a unit of work waits for another process's write lock before it
   * fails with a (retryable) `StoreError`, in ms (default 5000), counted from
   * when the unit asked for the store: the units queued behind a waiter give
   * up with it, not one timeout after another. The wait does not
   * block the event loop (the lock is polled every 0–2 ms); opening the file
   * (migrations) waits as long, blocking.
   */
  readonly busy_timeout_ms?: number | undefined
  /**
   * Group commit: at most this many units of work share one transaction (one
   * COMMIT, one fsync) when they queue for the connection at once (default 32;
   * 1 turns group commit off: one transaction per unit).
   */
  readonly group_commit_max?: number | undefined
  /**
   * @internal Tests: how long a group stays open to units that queue, in ms
   * (default `group_open_max_ms`, 10). The group-commit tests widen it, so that
   * a loaded machine cannot split the groups they compose.
   */
  readonly group_open_ms?: number | undefined
  /** @internal The schema steps (tests of the migration mechanism). */
  readonly migrations?: ReadonlyArray<Migration> | undefined
  /**
   * @internal Tests and benchmarks: `beforeCommit` runs right before every
   * COMMIT with the connection and the number of units of work in the
   * transaction; what it throws fails that COMMIT. `paused` runs each time the
   * store leaves the lock free for another process (see `waitingFile`).
   */
  readonly hooks?:
    | {
        readonly beforeCommit?: ((db: DatabaseSync, units: number) => void) | undefined
        readonly paused?: (() => void) | undefined
      }
    | undefined
}

/** The database file under a data directory. */
export const fileName = "xaalis.sqlite"

/** `<dataDir>/xaalis.sqlite`. */
export const pathInDataDir = (dataDir: string): string => join(dataDir, fileName)

// ---------------------------------------------------------------------------
// Rows

interface DocRow {
  readonly kind: string
  readonly id: string
  readonly business_id: string | null
  readonly mode: string | null
  readonly created_at: number
  readonly version: number
  readonly due_at: number | null
  readonly keys: string
  readonly data: string | null
}

interface LedgerRow {
  readonly id: string
  readonly transaction_id: string
  readonly business_id: string
  readonly mode: string
  readonly account: string
  readonly currency: string
  readonly amount: bigint
  readonly created_at: bigint
  readonly cause: string
}

const DOC_COLUMNS = "kind, id, business_id, mode, created_at, version, due_at, keys, data"
const NO_KEYS = "[]"

const encodeKeys = (keys: ReadonlyArray<string>): string => (keys.length === 0 ? NO_KEYS : JSON.stringify(keys))

const toDoc = (row: DocRow): Doc => ({
  kind: row.kind as Kind,
  id: row.id,
  business_id: row.business_id,
  mode: row.mode as Mode | null,
  created_at: row.created_at,
  version: row.version,
  due_at: row.due_at,
  keys: row.keys === NO_KEYS ? [] : (JSON.parse(row.keys) as Array<string>),
  data: row.data === null ? undefined : Codec.decode(row.data)
})

const toEntry = (row: LedgerRow): LedgerEntry => ({
  id: row.id,
  transaction_id: row.transaction_id,
  business_id: row.business_id,
  mode: row.mode as Mode,
  account: row.account,
  currency: row.currency as "GMD" | "USD",
  amount: row.amount,
  created_at: Number(row.created_at),
  cause: row.cause
})

/** `data` as stored: Codec text, or NULL for an undefined value. */
const encodeData = (data: unknown): string | null => (data === undefined ? null : Codec.encode(data))

// ---------------------------------------------------------------------------
// Statements

/**
 * Every statement of the store, prepared once per connection. (Exported for
 * the test that checks each one's query plan uses an index.)
 * @internal
 */
export const sql = {
  begin: "BEGIN IMMEDIATE",
  commit: "COMMIT",
  /** Each unit of work after the first of a group runs inside this savepoint (a fixed name: they never nest). */
  savepoint: "SAVEPOINT unit",
  release: "RELEASE unit",
  rollbackTo: "ROLLBACK TO unit",
  get: `SELECT ${DOC_COLUMNS} FROM docs WHERE kind = ? AND id = ?`,
  getByKey: `SELECT d.kind, d.id, d.business_id, d.mode, d.created_at, d.version, d.due_at, d.keys, d.data
    FROM doc_keys k JOIN docs d ON d.kind = k.kind AND d.id = k.id WHERE k.kind = ? AND k.key = ?`,
  keyOwner: "SELECT id FROM doc_keys WHERE kind = ? AND key = ?",
  insertDoc: `INSERT INTO docs (${DOC_COLUMNS}) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?) ON CONFLICT (kind, id) DO NOTHING`,
  insertKey: "INSERT INTO doc_keys (kind, key, id) VALUES (?, ?, ?)",
  deleteKey: "DELETE FROM doc_keys WHERE kind = ? AND key = ?",
  /** A purged row (`StorePurge`), at the version the purge read. */
  deleteDoc: "DELETE FROM docs WHERE kind = ? AND id = ? AND version = ?",
  /**
   * The most common update: right version, only `data` changes (same keys,
   * scope, creation time and due time as stored): no secondary index entry is
   * rewritten (an indexed column in SET rewrites its entry even when unchanged).
   */
  updateData: `UPDATE docs SET version = ?, data = ?
    WHERE kind = ? AND id = ? AND version = ? AND keys = ? AND business_id IS ? AND mode IS ? AND created_at = ?
    AND due_at IS ?`,
  /** Right version, same keys as stored, the rest may change (one statement). */
  updateSameKeys: `UPDATE docs SET business_id = ?, mode = ?, created_at = ?, version = ?, due_at = ?, data = ?
    WHERE kind = ? AND id = ? AND version = ? AND keys = ?`,
  current: "SELECT version, keys FROM docs WHERE kind = ? AND id = ?",
  updateAll: `UPDATE docs SET business_id = ?, mode = ?, created_at = ?, version = ?, due_at = ?, keys = ?, data = ?
    WHERE kind = ? AND id = ?`,
  list: `SELECT ${DOC_COLUMNS} FROM docs WHERE kind = ? AND business_id = ? AND mode = ?
    ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
  count: "SELECT count(*) AS n FROM docs WHERE kind = ? AND business_id = ? AND mode = ?",
  due: `SELECT ${DOC_COLUMNS} FROM docs WHERE kind = ? AND due_at IS NOT NULL AND due_at <= ?
    ORDER BY due_at, id LIMIT ?`,
  post: `INSERT INTO ledger (id, transaction_id, business_id, mode, account, currency, amount, created_at, cause)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  balances: `SELECT account, currency, sum(amount) AS amount FROM ledger WHERE business_id = ? AND mode = ?
    GROUP BY account, currency ORDER BY account, currency`,
  ledger:
    "SELECT id, transaction_id, business_id, mode, account, currency, amount, created_at, cause FROM ledger ORDER BY seq"
} as const

/** Statements whose integers are read as bigint (ledger amounts). */
const readsBigInts: ReadonlySet<keyof typeof sql> = new Set(["balances", "ledger"])

const prepareAll = (db: DatabaseSync) => {
  const prepared = {} as Record<keyof typeof sql, StatementSync>
  for (const name of Object.keys(sql) as Array<keyof typeof sql>) {
    const statement = db.prepare(sql[name])
    if (readsBigInts.has(name)) statement.setReadBigInts(true)
    prepared[name] = statement
  }
  return prepared
}

type Statements = ReturnType<typeof prepareAll>

// ---------------------------------------------------------------------------
// Errors

const reason = (cause: unknown): string => {
  if (cause instanceof Error) {
    const e = cause as Error & { readonly errstr?: unknown }
    return typeof e.errstr === "string" ? e.errstr : e.message
  }
  return String(cause)
}

const storeError = (what: string, cause: unknown) =>
  new StoreError({ message: `sqlite store: ${what} failed (${reason(cause)})`, cause })

/** SQLITE_BUSY (another connection holds the lock), any extended code. */
const isBusy = (e: unknown): boolean =>
  e !== null && typeof e === "object" && typeof (e as { errcode?: unknown }).errcode === "number"
    ? ((e as { errcode: number }).errcode & 0xff) === 5
    : false

/** Waits `ms` of real time (0: one turn of the event loop), interruptibly. */
const pause = (ms: number): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (ms <= 0) {
      const handle = setImmediate(() => resume(Effect.void))
      return Effect.sync(() => clearImmediate(handle))
    }
    const handle = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(handle))
  })

/**
 * How long a process may run transactions back to back before it leaves the
 * lock free for a moment, when another process waits for it.
 */
const hold_max_ms = 20

/**
 * Another store is taken to be waiting for the lock while the waiting file
 * (`waitingFile`) says one wrote to it less than this long ago (ms of
 * wall-clock time; a waiter writes on every poll, every 0–2 ms).
 */
const waiting_recent_ms = 50

/**
 * The file beside the database through which a store that finds the write
 * lock taken says so: on every poll it writes its own token and the time
 * (`signalWaiting`); a store that has run transactions back to back for
 * `hold_max_ms` reads it (`othersWaiting`) and pauses only when another store
 * waits. SQLite tells a lock holder nothing of waiters, and a pause nobody
 * needs cost a saturated process ~7% of its throughput. The time is in the
 * content, not the file's mtime: writing needs only write permission
 * (setting an mtime needs ownership) and file systems that keep whole
 * seconds do not blur it.
 */
export const waitingFile = (databasePath: string): string => `${resolve(databasePath)}-waiting`

/**
 * What a waiter writes at offset 0: its token and the time, always the same
 * length (tokens are), so a line never leaves the tail of a longer one behind.
 */
const waitingRecord = (token: string, now: number): string => `${token} ${String(now).padStart(15, "0")}\n`

/**
 * Writes this store's "I wait" record. Best effort: a file it cannot write
 * only costs the fairness pause. Created like SQLite creates its `-wal` and
 * `-shm` files: with the database file's permissions, and, when running as
 * root, owned by the database file's owner (so the service's own user can
 * write it later).
 */
const signalWaiting = (file: string, databasePath: string, token: string): void => {
  try {
    let fd: number
    try {
      fd = openSync(file, constants.O_WRONLY)
    } catch {
      fd = openSync(file, constants.O_WRONLY | constants.O_CREAT, 0o600)
      try {
        const db = statSync(databasePath)
        fchmodSync(fd, db.mode & 0o666)
        if (process.getuid?.() === 0) fchownSync(fd, db.uid, db.gid)
      } catch {
        // keeps the default mode and owner
      }
    }
    try {
      writeSync(fd, waitingRecord(token, Date.now()), 0, "latin1")
    } finally {
      closeSync(fd)
    }
  } catch {
    // a directory or file we cannot write: the holder does not pause, this store still polls
  }
}

/**
 * Whether another store than `token` wrote the waiting file within
 * `waiting_recent_ms`, read from its first line. A file that cannot be read
 * or holds no such line (empty, torn by a write in progress, or written by
 * something else) says no: the pause is best effort, and a file left that way
 * must not make a lone store pause for ever (a waiter writes again within
 * 2 ms, so one missed look delays its turn by one `hold_max_ms`).
 */
const othersWaiting = (file: string, token: string): boolean => {
  let text: string
  try {
    text = readFileSync(file, "latin1")
  } catch {
    return false
  }
  const [who, at] = (text.split("\n", 1)[0] ?? "").split(" ")
  const t = Number(at)
  if (who === undefined || who === "" || at === undefined || !Number.isSafeInteger(t)) return false
  return who !== token && Math.abs(Date.now() - t) < waiting_recent_ms
}

/** Group commit: the most units of work in one transaction (by default). */
const group_units_max = 32

/**
 * Group commit: a unit joins the open group only while it is younger than
 * this (ms), which bounds how long the group's first unit waits for its COMMIT
 * and how long the write lock is held at once (well under `hold_max_ms`).
 */
const group_open_max_ms = 10

/** Whole numbers only: SQLite would refuse a fractional LIMIT/OFFSET or store a REAL. */
const int = (n: number): number => (Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0)

// ---------------------------------------------------------------------------
// Opening

/** Opens the file, sets the pragmas and brings the schema up to date (synchronous; throws). */
const open = (options: SqliteStoreOptions, now: number): DatabaseSync => {
  const memory = options.path === ":memory:"
  const location = memory ? options.path : resolve(options.path)
  if (!memory) {
    mkdirSync(dirname(location), { recursive: true })
    // SQLite opens a file it may not write read-only, without a word, and fails at the first write: an
    // up-to-date database (no migration to write) would open, and every unit of work would then fail
    if (existsSync(location)) closeSync(openSync(location, "r+"))
  }
  const timeout = int(options.busy_timeout_ms ?? 5000)
  const db = new DatabaseSync(location, { enableForeignKeyConstraints: true })
  try {
    db.exec(`PRAGMA busy_timeout = ${timeout}`)
    // WAL: readers never block the writer; commits append to the log. (":memory:" stays "memory".)
    if (!memory) {
      const mode = (db.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode?: unknown } | undefined)
        ?.journal_mode
      if (mode !== "wal") {
        throw new Error(
          `journal_mode WAL is not available for ${location} (got ${String(mode)}): a local disk is needed`
        )
      }
    }
    db.exec(`PRAGMA synchronous = ${options.synchronous === "NORMAL" ? "NORMAL" : "FULL"}`)
    db.exec("PRAGMA foreign_keys = ON")
    migrate(db, now, options.migrations ?? migrations)
    // from now on a busy lock is waited for by `begin`, without blocking the event loop; inside a
    // write transaction of a WAL database no statement waits for a lock
    db.exec("PRAGMA busy_timeout = 0")
    return db
  } catch (e) {
    db.close()
    throw e
  }
}

const close = (db: DatabaseSync): void => {
  try {
    if (db.isTransaction) db.exec("ROLLBACK")
    db.exec("PRAGMA optimize")
  } catch {
    // closing anyway
  }
  db.close()
}

// ---------------------------------------------------------------------------
// The store

/** The unit of work in progress: a `Tx` used after its unit ended must not touch the connection. */
interface Unit {
  open: boolean
}

/** A transaction shared by units of work that queued for the connection at once (group commit). */
interface Group {
  /** `performance.now()` at its BEGIN. */
  readonly started: number
  /** Units of work run in it so far (including those rolled back to their savepoint). */
  units: number
  /** Completed right after its COMMIT returned (or failed, or it was rolled back): its units may then answer. */
  readonly done: Deferred.Deferred<void, StoreError>
}

/** A fiber waiting for the connection. */
interface Waiter {
  /** A unit of work (which may join an open group), or a read outside units (`ledger`). */
  readonly unit: boolean
  /** Handed the connection (set by `passOn`, before `resume`). */
  granted: boolean
  resume: (() => void) | undefined
}

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const makeTx = (db: DatabaseSync, s: Statements, unit: Unit): Tx => {
  /** Runs a synchronous piece of a unit of work; SQLite's exceptions become `StoreError`. */
  const step = <A, E>(what: string, f: () => Effect.Effect<A, E>): Effect.Effect<A, E | StoreError> =>
    Effect.suspend((): Effect.Effect<A, E | StoreError> => {
      if (!unit.open) {
        return Effect.fail(new StoreError({ message: `sqlite store: ${what} after its unit of work ended` }))
      }
      // SQLite rolls the whole transaction back on some errors (disk full, I/O): a unit that caught
      // such an error must not go on writing outside any transaction (each statement would commit alone)
      if (!db.isTransaction) {
        return Effect.fail(new StoreError({ message: `sqlite store: ${what} after its transaction was rolled back` }))
      }
      try {
        return f()
      } catch (e) {
        return Effect.fail(storeError(what, e))
      }
    })
  const run = <A>(what: string, f: () => A): Effect.Effect<A, StoreError> => step(what, () => Effect.succeed(f()))

  /** The first of `keys` held by another row of `kind` than `id`. */
  const clash = (kind: Kind, id: string, keys: Iterable<string>): string | undefined => {
    for (const key of keys) {
      const owner = s.keyOwner.get(kind, key) as { readonly id: string } | undefined
      if (owner !== undefined && owner.id !== id) return key
    }
    return undefined
  }

  const docArgs = (doc: Doc): Array<SQLInputValue> => [
    doc.business_id,
    doc.mode,
    doc.created_at,
    doc.version,
    doc.due_at
  ]

  return {
    get: (kind, id) =>
      run("get", () => {
        const row = s.get.get(kind, id) as DocRow | undefined
        return row === undefined ? undefined : toDoc(row)
      }),

    getByKey: (kind, key) =>
      run("getByKey", () => {
        const row = s.getByKey.get(kind, key) as DocRow | undefined
        return row === undefined ? undefined : toDoc(row)
      }),

    insert: (doc) =>
      step("insert", (): Effect.Effect<void, DuplicateKey> => {
        const keys = new Set(doc.keys)
        // keys first: a refused row claims nothing and writes nothing
        const taken = keys.size === 0 ? undefined : clash(doc.kind, doc.id, keys)
        if (taken !== undefined) return Effect.fail(new DuplicateKey({ kind: doc.kind, key: taken }))
        const inserted = s.insertDoc.run(
          doc.kind,
          doc.id,
          doc.business_id,
          doc.mode,
          doc.created_at,
          doc.due_at,
          encodeKeys(doc.keys),
          encodeData(doc.data)
        )
        if (inserted.changes === 0) return Effect.fail(new DuplicateKey({ kind: doc.kind, key: `id:${doc.id}` }))
        for (const key of keys) s.insertKey.run(doc.kind, key, doc.id)
        return Effect.void
      }),

    update: (doc) =>
      step("update", (): Effect.Effect<void, VersionConflict | DuplicateKey> => {
        const keys = encodeKeys(doc.keys)
        const data = encodeData(doc.data)
        // the common cases in one statement each: right version, only the data changes (no index entry
        // rewritten); right version, same keys
        const only = s.updateData.run(
          doc.version,
          data,
          doc.kind,
          doc.id,
          doc.version - 1,
          keys,
          doc.business_id,
          doc.mode,
          doc.created_at,
          doc.due_at
        )
        if (only.changes === 1) return Effect.void
        const same = s.updateSameKeys.run(...docArgs(doc), data, doc.kind, doc.id, doc.version - 1, keys)
        if (same.changes === 1) return Effect.void
        const current = s.current.get(doc.kind, doc.id) as { version: number; keys: string } | undefined
        if (current === undefined || current.version !== doc.version - 1) {
          return Effect.fail(new VersionConflict({ kind: doc.kind, id: doc.id }))
        }
        // the keys change: check the new ones, release the dropped ones, claim the added ones
        const before = new Set(current.keys === NO_KEYS ? [] : (JSON.parse(current.keys) as Array<string>))
        const after = new Set(doc.keys)
        const added = [...after].filter((k) => !before.has(k))
        const taken = clash(doc.kind, doc.id, added)
        if (taken !== undefined) return Effect.fail(new DuplicateKey({ kind: doc.kind, key: taken }))
        for (const key of before) if (!after.has(key)) s.deleteKey.run(doc.kind, key)
        for (const key of added) s.insertKey.run(doc.kind, key, doc.id)
        s.updateAll.run(...docArgs(doc), keys, data, doc.kind, doc.id)
        return Effect.void
      }),

    list: (kind, scope, page) =>
      run("list", () => {
        const rows = s.list.all(
          kind,
          scope.business_id,
          scope.mode,
          int(page.limit),
          int(page.offset)
        ) as unknown as Array<DocRow>
        const { n } = s.count.get(kind, scope.business_id, scope.mode) as { n: number }
        return { docs: rows.map(toDoc), total: n }
      }),

    due: (kind, now, limit) =>
      run("due", () => (s.due.all(kind, now, int(limit)) as unknown as Array<DocRow>).map(toDoc)),

    post: (entries) =>
      step("post", (): Effect.Effect<void, StoreError> => {
        const broken = unbalanced(entries)
        if (broken.length > 0) {
          return Effect.fail(new StoreError({ message: `unbalanced ledger transaction ${broken.join(", ")}` }))
        }
        for (const e of entries) {
          s.post.run(
            e.id,
            e.transaction_id,
            e.business_id,
            e.mode,
            e.account,
            e.currency,
            e.amount,
            e.created_at,
            e.cause
          )
        }
        return Effect.void
      }),

    balances: (scope: Scope) =>
      run("balances", () =>
        (
          s.balances.all(scope.business_id, scope.mode) as Array<{ account: string; currency: string; amount: bigint }>
        ).map((r) => ({ account: r.account, currency: r.currency as "GMD" | "USD", amount: r.amount }))
      )
  }
}

/**
 * Builds the Store over an open connection. Scoped: the database is closed
 * when the scope (the layer) ends.
 */
export const make = (
  options: SqliteStoreOptions
): Effect.Effect<Store["Service"], StoreError | SchemaTooNew, EffectScope.Scope> =>
  Effect.map(makeWithChanges(options), (made) => made.store)

/** `make`, and the `StoreChanges` of its connection (SQLite's `data_version`). */
const makeWithChanges = (
  options: SqliteStoreOptions
): Effect.Effect<
  {
    readonly store: Store["Service"]
    readonly changes: StoreChanges["Service"]
    readonly purge: StorePurge["Service"]
  },
  StoreError | SchemaTooNew,
  EffectScope.Scope
> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => open(options, now),
        catch: (e) =>
          e !== null && typeof e === "object" && (e as { _tag?: unknown })._tag === "SchemaTooNew"
            ? (e as SchemaTooNew)
            : storeError(`opening ${options.path}`, e)
      }),
      (db) => Effect.sync(() => close(db))
    )
    const s = prepareAll(db)
    const groupMax = Math.max(1, int(options.group_commit_max ?? group_units_max))
    const beforeCommit = options.hooks?.beforeCommit

    const rollback = () => {
      try {
        if (db.isTransaction) db.exec("ROLLBACK")
      } catch {
        // the connection is gone or the transaction was already rolled back by SQLite
      }
    }

    /** The waiting file of a database other processes may open (none for ":memory:"). */
    const waitingPath = options.path === ":memory:" ? undefined : waitingFile(options.path)
    /** This store's name in the waiting file: its own signal never makes it pause. */
    const token = `${String(process.pid).padStart(10, "0")}.${randomBytes(4).toString("hex")}`
    const paused = options.hooks?.paused
    const busyTimeout = int(options.busy_timeout_ms ?? 5000)
    /** When the last transaction of this process ended, and when its run of back-to-back transactions began. */
    let lastEnd = Number.NEGATIVE_INFINITY
    let streakStart = 0

    /**
     * Runs `f`, waiting for another process's lock without blocking the event
     * loop: on SQLITE_BUSY, `f` is retried after 0–2 ms (real time, whatever
     * the Clock) until `busy_timeout_ms` has passed since `asked` (when the
     * unit asked for the store, not when its turn on the connection came: the
     * units queued behind a waiter give up with it, instead of one timeout
     * after another), then fails with a retryable `StoreError`.
     */
    const busyRetrying = <A>(what: string, f: () => A, asked: number): Effect.Effect<A, StoreError> =>
      Effect.suspend(() => {
        const attempt = (): Effect.Effect<A, StoreError> => {
          try {
            return Effect.succeed(f())
          } catch (e) {
            if (!isBusy(e) || performance.now() - asked >= busyTimeout) return Effect.fail(storeError(what, e))
            if (waitingPath !== undefined) signalWaiting(waitingPath, options.path, token)
            return Effect.andThen(pause(Math.random() * 2), Effect.suspend(attempt))
          }
        }
        return attempt()
      })

    /**
     * `BEGIN IMMEDIATE`: takes the write lock, waiting for another process's
     * (`busyRetrying`). Fairness between processes: a process running
     * transactions back to back would hold the lock all the time (the gap
     * between a COMMIT and the next BEGIN is microseconds) and starve the
     * others, who poll. So once a file store has run transactions back to back
     * for `hold_max_ms`, it looks whether another store said it waits (the
     * waiting file, written on each of its polls) and if so pauses for a
     * millisecond, lock free, before its next BEGIN; if not, it looks again
     * `hold_max_ms` later. A process alone on its file never pauses.
     */
    const begin = (asked: number) =>
      Effect.suspend(() => {
        const first = busyRetrying("begin", () => void s.begin.run(), asked)
        if (waitingPath === undefined) return first
        const now = performance.now()
        if (now - lastEnd > 1) streakStart = now // the lock was free for a while: a new streak
        if (now - streakStart < hold_max_ms) return first
        if (!othersWaiting(waitingPath, token)) {
          streakStart = now // nobody waits: look again in hold_max_ms
          return first
        }
        streakStart = now + 1
        paused?.()
        return Effect.andThen(pause(1), first)
      })

    // -- The connection: one holder at a time, FIFO ------------------------------------------------

    /** Who holds the connection; who waits for it, in order (`unit`: a unit of work, which may join an open group). */
    let held = false
    const waiting: Array<Waiter> = []
    /** The transaction in progress, when its last unit has handed the connection to the next one. */
    let group: Group | undefined

    const groupOpenMs = options.group_open_ms ?? group_open_max_ms
    const joinable = (g: Group): boolean => g.units < groupMax && performance.now() - g.started < groupOpenMs

    /** COMMITs the open group (fsynced); what its units learn once the connection is passed on: a failed COMMIT fails them all. */
    const commitGroup = (g: Group): Effect.Effect<void, StoreError> => {
      group = undefined
      let outcome: Effect.Effect<void, StoreError> = Effect.void
      try {
        beforeCommit?.(db, g.units)
        s.commit.run()
      } catch (e) {
        rollback()
        outcome = Effect.fail(storeError("commit", e))
      }
      lastEnd = performance.now()
      return outcome
    }

    /** Rolls the whole group back: every unit of it fails with `error`. */
    const abortGroup = (g: Group, error: StoreError): void => {
      group = undefined
      rollback()
      lastEnd = performance.now()
      Deferred.doneUnsafe(g.done, Effect.fail(error))
    }

    /**
     * The holder is done with the connection. An open group goes on with the
     * next waiter when it is a unit of work and the group may grow; otherwise
     * it is committed first. Then the next waiter holds the connection: every
     * state change is made here, and the waiter is woken in a microtask, so a
     * long queue is handed down one waiter at a time, never by recursion.
     */
    const passOn = (): void => {
      const g = group
      const next = waiting[0]
      const outcome = g !== undefined && !(next?.unit === true && joinable(g)) ? commitGroup(g) : undefined
      if (next === undefined) held = false
      else {
        waiting.shift()
        next.granted = true
      }
      if (g !== undefined && outcome !== undefined) Deferred.doneUnsafe(g.done, outcome)
      // woken in a microtask of its own, not inside this call: a unit that ends at once passes the connection
      // on from inside its resumption, and a long queue of such units overflowed the stack here (leaving the
      // transaction open and the write lock held for good); the connection is already the next waiter's
      const resume = next?.resume
      if (resume !== undefined) queueMicrotask(resume)
    }

    /** Takes the connection, waiting in line (interruptibly, through `restore`); run it uninterruptibly. */
    const acquire = (unit: boolean, restore: Restore): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!held) {
          held = true
          return Effect.void
        }
        const w: Waiter = { unit, granted: false, resume: undefined }
        waiting.push(w)
        return Effect.onInterrupt(
          restore(
            Effect.callback<void>((resume) => {
              if (w.granted) resume(Effect.void)
              else w.resume = () => resume(Effect.void)
            })
          ),
          () =>
            Effect.sync(() => {
              if (w.granted)
                passOn() // handed the connection just as it was interrupted: pass it on
              else waiting.splice(waiting.indexOf(w), 1)
            })
        )
      })

    // -- Units of work -----------------------------------------------------------------------------

    const runWork = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>, restore: Restore) => {
      const unit: Unit = { open: true }
      return Effect.map(Effect.exit(restore(Effect.suspend(() => work(makeTx(db, s, unit))))), (exit) => {
        unit.open = false
        return exit
      })
    }

    const lost = () => new StoreError({ message: "sqlite store: the transaction was rolled back by SQLite" })

    /**
     * A unit whose work is over and whose writes are in the group's
     * transaction: when nobody waits yet, it lets the fibers that are ready run
     * first (one turn of the scheduler, no timer: units that arrived while the
     * previous transaction fsynced reach the queue and join), then passes the
     * connection on and waits for the group's COMMIT. Its outcome is observable
     * only then; if the COMMIT failed, it is that `StoreError`.
     */
    const settle = <A, E>(g: Group, exit: Exit.Exit<A, E>): Effect.Effect<A, E | StoreError> => {
      const handOver = Effect.suspend(() => {
        passOn()
        return Deferred.await(g.done)
      })
      const waited = waiting.length === 0 && joinable(g) ? Effect.andThen(Effect.yieldNow, handOver) : handOver
      return Effect.flatMap(
        Effect.exit(waited),
        (committed): Effect.Effect<A, E | StoreError> =>
          Exit.isSuccess(committed) ? exit : Effect.failCause(committed.cause)
      )
    }

    /** The first unit of a group: BEGIN IMMEDIATE, no savepoint (if it fails, the whole transaction is rolled back). */
    const lead = <A, E, R>(
      work: (tx: Tx) => Effect.Effect<A, E, R>,
      restore: Restore,
      asked: number
    ): Effect.Effect<A, E | StoreError, R> =>
      Effect.flatMap(Effect.exit(restore(begin(asked))), (began): Effect.Effect<A, E | StoreError, R> => {
        if (Exit.isFailure(began)) {
          rollback()
          passOn()
          return Effect.failCause(began.cause)
        }
        const g: Group = { started: performance.now(), units: 1, done: Deferred.makeUnsafe() }
        group = g
        return Effect.flatMap(runWork(work, restore), (exit): Effect.Effect<A, E | StoreError> => {
          if (Exit.isFailure(exit) || !db.isTransaction) {
            // nothing else is in the transaction: roll it back and answer at once
            group = undefined
            rollback()
            lastEnd = performance.now()
            passOn()
            return Exit.isFailure(exit) ? exit : Effect.fail(lost())
          }
          return settle(g, exit)
        })
      })

    /** A later unit of the open group, inside its own savepoint: if it fails, only its own writes are undone. */
    const follow = <A, E, R>(
      g: Group,
      work: (tx: Tx) => Effect.Effect<A, E, R>,
      restore: Restore
    ): Effect.Effect<A, E | StoreError, R> => {
      const abort = (e: unknown) => {
        const error = e instanceof StoreError ? e : storeError("savepoint", e)
        abortGroup(g, error)
        passOn()
        return Effect.fail(error)
      }
      try {
        s.savepoint.run()
      } catch (e) {
        return abort(e)
      }
      g.units += 1
      return Effect.flatMap(runWork(work, restore), (exit): Effect.Effect<A, E | StoreError> => {
        if (!db.isTransaction) return abort(lost())
        try {
          if (Exit.isFailure(exit)) s.rollbackTo.run()
          s.release.run()
        } catch (e) {
          return abort(e)
        }
        return settle(g, exit)
      })
    }

    const transact = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          const asked = performance.now()
          return Effect.andThen(
            acquire(true, restore),
            Effect.suspend(() => (group === undefined ? lead(work, restore, asked) : follow(group, work, restore)))
          )
        })
      )

    const ledger = Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const asked = performance.now()
        return Effect.andThen(
          acquire(false, restore),
          Effect.ensuring(
            restore(busyRetrying("ledger", () => (s.ledger.all() as unknown as Array<LedgerRow>).map(toEntry), asked)),
            Effect.sync(passOn)
          )
        )
      })
    )

    // another connection's commit moves it; reading it is a look at the WAL index, no I/O
    const dataVersion = db.prepare("PRAGMA data_version")
    const changes = StoreChanges.of({
      version: Effect.try({
        try: () => Number((dataVersion.get() as { data_version: number | bigint }).data_version),
        catch: (e) => storeError("data_version", e)
      })
    })
    // a unit of work like the others (the same connection, group commit): the due rows as it reads them,
    // deleted with their keys; the foreign key check of each delete looks up the row's kind in doc_keys
    // by its primary key (kind, key): rows of a kind without keys cost no scan
    const purge = StorePurge.of({
      purgeDue: (kind, before, limit) =>
        transact((tx) =>
          Effect.flatMap(tx.due(kind, before, limit), (rows) =>
            Effect.try({
              try: () => {
                for (const d of rows) {
                  for (const key of d.keys) s.deleteKey.run(kind, key)
                  s.deleteDoc.run(kind, d.id, d.version)
                }
                return rows.length
              },
              catch: (e) => storeError("purge", e)
            })
          )
        ).pipe(
          // the port allows any read to lose a race; this store's units run one at a time and never do
          Effect.catchTag("VersionConflict", (e) => Effect.fail(storeError("purge", e)))
        )
    })
    return { store: Store.of({ transact, ledger }), changes, purge }
  })

/** The Store on the file `options.path` (created with its parent directories if missing). */
export const layer = (
  options: SqliteStoreOptions
): Layer.Layer<Store | StoreChanges | StorePurge, StoreError | SchemaTooNew> =>
  Layer.effectContext(
    Effect.map(makeWithChanges(options), ({ store, changes, purge }) =>
      Context.make(Store, store).pipe(Context.add(StoreChanges, changes)).pipe(Context.add(StorePurge, purge))
    )
  )

/** A fresh, empty in-memory database per build (tests). */
export const layerMemory = (): Layer.Layer<Store | StoreChanges | StorePurge> =>
  Layer.orDie(layer({ path: ":memory:" }))

/** The Store on `<dataDir>/xaalis.sqlite`: the default of a server started with `DATA_DIR`. */
export const layerFromDataDir = (
  dataDir: string,
  options?: Omit<SqliteStoreOptions, "path">
): Layer.Layer<Store | StoreChanges | StorePurge, StoreError | SchemaTooNew> =>
  layer({ ...options, path: pathInDataDir(dataDir) })

/**
 * Copies the database at `source` to `destination` while it may be in use (by
 * this process or others): `VACUUM INTO` writes a consistent, compacted
 * snapshot of the last committed state through a separate read connection.
 * `destination` must not exist yet.
 */
export const backup = (source: string, destination: string): Effect.Effect<void, StoreError> =>
  Effect.try({
    try: () => {
      mkdirSync(dirname(resolve(destination)), { recursive: true })
      const db = new DatabaseSync(resolve(source), { readOnly: true })
      try {
        db.exec("PRAGMA busy_timeout = 5000")
        db.prepare("VACUUM INTO ?").run(resolve(destination))
      } finally {
        db.close()
      }
    },
    catch: (e) => storeError(`backup of ${source}`, e)
  })
