import { DomainError } from "@xaalis/core"
import { Clock, Context, Effect, Option } from "effect"
import type { Doc, DuplicateKey, Kind, Mode, Scope, Tx } from "../ports/Store.ts"
import { Store, StoreError, VersionConflict } from "../ports/Store.ts"

export type { Scope }

/** The caller of a use case: a business acting in one mode (from its API key). */
export interface Caller extends Scope {
  readonly account_id: string
}

export const now = Clock.currentTimeMillis

export const permissionDenied = (what: string) =>
  new DomainError({ code: "permission_denied", message: `${what} requires a live secret key (sk_live_…).` })

/**
 * `not_found` naming the id the caller sent, shortened to 64 characters (ids
 * are UUIDs; whatever else was sent is echoed no longer than that) and as JSON
 * text, so control characters in it show as escapes.
 */
export const notFound = (what: string, id: string) =>
  new DomainError({ code: "not_found", message: `No ${what} with id ${echoId(id)}.` })

const echoId = (id: string): string => {
  const short = id.length <= 64 ? id : `${id.slice(0, 64)}…`
  // a UUID (the usual case) is shown as it is; anything else with its control characters escaped
  return /^[\x20-\x7e]*$/.test(short) ? short : JSON.stringify(short).slice(1, -1)
}

/** Live-only operations (decisions §7: all of `/v1/minting/*`). */
export const requireLive = (caller: Scope, what: string): Effect.Effect<void, DomainError> =>
  caller.mode === "live" ? Effect.void : Effect.fail(permissionDenied(what))

const conflict_retries_max = 8

const isVersionConflict = (e: unknown): e is VersionConflict => e instanceof VersionConflict

/**
 * Runs `work` in `store`, again from scratch on `VersionConflict`, at most
 * `retries` more times, after a zero sleep (a yield on the live clock), as
 * `Effect.retry` does; written out because `Effect.retry` builds its schedule on
 * every call, which cost a transfer more than the rest of its unit of work.
 */
const attempt = <A, E, R>(
  store: Store["Service"],
  work: (tx: Tx) => Effect.Effect<A, E, R>,
  retries: number
): Effect.Effect<A, Exclude<E, VersionConflict> | StoreError, R> =>
  Effect.catchIf(
    store.transact(work) as Effect.Effect<A, E | StoreError | VersionConflict, R>,
    isVersionConflict,
    (e) =>
      retries > 0
        ? Effect.andThen(Effect.sleep(0), attempt(store, work, retries - 1))
        : Effect.fail(new StoreError({ message: `too many concurrent updates of ${e.kind} ${e.id}` }))
  ) as Effect.Effect<A, Exclude<E, VersionConflict> | StoreError, R>

/**
 * Runs `work` as one unit of work, retried from scratch when another unit
 * updated the same row first (optimistic concurrency). A conflict that survives
 * the retries is reported as a (retryable) store failure.
 */
export const unitOfWork = <A, E, R>(
  work: (tx: Tx) => Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, VersionConflict> | StoreError, R | Store> =>
  Effect.contextWith((context: Context.Context<Store>) =>
    attempt(Context.get(context, Store), work, conflict_retries_max)
  )

/** `unitOfWork` in a store already in hand (a caller that read it from its context with other services). */
export const unitOfWorkIn = <A, E, R>(
  store: Store["Service"],
  work: (tx: Tx) => Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, VersionConflict> | StoreError, R> => attempt(store, work, conflict_retries_max)

/** The longest text `flat` flattens. */
const flat_max = 128
/** Scratch bytes of `flat`: room for the UTF-8 of any text of `flat_max` UTF-16 units (at most 3 bytes each). */
const flatBytes = Buffer.alloc(3 * flat_max)

/**
 * `text` as one flat string when it is ASCII and short (up to 128 characters),
 * otherwise `text` itself. A string built by concatenation (a template literal)
 * is a tree of its pieces, which V8 keeps as they are: a text stored with a row
 * (a unique key, an address) then costs the garbage collector several objects
 * for as long as the store holds it, instead of one.
 */
export const flat = (text: string): string => {
  if (text.length > flat_max) return text
  // never truncated (see flatBytes), so one byte per character means every character is ASCII
  const n = flatBytes.write(text, 0, "utf8")
  return n === text.length ? flatBytes.toString("latin1", 0, n) : text
}

export const newDoc = <D>(input: {
  readonly kind: Kind
  readonly id: string
  readonly scope: Scope | null
  readonly now: number
  readonly data: D
  readonly due_at?: number | null
  readonly keys?: ReadonlyArray<string>
}): Doc<D> => ({
  kind: input.kind,
  id: input.id,
  business_id: input.scope?.business_id ?? null,
  mode: (input.scope?.mode ?? null) as Mode | null,
  created_at: input.now,
  version: 1,
  due_at: input.due_at ?? null,
  keys: input.keys ?? [],
  data: input.data
})

/** The next version of a stored row with new data. */
export const revise = <D>(doc: Doc, data: D, due_at: number | null = doc.due_at): Doc<D> => ({
  ...doc,
  version: doc.version + 1,
  due_at,
  data
})

/**
 * Writes the `counter` row `id` (a sequence or a setting kept in the Store):
 * inserted with `data` when `current` (the row as this unit of work read it) is
 * undefined, else revised to `data`. Two first writes racing to insert it meet
 * as a `VersionConflict`, so `unitOfWork` runs the loser again and it revises
 * the winner's row. A counter has no unique keys: a duplicate is a defect.
 */
export const putCounter = <D>(
  tx: Tx,
  input: {
    readonly id: string
    readonly scope: Scope | null
    readonly now: number
    readonly current: Doc | undefined
    readonly data: D
  }
): Effect.Effect<void, StoreError | VersionConflict> =>
  input.current === undefined
    ? Effect.catchIf(
        tx.insert(newDoc({ kind: "counter", id: input.id, scope: input.scope, now: input.now, data: input.data })),
        isDuplicateKey,
        () => Effect.fail(new VersionConflict({ kind: "counter", id: input.id }))
      )
    : Effect.catchIf(tx.update(revise(input.current, input.data)), isDuplicateKey, Effect.die)

/** A store's `DuplicateKey` among a unit's failures. */
export const isDuplicateKey = (e: unknown): e is DuplicateKey =>
  typeof e === "object" && e !== null && (e as { readonly _tag?: unknown })._tag === "DuplicateKey"

/** Loads a row of the caller's scope; another business's or mode's row is `not_found`. */
export const getScoped = <D>(tx: Tx, kind: Kind, scope: Scope, id: string, what: string) =>
  Effect.flatMap(tx.get(kind, id), (doc) =>
    doc === undefined || doc.business_id !== scope.business_id || doc.mode !== scope.mode
      ? Effect.fail(notFound(what, id))
      : Effect.succeed(doc as Doc<D>)
  )

/** Lifts a core `Step` result into an Effect. */
export const fromStep = Effect.fromResult

/**
 * The scheduler's sweep: for each row of `kind` whose `due_at` has passed, in
 * its own unit of work, re-read it (another unit may have handled it since) and
 * let `act` apply the rule that fell due. When `act` answers false (the rule no
 * longer applies: the object became final, or was never eligible), the row's
 * `due_at` is cleared so it is not looked at again. Returns how many acted.
 */
export const sweepDue = <D, E, R>(
  kind: Kind,
  limit: number,
  act: (tx: Tx, doc: Doc<D>, now: number) => Effect.Effect<boolean, E, R>
) =>
  Effect.gen(function* () {
    const t = yield* now
    const due = yield* unitOfWork((tx) => tx.due(kind, t, limit))
    let acted = 0
    for (const candidate of due) {
      const done = yield* unitOfWork((tx) =>
        Effect.gen(function* () {
          const doc = (yield* tx.get(kind, candidate.id)) as Doc<D> | undefined
          if (doc === undefined || doc.due_at === null || doc.due_at > t) return false
          if (yield* act(tx, doc, t)) return true
          yield* tx.update(revise(doc, doc.data, null))
          return false
        })
      )
      if (done) acted += 1
    }
    return acted
  })

/**
 * The Store of the caller's context, or `own` when it has none. A setting of
 * the sandbox is written through the caller's: under an Idempotency-Key, that
 * is the request's Store, whose units also write the key's row (the same
 * database as `own`).
 */
export const callersStore = (own: Store["Service"]): Effect.Effect<Store["Service"]> =>
  Effect.map(Effect.serviceOption(Store), (o) => (Option.isSome(o) ? o.value : own))
