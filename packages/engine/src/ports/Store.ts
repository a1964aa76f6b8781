import { Context, Data, type Effect } from "effect"

/** Test and live objects never see each other. */
export type Mode = "test" | "live"

/** The collections of the store. */
export type Kind =
  | "business"
  | "api_key"
  | "payment_intent"
  | "payment_link"
  | "conversion"
  | "payment_request"
  | "invoice"
  | "outbox"
  | "idempotency"
  | "late_funds"
  | "transfer"
  | "counter"
  | "payout"
  /** Older timeline entries of a conversion, sealed (see the engine's `Timeline`). */
  | "timeline"

/**
 * One stored object. The store understands only the envelope; `data` is the
 * domain record, opaque to it (durable adapters serialise it with `Codec`).
 */
export interface Doc<D = unknown> {
  readonly kind: Kind
  readonly id: string
  /** Owner, for scoping; null for system rows. */
  readonly business_id: string | null
  readonly mode: Mode | null
  readonly created_at: number
  /** 1 on insert, +1 on each update; updates name the version they replace. */
  readonly version: number
  /** When the scheduler must look at this row (expiry, overdue, retry), or null. */
  readonly due_at: number | null
  /** Secondary keys, unique within the kind (deposit address, key hash, transfer id…). */
  readonly keys: ReadonlyArray<string>
  readonly data: D
}

/** A line of the double-entry ledger. Amounts are signed minor units; a transaction sums to 0 per currency. */
export interface LedgerEntry {
  readonly id: string
  readonly transaction_id: string
  readonly business_id: string
  readonly mode: Mode
  readonly account: string
  /** `GMD` (butut) or `USD` (micro-dollars: on-chain precision). */
  readonly currency: "GMD" | "USD"
  readonly amount: bigint
  readonly created_at: number
  /** What caused it: `conversion/<id>`, `payment_intent/<id>`, … */
  readonly cause: string
}

export interface Page {
  readonly limit: number
  readonly offset: number
}

export interface Scope {
  readonly business_id: string
  readonly mode: Mode
}

/** Infrastructure failure of the store (connection lost, disk full…). Retryable. */
export class StoreError extends Data.TaggedError("StoreError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** Another transaction updated the row first; the unit of work is retried from scratch. */
export class VersionConflict extends Data.TaggedError("VersionConflict")<{
  readonly kind: Kind
  readonly id: string
}> {}

/** An insert reused an id or a unique key. */
export class DuplicateKey extends Data.TaggedError("DuplicateKey")<{ readonly kind: Kind; readonly key: string }> {}

/**
 * What a unit of work can do. Everything done through one `Tx` commits together or not at all.
 *
 * - **Ids and keys are compared exactly**, code unit for code unit: no case
 *   folding, no padding or trimming of spaces, no Unicode normalisation. `a`,
 *   `A`, `a ` and `a\u0301` are four ids (idempotency keys and deposit
 *   addresses are case-sensitive). PostgreSQL: `COLLATE "C"`; SQLite's default
 *   `BINARY`; MySQL/MariaDB: a binary type or a `_bin` collation without
 *   space padding (their default collations fold case, and `utf8mb4_bin`
 *   ignores trailing spaces).
 * - **Ids and keys are at most `store_text_length_max` (400) characters**,
 *   any Unicode (invoice numbers are the caller's text). The longest the engine
 *   writes is an idempotency record's id, `<scope>:<mode>:<key>` with a key of
 *   up to 255 characters: 297 for a business, at most 333 for the HTTP API's
 *   keyless scope (`keyless:<client address, or its SHA-256>`).
 * - **Any operation may fail with `VersionConflict`** when the unit lost a race
 *   (a deadlock or serialisation failure of the database, a row a concurrent
 *   unit wrote first): the engine then runs the unit again from scratch.
 */
export interface Tx {
  readonly get: (kind: Kind, id: string) => Effect.Effect<Doc | undefined, StoreError | VersionConflict>
  readonly getByKey: (kind: Kind, key: string) => Effect.Effect<Doc | undefined, StoreError | VersionConflict>
  /**
   * Adds a row, stored with version 1 whatever `doc.version` says. An
   * existing id of the kind, or a key of the kind another row holds, is
   * refused with `DuplicateKey` having written nothing (no row, no key
   * claimed, the other row untouched), so a unit may catch it and go on to
   * commit: the engine applies a chain transfer by inserting its identity row
   * first, and a refusal means "seen before". (`DuplicateKey.key` names what
   * clashed, for messages: the project's stores say `id:<id>` for the id.)
   */
  readonly insert: (doc: Doc) => Effect.Effect<void, StoreError | DuplicateKey | VersionConflict>
  /** Replaces the row whose version is `doc.version - 1`; otherwise `VersionConflict`. */
  readonly update: (doc: Doc) => Effect.Effect<void, StoreError | VersionConflict | DuplicateKey>
  /**
   * Newest first: `created_at` descending, then `id` descending (code unit
   * order) among rows created in the same millisecond; with the total count of
   * the scope.
   */
  readonly list: (
    kind: Kind,
    scope: Scope,
    page: Page
  ) => Effect.Effect<{ readonly docs: ReadonlyArray<Doc>; readonly total: number }, StoreError | VersionConflict>
  /** Rows of `kind` with `due_at <= now`, oldest due first, at most `limit`. */
  readonly due: (
    kind: Kind,
    now: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Doc>, StoreError | VersionConflict>
  /** Appends ledger lines; the adapter refuses a set that does not balance per transaction and currency. */
  readonly post: (entries: ReadonlyArray<LedgerEntry>) => Effect.Effect<void, StoreError | VersionConflict>
  /** Sum of entries per account and currency for a scope. */
  readonly balances: (
    scope: Scope
  ) => Effect.Effect<
    ReadonlyArray<{ readonly account: string; readonly currency: "GMD" | "USD"; readonly amount: bigint }>,
    StoreError | VersionConflict
  >
}

/** Longest id or unique key a Store must keep, in characters (see `Tx`). */
export const store_text_length_max = 400

/**
 * The Store port. `transact` runs a unit of work atomically and isolated from
 * concurrent ones: no lost update (versions or locks), all-or-nothing commit.
 * On `VersionConflict` the caller may simply run the same unit again.
 *
 * Which clash is which: `DuplicateKey` is for an insert (or key claim) that
 * meets a row that was there when the unit began; a unit that loses a race to
 * a concurrent one (both read "absent", both insert the same id or key) fails
 * with `VersionConflict`, at the call or at the commit, because the engine
 * runs a unit again only then, and the second run finds the winner's row (two
 * first reports of one chain transfer: the loser answers "already applied").
 * Hot rows: the engine runs a unit at most 8 more times; many writers of one
 * row at once (the concurrency suite runs 50) must all get through, so a store
 * serialises the writers of a row that lost a race (the PostgreSQL store locks
 * it on the next run) or all writers (the in-memory and SQLite stores).
 */
export class Store extends Context.Service<
  Store,
  {
    readonly transact: <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
    /** Every ledger line of every scope, for invariant checks (test and audit use). */
    readonly ledger: Effect.Effect<ReadonlyArray<LedgerEntry>, StoreError>
  }
>()("@xaalis/engine/ports/Store") {}

/**
 * Optional, beside a `Store` whose data other processes may change: a number
 * that differs from its last value whenever another connection committed in
 * between (SQLite's `data_version`), and stays the same otherwise (this
 * process's own commits do not move it). Reading it must be cheap (no I/O):
 * state a process caches from the store (the shared sandbox's clock and rate)
 * is re-read only when it moved. A store that cannot tell provides none, and
 * callers then re-read every time.
 */
export class StoreChanges extends Context.Service<
  StoreChanges,
  { readonly version: Effect.Effect<number, StoreError> }
>()("@xaalis/engine/ports/StoreChanges") {}

/**
 * Optional, beside a `Store`: deletes rows that have served their time. The
 * engine purges only idempotency records, whose `due_at` is the end of their
 * retention (24 hours after first use; see `Idempotency.retention_ms`). A
 * store that provides none keeps every row; nothing else changes.
 */
export class StorePurge extends Context.Service<
  StorePurge,
  {
    /**
     * Deletes at most `limit` rows of `kind` whose `due_at` is at or before
     * `before`, oldest due first, with their unique keys (free to be taken
     * again), in a transaction of its own, and answers how many. A unit of work
     * that read such a row and then updates it meets a `VersionConflict` (the
     * row is gone) and, run again, finds it absent. Rows another transaction is
     * writing may be left for the next purge.
     */
    readonly purgeDue: (kind: Kind, before: number, limit: number) => Effect.Effect<number, StoreError>
  }
>()("@xaalis/engine/ports/StorePurge") {}

/** The ledger invariant: every transaction sums to zero in every currency. */
export const unbalanced = (entries: ReadonlyArray<LedgerEntry>): ReadonlyArray<string> => {
  const sums = new Map<string, bigint>()
  for (const e of entries) {
    const k = `${e.transaction_id}/${e.currency}`
    sums.set(k, (sums.get(k) ?? 0n) + e.amount)
  }
  return [...sums].filter(([, s]) => s !== 0n).map(([k]) => k)
}
