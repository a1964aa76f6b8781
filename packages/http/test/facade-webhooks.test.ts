import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Decimal } from "@xaalis/core"
import { createEngine } from "@xaalis/engine"
import { SqliteStore } from "@xaalis/store-sqlite"
import { verify } from "@xaalis/webhooks"
import { Effect, Exit, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { HttpNotifier } from "../src/notifier/index.ts"
import { startReceiver } from "./notifier-helpers.ts"

/**
 * The Promise face with real webhooks on a durable store: `HttpNotifier.layer`
 * needs the Store (it reads the webhook secrets there) and `createEngine`
 * provides its own store to it, so the delivery is signed with the secret the
 * business was given (an audit found the option typed so narrowly that this
 * took a cast).
 */
const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe("createEngine with HttpNotifier on the SQLite store", () => {
  it("sends signed webhooks, the notifier reading the secrets from the engine's own store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "xaalis-facade-"))
    dirs.push(dir)
    const scope = await Effect.runPromise(Scope.make())
    const receiver = await Effect.runPromise(
      Scope.provide(
        startReceiver(() => ({ status: 200 })),
        scope
      )
    )
    const engine = createEngine({
      store: SqliteStore.layerFromDataDir(dir),
      notifier: HttpNotifier.layer({ allowLoopbackHttp: true }),
      sandbox: { rate: Decimal.parse("70") as Decimal.Decimal }
    })
    try {
      await engine.ready()
      const biz = await engine.createBusiness({ name: "Kairaba Coffee" })
      const live = await engine.authenticate(biz.secret_key_live)
      const intent = await engine.createPaymentIntent(live, {
        data: { amount: 250, callback_url: receiver.url("/hooks") }
      })
      await engine.runDue()
      await receiver.arrived(1)
      const [delivery] = receiver.received
      const envelope = verify(new Uint8Array(delivery?.body ?? []), delivery?.headers ?? {}, biz.webhook_secret)
      expect(envelope.event).toBe("payment_intent.created")
      expect((envelope.payload as { payment_intent_id: string }).payment_intent_id).toBe(intent.payment_intent_id)
    } finally {
      await engine.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
