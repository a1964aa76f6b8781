import { createHash, timingSafeEqual } from "node:crypto"
import { DomainError } from "@xaalis/core"
import { Context, Effect } from "effect"
import { Ids } from "../ports/Ids.ts"
import { type Doc, type Mode, Store, type StoreError, type Tx } from "../ports/Store.ts"
import { type Caller, newDoc, now, unitOfWork } from "./common.ts"

export interface Business {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly webhook_url: string | null
  /** `whsec_<base64 of 32 random bytes>`, handed out once at creation. */
  readonly webhook_secret: string
  readonly created_at: number
}

interface ApiKeyRow {
  readonly business_id: string
  readonly mode: Mode
  /** sha256 of the key, hex; the key itself is never stored. */
  readonly hash: string
}

export const hashKey = (key: string): string => createHash("sha256").update(key, "utf8").digest("hex")

const base64url = (b: Uint8Array) => Buffer.from(b).toString("base64url")

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
  const secret_key_test = `sk_test_${base64url(yield* ids.bytes(24))}`
  const secret_key_live = `sk_live_${base64url(yield* ids.bytes(24))}`
  const webhook_secret = `whsec_${Buffer.from(yield* ids.bytes(32)).toString("base64")}`
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
      for (const [key, mode] of [
        [secret_key_test, "test"],
        [secret_key_live, "live"]
      ] as const) {
        const hash = hashKey(key)
        const row: ApiKeyRow = { business_id: id, mode, hash }
        yield* tx.insert(newDoc({ kind: "api_key", id: hash, scope: null, now: t, data: row }))
      }
    })
  ).pipe(Effect.orDie)
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

/** The caller of a stored key row, read in the unit of work `tx`. */
const callerOf = (tx: Tx, hash: string, row: Doc | undefined): Effect.Effect<Caller, DomainError | StoreError> => {
  const data = row?.data as ApiKeyRow | undefined
  if (data === undefined || !timingSafeEqual(Buffer.from(data.hash, "hex"), Buffer.from(hash, "hex"))) {
    return failUnauthenticated
  }
  return Effect.flatMap(tx.get("business", data.business_id), (business) => {
    if (business === undefined) return failUnauthenticated
    const b = business.data as Business
    const caller: Caller = { business_id: b.id, account_id: b.account_id, mode: data.mode }
    return Effect.succeed(caller)
  })
}

/**
 * Resolves a secret key to its business and mode. Unknown, malformed and
 * missing keys all get the same `authentication_error`; the stored hash is
 * compared in constant time.
 *
 * The first request of every key runs it: two reads in one unit of work,
 * straight on the Store (a unit that only reads cannot meet a version
 * conflict, so `unitOfWork`'s retry has nothing to do), untraced.
 */
export const authenticate = (key: string | undefined): Effect.Effect<Caller, DomainError | StoreError, Store> => {
  if (key === undefined || !KEY_SHAPE.test(key)) return failUnauthenticated
  const hash = hashKey(key)
  return Effect.contextWith((context: Context.Context<Store>) =>
    Context.get(context, Store).transact((tx) =>
      Effect.flatMap(tx.get("api_key", hash), (row) => callerOf(tx, hash, row))
    )
  )
}

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
