import { createHash, timingSafeEqual } from "node:crypto"
import { DomainError, Errors } from "@xaalis/core"
import { Context, Effect } from "effect"
import { Ids } from "../ports/Ids.ts"
import {
  type Doc,
  DuplicateKey,
  type Mode,
  Store,
  type StoreError,
  type Tx,
  type VersionConflict
} from "../ports/Store.ts"
import { type Caller, newDoc, notFound, now, revise, unitOfWork, unitOfWorkIn } from "./common.ts"

export interface Business {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly webhook_url: string | null
  /** `whsec_<base64 of 32 random bytes>`, handed out once at creation (and at each roll). */
  readonly webhook_secret: string
  /**
   * Secrets replaced by `rollWebhookSecret` that still sign deliveries until
   * `expires_at` (epoch ms, engine clock), newest first. Absent: none.
   */
  readonly previous_webhook_secrets?: ReadonlyArray<{ readonly secret: string; readonly expires_at: number }>
  readonly created_at: number
}

/**
 * The secrets that sign a delivery of `business` at time `t`, newest first:
 * the current one, then the rolled ones whose grace period has not ended.
 */
export const signingSecrets = (business: Business, t: number): ReadonlyArray<string> => [
  business.webhook_secret,
  ...(business.previous_webhook_secrets ?? []).filter((p) => p.expires_at > t).map((p) => p.secret)
]

interface ApiKeyRow {
  readonly business_id: string
  readonly mode: Mode
  /** sha256 of the key, hex; the key itself is never stored. */
  readonly hash: string
  /**
   * Epoch ms from which the key no longer authenticates (set by `rollApiKey`);
   * absent or null: no expiry. Rows written before key rolling have none.
   */
  readonly expires_at?: number | null
}

export const hashKey = (key: string): string => createHash("sha256").update(key, "utf8").digest("hex")

const base64url = (b: Uint8Array) => Buffer.from(b).toString("base64url")

/** A new webhook secret: `whsec_<base64 of 32 random bytes>` (the Standard Webhooks form). */
const newWebhookSecret = (ids: Ids["Service"]) =>
  Effect.map(ids.bytes(32), (bytes) => `whsec_${Buffer.from(bytes).toString("base64")}`)

/** A new secret key of `mode` (`sk_test_…`/`sk_live_…`, 24 random bytes). */
const newSecretKey = (ids: Ids["Service"], mode: Mode) =>
  Effect.map(ids.bytes(24), (bytes) => `sk_${mode}_${base64url(bytes)}`)

/**
 * Stores the hash of `key` as a key of the business in `mode`. The row is
 * scoped to the business and mode, so `rollApiKey` can list a business's keys;
 * its id is the hash, so `authenticate` finds it with one read.
 */
const insertKey = (tx: Tx, key: string, scope: { readonly business_id: string; readonly mode: Mode }, t: number) => {
  const hash = hashKey(key)
  const row: ApiKeyRow = { business_id: scope.business_id, mode: scope.mode, hash }
  return tx.insert(newDoc({ kind: "api_key", id: hash, scope, now: t, data: row }))
}

export interface CreatedBusiness {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly secret_key_test: string
  readonly secret_key_live: string
  readonly webhook_secret: string
}

/** Creates a business with a test key, a live key and a webhook secret. Only hashes of the keys are stored. */
export const createBusiness = Effect.fn("createBusiness")(function* (input: {
  readonly name?: string | undefined
  readonly webhook_url?: string | undefined
}) {
  const ids = yield* Ids
  const t = yield* now
  const id = yield* ids.uuid
  const account_id = yield* ids.uuid
  const secret_key_test = yield* newSecretKey(ids, "test")
  const secret_key_live = yield* newSecretKey(ids, "live")
  const webhook_secret = yield* newWebhookSecret(ids)
  const business: Business = {
    id,
    account_id,
    name: input.name ?? "Sandbox business",
    webhook_url: input.webhook_url ?? null,
    webhook_secret,
    created_at: t
  }
  yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      yield* tx.insert(newDoc({ kind: "business", id, scope: null, now: t, data: business }))
      yield* insertKey(tx, secret_key_test, { business_id: id, mode: "test" }, t)
      yield* insertKey(tx, secret_key_live, { business_id: id, mode: "live" }, t)
    })
  ).pipe(
    // fresh ids: a duplicate is a defect. Anything else goes on (a store fault; under an
    // Idempotency-Key, the key taken by another process's use, which the key's wrapper answers)
    Effect.catchIf(
      (e) => e instanceof DuplicateKey,
      (e) => Effect.die(e)
    )
  )
  const created: CreatedBusiness = {
    id,
    account_id,
    name: business.name,
    secret_key_test,
    secret_key_live,
    webhook_secret
  }
  return created
})

const KEY_SHAPE = /^sk_(test|live)_[A-Za-z0-9_-]{16,128}$/

const unauthenticated = new DomainError({ code: "authentication_error", message: "Invalid API key." })

const failUnauthenticated = Effect.fail(unauthenticated)

/** A key that authenticates: its caller, and when it stops (epoch ms; null: never). */
export interface KeyGrant {
  readonly caller: Caller
  readonly expires_at: number | null
}

/** The grant of a stored key row at time `t`, read in the unit of work `tx`. */
const grantOf = (
  tx: Tx,
  hash: string,
  row: Doc | undefined,
  t: number
): Effect.Effect<KeyGrant, DomainError | StoreError | VersionConflict> => {
  const data = row?.data as ApiKeyRow | undefined
  if (data === undefined || !timingSafeEqual(Buffer.from(data.hash, "hex"), Buffer.from(hash, "hex"))) {
    return failUnauthenticated
  }
  const expires_at = data.expires_at ?? null
  if (expires_at !== null && expires_at <= t) return failUnauthenticated
  return Effect.flatMap(tx.get("business", data.business_id), (business) => {
    if (business === undefined) return failUnauthenticated
    const b = business.data as Business
    const grant: KeyGrant = {
      caller: { business_id: b.id, account_id: b.account_id, mode: data.mode },
      expires_at
    }
    return Effect.succeed(grant)
  })
}

/**
 * Resolves a secret key to its business and mode. Unknown, malformed and
 * missing keys all get the same `authentication_error`; the stored hash is
 * compared in constant time.
 *
 * The first request of every key runs it: two reads in one unit of work,
 * untraced (a unit that only reads rarely meets a version conflict, but a
 * database may still report one, a deadlock say: it is run again then).
 */
export const authenticate = (key: string | undefined): Effect.Effect<Caller, DomainError | StoreError, Store> =>
  Effect.map(grant(key), (g) => g.caller)

/**
 * `authenticate`, with the key's expiry: what a cache of authenticated keys
 * needs to stop honouring a rolled key on time. A key whose expiry has passed
 * (on the engine's Clock) answers `authentication_error`, like an unknown one.
 */
export const grant = (key: string | undefined): Effect.Effect<KeyGrant, DomainError | StoreError, Store> => {
  if (key === undefined || !KEY_SHAPE.test(key)) return failUnauthenticated
  const hash = hashKey(key)
  return Effect.contextWith((context: Context.Context<Store>) =>
    Effect.flatMap(now, (t) =>
      unitOfWorkIn(Context.get(context, Store), (tx) =>
        Effect.flatMap(tx.get("api_key", hash), (row) => grantOf(tx, hash, row, t))
      )
    )
  )
}

/** The longest a rolled key keeps working: 7 days. */
export const roll_expiry_max_seconds = 7 * 24 * 3600

export interface RolledKey {
  /** The new secret key, handed out once: only its hash is stored. */
  readonly secret_key: string
  readonly mode: Mode
  /** When the business's earlier keys of this mode stop (epoch ms); `expires_in_seconds` 0 means now. */
  readonly previous_keys_expire_at: number
  /** How many earlier keys this roll shortened (keys already expiring sooner keep their expiry). */
  readonly previous_keys: number
}

/**
 * Rolls the secret key of a business in one mode: a new key, and every earlier
 * key of that business and mode stops working `expires_in_seconds` from now
 * (0, the default: at once, which is how a leaked key is revoked; at most 7
 * days, for a planned rotation while deployments switch). One unit of work: the
 * new key and the expiries commit together or not at all. Keys of the other
 * mode and of other businesses are untouched.
 *
 * There is deliberately no HTTP operation for this: a key must not be able to
 * roll itself (whoever stole it could lock its owner out). Call it from the
 * operator's own back office, then `forgetKeys()` in every process that caches
 * keys (`@xaalis/http` caches them for at most its `authCache.ttlMs`).
 */
export const rollApiKey = Effect.fn("rollApiKey")(function* (input: {
  readonly business_id: string
  readonly mode: Mode
  readonly expires_in_seconds?: number
}) {
  const seconds = yield* gracePeriod(input.expires_in_seconds)
  if (input.mode !== "test" && input.mode !== "live") {
    return yield* Effect.fail(Errors.validation("mode must be test or live.", "mode"))
  }
  const ids = yield* Ids
  const t = yield* now
  const secret_key = yield* newSecretKey(ids, input.mode)
  const expires_at = t + seconds * 1000
  const scope = { business_id: input.business_id, mode: input.mode }
  const previous_keys = yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      if ((yield* tx.get("business", input.business_id)) === undefined) {
        return yield* Effect.fail(notFound("business", input.business_id))
      }
      let shortened = 0
      for (let offset = 0; ; offset += key_page) {
        const { docs } = yield* tx.list("api_key", scope, { limit: key_page, offset })
        for (const doc of docs as ReadonlyArray<Doc<ApiKeyRow>>) {
          const current = doc.data.expires_at ?? null
          if (current !== null && current <= expires_at) continue
          yield* tx.update(revise(doc, { ...doc.data, expires_at }))
          shortened += 1
        }
        if (docs.length < key_page) break
      }
      yield* insertKey(tx, secret_key, scope, t)
      return shortened
    }).pipe(
      // key rows have no secondary keys, and a new key's hash colliding (24 random bytes) is not a case to handle
      Effect.catchTag("DuplicateKey", Effect.die)
    )
  )
  const rolled: RolledKey = { secret_key, mode: input.mode, previous_keys_expire_at: expires_at, previous_keys }
  return rolled
})

const key_page = 100

/** The shared check of a roll's grace period, in whole seconds from 0 to 7 days. */
const gracePeriod = (seconds: number | undefined) => {
  const value = seconds ?? 0
  return Number.isSafeInteger(value) && value >= 0 && value <= roll_expiry_max_seconds
    ? Effect.succeed(value)
    : Effect.fail(
        Errors.validation(
          `expires_in_seconds must be a whole number from 0 to ${roll_expiry_max_seconds} (7 days).`,
          "expires_in_seconds"
        )
      )
}

export interface RolledWebhookSecret {
  /** The new secret, handed out once. */
  readonly webhook_secret: string
  /** Until when (epoch ms) the replaced secret still signs deliveries, beside the new one. */
  readonly previous_secret_expires_at: number
}

/**
 * Rolls a business's webhook secret. Deliveries are signed with the new secret
 * at once; the replaced one keeps signing beside it for `expires_in_seconds`
 * (0, the default: not at all, for a leaked secret; at most 7 days). During that
 * grace period `webhook-signature` carries one `v1` signature per secret, and
 * `x-service-signature` (which has room for one) stays on the oldest secret
 * still in its grace period, so a receiver that knows only the old secret keeps
 * verifying either scheme while it adds the new one; when the period ends, both
 * schemes use the new secret alone. Earlier grace periods are never lengthened.
 */
export const rollWebhookSecret = Effect.fn("rollWebhookSecret")(function* (input: {
  readonly business_id: string
  readonly expires_in_seconds?: number
}) {
  const seconds = yield* gracePeriod(input.expires_in_seconds)
  const ids = yield* Ids
  const t = yield* now
  const webhook_secret = yield* newWebhookSecret(ids)
  const expires_at = t + seconds * 1000
  yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      const doc = (yield* tx.get("business", input.business_id)) as Doc<Business> | undefined
      if (doc === undefined) return yield* Effect.fail(notFound("business", input.business_id))
      const previous = [{ secret: doc.data.webhook_secret, expires_at }, ...(doc.data.previous_webhook_secrets ?? [])]
        .map((p) => ({ secret: p.secret, expires_at: Math.min(p.expires_at, expires_at) }))
        .filter((p) => p.expires_at > t)
      const business: Business = { ...doc.data, webhook_secret, previous_webhook_secrets: previous }
      yield* tx.update(revise(doc, business))
    }).pipe(Effect.catchTag("DuplicateKey", Effect.die))
  )
  const rolled: RolledWebhookSecret = { webhook_secret, previous_secret_expires_at: expires_at }
  return rolled
})

/** The business record (webhook URL and secret) of a scope. */
export const getBusiness = (business_id: string) =>
  unitOfWork((tx) => Effect.map(tx.get("business", business_id), (d) => d?.data as Business | undefined))

/**
 * The caller a sandbox test helper acts as on the business's object `id` of
 * `kind`. Test helpers take any key of the business (decisions §9), so a test
 * key may drive a live object and the other way round: when the business owns
 * the object in the other mode, the caller is switched to that mode. Otherwise
 * the caller is returned as given, so an unknown or another business's object
 * stays `not_found`. Only for the test helpers: API operations keep modes apart.
 */
export const helperCaller = (caller: Caller, kind: "payment_intent" | "invoice", id: string) =>
  unitOfWork((tx) =>
    Effect.map(
      tx.get(kind, id),
      (doc): Caller =>
        doc !== undefined && doc.business_id === caller.business_id && doc.mode !== null && doc.mode !== caller.mode
          ? { ...caller, mode: doc.mode }
          : caller
    )
  )
