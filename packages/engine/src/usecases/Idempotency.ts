import { DomainError, Errors } from "@xaalis/core"
import { Data, Deferred, Effect, Option } from "effect"
import { Ids } from "../ports/Ids.ts"
import { type Doc, DuplicateKey, Store, type StoreError, StorePurge, type Tx, VersionConflict } from "../ports/Store.ts"
import { type Caller, newDoc, now, revise, unitOfWork } from "./common.ts"

/**
 * Answers a later use of a key from the objects its first use wrote (a create
 * reads what it created), or undefined when it cannot.
 */
export type Recover<A, R2> = (
  touched: ReadonlyArray<{ readonly kind: string; readonly id: string }>
) => Effect.Effect<A | undefined, DomainError | StoreError, R2>

/**
 * How long a key is remembered once its answer is recorded (decisions §7: at
 * least 24 hours). Its row is due then: a store with a `StorePurge` deletes it
 * at the scheduler's next pass (`purgeExpired`), and the key is free for a new
 * request. A row without an answer (a use still running, or cut off by a
 * crash before its answer) is never due: it is kept until a use answers it.
 */
export const retention_ms = 24 * 3_600_000

/** Longest idempotency key (a UUID is 36; 255 leaves room for composite keys). */
export const key_length_max = 255

/** What an idempotency key is made of: visible ASCII, no spaces or control characters. */
export const key_pattern = /^[\x21-\x7e]+$/

/**
 * Whether `key` is an idempotency key: 1 to `key_length_max` visible ASCII
 * characters (the `Idempotency-Key` header's rule). A key's record is stored
 * under `<business id>:<mode>:<key>`, so this bounds the Store's longest id.
 */
export const isKey = (key: string): boolean => key.length <= key_length_max && key_pattern.test(key)

/** The first outcome of a request, as replayed to later requests with the same key. */
export type Recorded<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly code: Errors.ErrorCode; readonly message: string }

interface IdempotencyRow {
  readonly key: string
  /**
   * Identifies the request (operation + body): a different one under the same
   * key is a conflict. `Fingerprint.bytes`; compared alone on rows without
   * `value_fingerprint` (written before it existed) and by such releases.
   */
  readonly fingerprint: string
  /** `Fingerprint.value`: compared when present. */
  readonly value_fingerprint?: string
  readonly status: "in_progress" | "completed"
  /** The execution that owns the key: a concurrent first use never writes under another's row. */
  readonly owner: string
  /** Units of work committed by the request so far. */
  readonly units: number
  /**
   * The objects those units wrote (`kind id`), committed with them: if the
   * answer is lost (a crash before it is recorded), a retry is told where the
   * effect went instead of being left to repeat it. Absent on rows written
   * before it existed.
   */
  readonly touched?: ReadonlyArray<string>
  readonly outcome: Recorded<unknown> | null
  readonly expires_at: number
}

/**
 * What identifies a request under a key. `value` is compared (e.g. a digest of
 * the body's JSON value, so other spacing is the same request); `bytes` (a
 * digest of the raw request) is compared instead on rows written before rows
 * carried `value`, and is what such releases compare on the rows written now,
 * so an upgrade, rolling or not, never turns a retry of the same bytes into a
 * conflict. A string is both.
 */
export type Fingerprint = string | { readonly value: string; readonly bytes: string }

const sameRequest = (row: IdempotencyRow, fingerprint: Fingerprint): boolean => {
  const { value, bytes } = typeof fingerprint === "string" ? { value: fingerprint, bytes: fingerprint } : fingerprint
  return row.value_fingerprint === undefined ? row.fingerprint === bytes : row.value_fingerprint === value
}

/** Objects named on a key's row at most (a create writes one or two). */
const touched_max = 10

const rowId = (caller: Caller, key: string) => `${caller.business_id}:${caller.mode}:${key}`

/** A key's row as first written: due for purging only once answered, when its retention ends. */
const keyRow = (id: string, caller: Caller, t: number, data: IdempotencyRow) =>
  newDoc({ kind: "idempotency", id, scope: caller, now: t, data, due_at: answeredDue(data) })

/** When a row may be purged: `retention_ms` after its answer was recorded (`expires_at`); never without one. */
const answeredDue = (row: IdempotencyRow): number | null => (row.status === "completed" ? row.expires_at : null)

/** `row` with its answer, recorded at `at`: kept `retention_ms` from then. */
const answered = (row: IdempotencyRow, outcome: Recorded<unknown>, at: number): IdempotencyRow => ({
  ...row,
  status: "completed",
  outcome,
  expires_at: at + retention_ms
})

const conflict = (message: string) => new DomainError({ code: "idempotency_conflict", message })

/**
 * The key's row belongs to another execution (a concurrent first use). Its own
 * error, not the store's `DuplicateKey`: code between the request and this
 * module may treat a `DuplicateKey` as its own (a transfer's unique row) or as a
 * bug, and the caller must get `idempotency_conflict` either way.
 */
class KeyTaken extends Data.TaggedError("KeyTaken")<{ readonly key: string }> {}

/**
 * Runs `request` at most once per (business, mode, key).
 *
 * - First time: `request` runs against a Store whose every unit of work also
 *   writes this key's row, so the row commits atomically with each effect; the
 *   outcome (value, or catalogue error) is recorded at the end.
 * - Same key, same fingerprint, completed: the recorded outcome is replayed and
 *   nothing runs.
 * - Same key, different fingerprint: `idempotency_conflict`.
 * - Same key while the first is still running in this process: waits for it
 *   to end, then as above (a replay, or the conflict for another request).
 * - Same key while the first is still running in another process, or after
 *   it was interrupted between its effects and their recording (a crash): the
 *   key's row is read again until `wait_ms` (default `in_flight_wait_ms`, real
 *   time) after this use arrived, and the first's answer replayed once it is
 *   recorded. Still none, and the row seen unanswered for `wait_ms` at least:
 *   `recover` answers from the objects the first use wrote (a create reads
 *   what it created), and that answer is recorded as the key's; else
 *   `idempotency_conflict` naming those objects. Never a second effect.
 *   Server faults (`StoreError`, defects) are not recorded, so a retry after
 *   a fault that committed nothing runs again.
 */
export const idempotent = <A, R, R2 = never>(
  caller: Caller,
  key: string,
  fingerprint: Fingerprint,
  request: Effect.Effect<A, DomainError | StoreError, R>,
  recover?: Recover<A, R2>,
  /** `in_flight_wait_ms` unless given. */
  wait_ms: number = in_flight_wait_ms
): Effect.Effect<A, DomainError | StoreError, R | R2 | Store | Ids> =>
  Effect.gen(function* () {
    if (!isKey(key)) {
      return yield* Effect.fail(
        Errors.validation(`idempotency_key must be 1 to ${key_length_max} visible ASCII characters.`, "idempotency_key")
      )
    }
    const store = yield* Store
    const id = rowId(caller, key)
    // a use waits for another process's answer until `in_flight_wait_ms` after it arrived, its wait in
    // this process's queue included (uses queued behind one another give up together)
    const deadline = performance.now() + wait_ms
    // one use of a key at a time in this process: a second one waits for the first to finish,
    // then finds its record and replays it (instead of "in progress" for a request that is only slower)
    const running = runningFor(store)
    const mine = Deferred.makeUnsafe<void>()
    const release = Effect.sync(() => {
      if (running.get(id) === mine) running.delete(id)
      Deferred.doneUnsafe(mine, Effect.void)
    })
    // uninterruptible but for the wait and the request: an interruption between taking the key's
    // place and installing its release would leave every later use of the key waiting forever
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        for (;;) {
          // read and take in one step (no yield between): two uses never both find the place free
          const ahead = running.get(id)
          if (ahead === undefined) {
            running.set(id, mine)
            break
          }
          yield* restore(Deferred.await(ahead))
        }
        return yield* restore(once(store, caller, id, key, fingerprint, request, recover, deadline, wait_ms)).pipe(
          Effect.ensuring(release)
        )
      })
    )
  })

/**
 * The keys in use in this process, per Store (several engines may share a
 * process): each entry is settled when its request ends, however it ends.
 * Requests in other processes sharing the store are not seen here: for them
 * the key's row decides (a concurrent first use answers `idempotency_conflict`).
 */
const running_by_store = new WeakMap<object, Map<string, Deferred.Deferred<void>>>()
const runningFor = (store: object) => {
  let running = running_by_store.get(store)
  if (running === undefined) {
    running = new Map()
    running_by_store.set(store, running)
  }
  return running
}

const once = <A, R, R2>(
  store: Store["Service"],
  caller: Caller,
  id: string,
  key: string,
  fingerprint: Fingerprint,
  request: Effect.Effect<A, DomainError | StoreError, R>,
  recover: Recover<A, R2> | undefined,
  deadline: number,
  wait_ms: number
): Effect.Effect<A, DomainError | StoreError, R | R2 | Store | Ids> =>
  Effect.gen(function* () {
    const t = yield* now
    const existing = yield* unitOfWork((tx) => tx.get("idempotency", id))
    if (existing !== undefined) {
      const row = existing.data as IdempotencyRow
      const answer = yield* answerFrom<A>(row, fingerprint)
      // still running elsewhere, or cut off by a stop: wait a little for its answer
      return answer === unanswered ? yield* awaitOther(id, fingerprint, recover, deadline, row, wait_ms) : answer.value
    }
    const ids = yield* Ids
    const owner = yield* ids.uuid
    /** This request's first row for the key; `units` counts the units of work it has committed. */
    const freshRow = (units: number): IdempotencyRow => ({
      key,
      ...(typeof fingerprint === "string"
        ? { fingerprint, value_fingerprint: fingerprint }
        : { fingerprint: fingerprint.bytes, value_fingerprint: fingerprint.value }),
      status: "in_progress",
      owner,
      units,
      outcome: null,
      expires_at: t + retention_ms
    })
    /** Writes (or bumps) this key's row inside a unit of work of the request. */
    const mark = (tx: Tx) =>
      Effect.gen(function* () {
        const current = (yield* tx.get("idempotency", id)) as Doc<IdempotencyRow> | undefined
        if (current === undefined) {
          // a concurrent first use of the key fails here, rolling its unit back
          yield* tx
            .insert(keyRow(id, caller, t, freshRow(1)))
            .pipe(Effect.catchTag("DuplicateKey", () => Effect.fail(new KeyTaken({ key: id }))))
        } else if (current.data.owner !== owner) {
          return yield* Effect.fail(new KeyTaken({ key: id }))
        } else {
          yield* tx.update(revise(current, { ...current.data, units: current.data.units + 1 }))
        }
      })
    /** Adds what a unit wrote to the key's row, in that unit. */
    const remember = (tx: Tx, touched: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const current = (yield* tx.get("idempotency", id)) as Doc<IdempotencyRow> | undefined
        if (current === undefined) return
        const before = current.data.touched ?? []
        const merged = [...before, ...touched.filter((x) => !before.includes(x))].slice(0, touched_max)
        yield* tx.update(revise(current, { ...current.data, touched: merged }))
      })
    const decorated = Store.of({
      // The key's row is written by the units that write, right after their first write that the
      // store accepted and with it: a unit that only reads (a helper finding an address's owner), or
      // whose writes were all refused (a transfer seen before: its identity insert refused), leaves no
      // trace, so a crash after it leaves the key free instead of "cut off after it took effect" for
      // a day. `mark` can also fail with VersionConflict (retried by the request's unitOfWork) and
      // KeyTaken (a concurrent first use; turned into idempotency_conflict below): either ends the
      // unit, whose write is then rolled back with it
      transact: <B, E, R2>(work: (tx: Tx) => Effect.Effect<B, E, R2>) =>
        store.transact((tx) => {
          let marked = false
          // typed as the write alone: mark's own failures (VersionConflict, KeyTaken) end the unit and
          // are handled by the request's unitOfWork and below, never by the write's caller
          // (decided when the write has run, not when it is built)
          const first = <X, F>(write: Effect.Effect<X, F>): Effect.Effect<X, F> =>
            Effect.flatMap(write, (x) =>
              marked
                ? Effect.succeed(x)
                : (Effect.map(mark(tx), () => {
                    marked = true
                    return x
                  }) as Effect.Effect<X, F>)
            )
          const touched: Array<string> = []
          // the objects a request wrote; the event rows a create adds are not among them, but an event
          // row a request changes is (a webhook resend). Only the caller's own rows and system rows (a
          // transfer's identity): work a request does for others (the due payouts a transfer's request
          // sends, of any business) is not named on its key, whose conflict message the caller reads
          const note = (doc: Doc, inserted: boolean) => {
            if (
              doc.kind !== "idempotency" &&
              !(inserted && doc.kind === "outbox") &&
              (doc.business_id === null || doc.business_id === caller.business_id) &&
              touched.length < touched_max
            ) {
              const it = `${doc.kind} ${doc.id}`
              if (!touched.includes(it)) touched.push(it)
            }
          }
          const observed: Tx = {
            ...tx,
            insert: (doc) => Effect.map(first(tx.insert(doc)), () => note(doc, true)),
            update: (doc) => Effect.map(first(tx.update(doc)), () => note(doc, false)),
            post: (entries) => first(tx.post(entries))
          }
          return Effect.tap(work(observed), () => (touched.length === 0 ? Effect.void : remember(tx, touched)))
        }) as Effect.Effect<B, E | StoreError, R2>,
      ledger: store.ledger
    })
    const outcome = yield* request.pipe(
      Effect.provideService(Store, decorated),
      Effect.map((value): Recorded<A> => ({ ok: true, value })),
      Effect.catchIf(
        (e): e is DomainError => e instanceof DomainError && e.code !== "internal_error",
        (e) => Effect.succeed<Recorded<A>>({ ok: false, code: e.code, message: e.message })
      ),
      Effect.catchIf(
        (e) => e instanceof DuplicateKey || e instanceof VersionConflict,
        () => Effect.fail(inProgress())
      ),
      Effect.catchIf(
        (e) => e instanceof KeyTaken,
        () => Effect.succeed(taken)
      )
    )
    // another execution (another process on this store) took the key while this one ran: this one's
    // write was rolled back with its unit; wait for the other's answer
    if (outcome === taken) return yield* awaitOther(id, fingerprint, recover, deadline, undefined, wait_ms)
    const recorded = yield* unitOfWork((tx) =>
      Effect.gen(function* () {
        const current = (yield* tx.get("idempotency", id)) as Doc<IdempotencyRow> | undefined
        // kept a day from now, when the answer is recorded (the sandbox clock may have moved days meanwhile)
        const at = yield* now
        const done = (base: IdempotencyRow): IdempotencyRow => answered(base, outcome, at)
        if (current === undefined) {
          // the request committed nothing (e.g. a validation error): record its outcome alone
          yield* tx.insert(keyRow(id, caller, t, done(freshRow(0))))
        } else if (current.data.owner !== owner) {
          return yield* Effect.fail(new DuplicateKey({ kind: "idempotency", key: id }))
        } else if (current.data.status === "completed" && current.data.outcome !== null) {
          // a retry recovered an answer while this use ran past its wait: that answer was given first
          return current.data.outcome as Recorded<A>
        } else {
          const data = done(current.data)
          yield* tx.update(revise(current, data, answeredDue(data)))
        }
        return outcome
      })
    ).pipe(
      // another execution took the key while this one committed nothing: its answer is the answer
      Effect.catchIf(
        (e) => e instanceof DuplicateKey,
        () => Effect.succeed(taken)
      )
    )
    return recorded === taken
      ? yield* awaitOther(id, fingerprint, recover, deadline, undefined, wait_ms)
      : yield* replay(recorded)
  })

const inProgress = () => conflict("A request with this Idempotency-Key is in progress; retry shortly.")

/** What `once`'s request answers when another execution took the key first. */
const taken: unique symbol = Symbol("taken")

/**
 * How long (real time, from its arrival) a use of a key waits for the key's
 * first use, running in another process on this store or cut off by a stop,
 * to record its answer before answering `409`. Uses in one process queue
 * behind each other; the time counts from arrival, the queue included, so
 * uses queued together give up together.
 */
export const in_flight_wait_ms = 3_000

/** Waits `ms` of real time, interruptibly: another process does not follow this one's clock (sandbox or test). */
const pause = (ms: number): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const handle = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(handle))
  })

/** `answerFrom`'s answer when the key's first use has not recorded its answer. */
const unanswered: unique symbol = Symbol("unanswered")

/**
 * What a later use of a key answers from the key's row: the recorded answer
 * (replayed), `idempotency_conflict` for another request, or `unanswered`.
 */
const answerFrom = <A>(
  row: IdempotencyRow,
  fingerprint: Fingerprint
): Effect.Effect<{ readonly value: A } | typeof unanswered, DomainError> => {
  if (!sameRequest(row, fingerprint)) {
    return Effect.fail(conflict("This Idempotency-Key was already used with a different request."))
  }
  if (row.status === "completed" && row.outcome !== null) {
    return Effect.map(replay(row.outcome as Recorded<A>), (value) => ({ value }))
  }
  return Effect.succeed(unanswered)
}

/**
 * The answer of a key whose first use has not answered by the deadline (cut
 * off by a stop after its effect, as a rule): `recover` reads it from the
 * objects the first use wrote, and it is recorded as the key's answer, so every
 * later retry replays it as given. Undefined when there is no `recover` or it
 * cannot answer. If an answer was recorded meanwhile (the first use ended
 * after all), that one is the answer.
 */
const recoverAnswer = <A, R2>(
  id: string,
  row: IdempotencyRow,
  recover: Recover<A, R2> | undefined
): Effect.Effect<{ readonly value: A } | undefined, DomainError | StoreError, R2 | Store> =>
  Effect.gen(function* () {
    const touched = row.touched ?? []
    if (recover === undefined || touched.length === 0) return undefined
    const recovered = yield* recover(touchedObjects(touched))
    if (recovered === undefined) return undefined
    const kept = yield* unitOfWork((tx) =>
      Effect.gen(function* () {
        const current = (yield* tx.get("idempotency", id)) as Doc<IdempotencyRow> | undefined
        if (current === undefined) return undefined
        if (current.data.status === "completed" && current.data.outcome !== null) {
          return current.data.outcome as Recorded<A>
        }
        const outcome: Recorded<A> = { ok: true, value: recovered }
        const data = answered(current.data, outcome, yield* now)
        yield* tx.update(revise(current, data, answeredDue(data)))
        return outcome
      })
    ).pipe(
      // the key's row has no unique keys: a duplicate is a defect
      Effect.catchIf(
        (e) => e instanceof DuplicateKey,
        (e) => Effect.die(e)
      )
    )
    return { value: kept === undefined ? recovered : yield* replay(kept) }
  })

/**
 * Polls the key's row while its first use (in another process on this store,
 * or cut off by a stop) has not recorded its answer, until `deadline` (real
 * time, `performance.now()`) and, when `recover` may answer, until the row has
 * been seen unanswered for `wait_ms`: the recorded answer is replayed;
 * none: `recoverAnswer`, else `409` naming what the first use wrote (`seen`:
 * the row as last read, if any). Reads only, but for recording a recovered
 * answer: this execution never runs the request.
 */
const awaitOther = <A, R2>(
  id: string,
  fingerprint: Fingerprint,
  recover: Recover<A, R2> | undefined,
  deadline: number,
  seen: IdempotencyRow | undefined,
  wait_ms: number
): Effect.Effect<A, DomainError | StoreError, R2 | Store> =>
  Effect.gen(function* () {
    let last = seen
    // when the row was first seen unanswered: it is recovered only once it has stayed so for a whole
    // wait (a first use that has just begun, met by a use past its own deadline, is waited for)
    let since = seen === undefined ? undefined : performance.now()
    // a use that has not read the row yet reads it once at least, even past its deadline
    for (let wait = seen === undefined ? 0 : 5; ; wait = Math.min(Math.max(wait, 5) * 2, 100)) {
      if (wait > 0) {
        const t = performance.now()
        const watched = since === undefined || recover === undefined || t - since >= wait_ms
        if (t >= deadline && watched) break
        yield* pause(wait)
      }
      const existing = yield* unitOfWork((tx) => tx.get("idempotency", id))
      if (existing === undefined) continue // the first use's unit did not commit (yet)
      last = existing.data as IdempotencyRow
      const answer = yield* answerFrom<A>(last, fingerprint)
      if (answer !== unanswered) return answer.value
      since ??= performance.now()
    }
    if (last === undefined) return yield* Effect.fail(inProgress())
    // no answer by now: the first use was cut off after its effect (as a rule); read it from what it wrote
    const recovered = yield* recoverAnswer(id, last, recover)
    if (recovered !== undefined) return recovered.value
    const touched = last.touched ?? []
    const where =
      touched.length === 0
        ? "look the object up (e.g. in the list)"
        : `it took effect on ${touched.join(", ")}: read that`
    return yield* Effect.fail(
      conflict(
        `A request with this Idempotency-Key is still running, or was cut off by a server stop after it took effect. Retry with the same key in a moment; if this answer persists, ${where} before sending the request again under a new key.`
      )
    )
  })

const touchedObjects = (touched: ReadonlyArray<string>) =>
  touched.map((t) => ({ kind: t.slice(0, t.indexOf(" ")), id: t.slice(t.indexOf(" ") + 1) }))

const replay = <A>(outcome: Recorded<A>): Effect.Effect<A, DomainError> =>
  outcome.ok
    ? Effect.succeed(outcome.value)
    : Effect.fail(new DomainError({ code: outcome.code, message: outcome.message }))

/**
 * Deletes at most `limit` key rows whose retention ended, when the Store has a
 * `StorePurge` (none: nothing is deleted and 0 is answered). A key used again
 * after that is a new request.
 */
export const purgeExpired = (limit = 100): Effect.Effect<number, StoreError> =>
  Effect.flatMap(Effect.serviceOption(StorePurge), (purge) =>
    Option.isNone(purge) ? Effect.succeed(0) : Effect.flatMap(now, (t) => purge.value.purgeDue("idempotency", t, limit))
  )
