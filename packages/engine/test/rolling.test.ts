import { assert, describe, it } from "@effect/vitest"
import { Businesses, Store } from "@xaalis/engine"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { business, codeOf, testLayer } from "./setup.ts"

/** The catalogue code `authenticate` answers for `key`, or "ok". */
const authOutcome = (key: string) =>
  Effect.match(Businesses.authenticate(key), { onFailure: codeOf, onSuccess: () => "ok" })

describe("rolling a secret key", () => {
  it.effect("at once (the default): the old key fails, the new one authenticates as the same business and mode", () =>
    Effect.gen(function* () {
      const { created, live } = yield* business()
      const rolled = yield* Businesses.rollApiKey({ business_id: created.id, mode: "live" })
      assert.match(rolled.secret_key, /^sk_live_[A-Za-z0-9_-]{32}$/)
      assert.notStrictEqual(rolled.secret_key, created.secret_key_live)
      assert.strictEqual(rolled.previous_keys, 1)
      assert.strictEqual(yield* authOutcome(created.secret_key_live), "authentication_error")
      assert.deepStrictEqual(yield* Businesses.authenticate(rolled.secret_key), live)
      // the other mode is untouched
      assert.strictEqual(yield* authOutcome(created.secret_key_test), "ok")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("with a grace period: both keys work until it ends, on the engine's clock, then only the new one", () =>
    Effect.gen(function* () {
      const { created } = yield* business()
      const before = yield* Businesses.grant(created.secret_key_test)
      assert.strictEqual(before.expires_at, null)
      const rolled = yield* Businesses.rollApiKey({ business_id: created.id, mode: "test", expires_in_seconds: 3600 })
      const start = (yield* Businesses.grant(rolled.secret_key)).expires_at
      assert.strictEqual(start, null)
      const old = yield* Businesses.grant(created.secret_key_test)
      assert.strictEqual(old.expires_at, rolled.previous_keys_expire_at)
      yield* TestClock.adjust("3599 seconds")
      assert.strictEqual(yield* authOutcome(created.secret_key_test), "ok")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* authOutcome(created.secret_key_test), "authentication_error")
      assert.strictEqual(yield* authOutcome(rolled.secret_key), "ok")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a second roll never lengthens an earlier key's expiry and expires every earlier key", () =>
    Effect.gen(function* () {
      const { created } = yield* business()
      const first = yield* Businesses.rollApiKey({ business_id: created.id, mode: "live", expires_in_seconds: 60 })
      const second = yield* Businesses.rollApiKey({ business_id: created.id, mode: "live", expires_in_seconds: 600 })
      // the original key keeps its 60 s; the first rolled key gets 600 s
      assert.strictEqual(second.previous_keys, 1)
      assert.strictEqual((yield* Businesses.grant(created.secret_key_live)).expires_at, first.previous_keys_expire_at)
      assert.strictEqual((yield* Businesses.grant(first.secret_key)).expires_at, second.previous_keys_expire_at)
      yield* TestClock.adjust("60 seconds")
      assert.deepStrictEqual(
        [
          yield* authOutcome(created.secret_key_live),
          yield* authOutcome(first.secret_key),
          yield* authOutcome(second.secret_key)
        ],
        ["authentication_error", "ok", "ok"]
      )
      const third = yield* Businesses.rollApiKey({ business_id: created.id, mode: "live" })
      assert.strictEqual(third.previous_keys, 2)
      assert.deepStrictEqual(
        [
          yield* authOutcome(first.secret_key),
          yield* authOutcome(second.secret_key),
          yield* authOutcome(third.secret_key)
        ],
        ["authentication_error", "authentication_error", "ok"]
      )
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("two immediate rolls at once leave exactly one working key of the mode", () =>
    Effect.gen(function* () {
      const { created } = yield* business()
      const input = { business_id: created.id, mode: "live" as const }
      const [a, b] = yield* Effect.all([Businesses.rollApiKey(input), Businesses.rollApiKey(input)], {
        concurrency: "unbounded"
      })
      const outcomes = [
        yield* authOutcome(created.secret_key_live),
        yield* authOutcome(a.secret_key),
        yield* authOutcome(b.secret_key)
      ]
      assert.deepStrictEqual(outcomes.filter((o) => o === "ok").length, 1)
      assert.strictEqual(outcomes[0], "authentication_error")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("touches no other business", () =>
    Effect.gen(function* () {
      const a = yield* business()
      const b = yield* business()
      yield* Businesses.rollApiKey({ business_id: a.created.id, mode: "live" })
      assert.strictEqual(yield* authOutcome(b.created.secret_key_live), "ok")
      assert.strictEqual(yield* authOutcome(a.created.secret_key_live), "authentication_error")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("bad input is a catalogue error and changes nothing", () =>
    Effect.gen(function* () {
      const { created } = yield* business()
      const store = yield* Store
      const before = yield* store.transact((tx) =>
        tx.list("api_key", { business_id: created.id, mode: "live" }, { limit: 10, offset: 0 })
      )
      const attempts = [
        { business_id: created.id, mode: "live" as const, expires_in_seconds: -1 },
        { business_id: created.id, mode: "live" as const, expires_in_seconds: 1.5 },
        { business_id: created.id, mode: "live" as const, expires_in_seconds: Businesses.roll_expiry_max_seconds + 1 },
        { business_id: created.id, mode: "prod" as unknown as "live" },
        { business_id: "00000000-0000-4000-8000-000000000000", mode: "live" as const }
      ]
      const codes: Array<string> = []
      for (const input of attempts) {
        codes.push(yield* Effect.match(Businesses.rollApiKey(input), { onFailure: codeOf, onSuccess: () => "ok" }))
      }
      assert.deepStrictEqual(codes, [
        "validation_error",
        "validation_error",
        "validation_error",
        "validation_error",
        "not_found"
      ])
      const after = yield* store.transact((tx) =>
        tx.list("api_key", { business_id: created.id, mode: "live" }, { limit: 10, offset: 0 })
      )
      assert.deepStrictEqual(after, before)
      assert.strictEqual(yield* authOutcome(created.secret_key_live), "ok")
      // the 7-day maximum itself is accepted
      const max = yield* Businesses.rollApiKey({
        business_id: created.id,
        mode: "live",
        expires_in_seconds: Businesses.roll_expiry_max_seconds
      })
      assert.strictEqual(max.previous_keys, 1)
    }).pipe(Effect.provide(testLayer()))
  )
})

describe("rolling the webhook secret", () => {
  const secretsAt = (business_id: string) =>
    Effect.gen(function* () {
      const store = yield* Store
      const doc = yield* store.transact((tx) => tx.get("business", business_id))
      const t = yield* Clock.currentTimeMillis
      return Businesses.signingSecrets(doc?.data as Businesses.Business, t)
    })

  it.effect(
    "signing secrets, newest first: each roll adds one for its grace period, never lengthening an earlier one",
    () =>
      Effect.gen(function* () {
        const { created } = yield* business()
        const s0 = created.webhook_secret
        assert.deepStrictEqual(yield* secretsAt(created.id), [s0])
        const r1 = yield* Businesses.rollWebhookSecret({ business_id: created.id, expires_in_seconds: 600 })
        assert.match(r1.webhook_secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
        assert.deepStrictEqual(yield* secretsAt(created.id), [r1.webhook_secret, s0])
        yield* TestClock.adjust("60 seconds")
        const r2 = yield* Businesses.rollWebhookSecret({ business_id: created.id, expires_in_seconds: 3600 })
        assert.deepStrictEqual(yield* secretsAt(created.id), [r2.webhook_secret, r1.webhook_secret, s0])
        // s0 keeps its 600 s (540 left), r1 gets 3600
        yield* TestClock.adjust("540 seconds")
        assert.deepStrictEqual(yield* secretsAt(created.id), [r2.webhook_secret, r1.webhook_secret])
        yield* TestClock.adjust("3060 seconds")
        assert.deepStrictEqual(yield* secretsAt(created.id), [r2.webhook_secret])
        // an immediate roll drops every earlier secret at once
        yield* Businesses.rollWebhookSecret({ business_id: created.id, expires_in_seconds: 600 })
        const r4 = yield* Businesses.rollWebhookSecret({ business_id: created.id })
        assert.deepStrictEqual(yield* secretsAt(created.id), [r4.webhook_secret])
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("bad input is a catalogue error and changes nothing", () =>
    Effect.gen(function* () {
      const { created } = yield* business()
      const codes: Array<string> = []
      for (const input of [
        { business_id: created.id, expires_in_seconds: -1 },
        { business_id: created.id, expires_in_seconds: Businesses.roll_expiry_max_seconds + 1 },
        { business_id: created.id, expires_in_seconds: Number.NaN },
        { business_id: "00000000-0000-4000-8000-000000000000" }
      ]) {
        codes.push(
          yield* Effect.match(Businesses.rollWebhookSecret(input), { onFailure: codeOf, onSuccess: () => "ok" })
        )
      }
      assert.deepStrictEqual(codes, ["validation_error", "validation_error", "validation_error", "not_found"])
      assert.deepStrictEqual(yield* secretsAt(created.id), [created.webhook_secret])
    }).pipe(Effect.provide(testLayer()))
  )
})
