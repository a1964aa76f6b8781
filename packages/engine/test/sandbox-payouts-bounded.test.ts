import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryStore, Payouts, Sandbox, Store } from "@xaalis/engine"
import { Context, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"

/**
 * The simulated payout rail's list of payouts paid (`SandboxControl.payouts`)
 * keeps the last `Sandbox.sent_payouts_max`: it used to keep every payout for the life
 * of the process, and scan them all at each new one, in a server that pays
 * without end (the reference server uses this rail, with the sandbox on or off).
 */
const worldOn = (store: Store["Service"], shared: boolean) =>
  Effect.runPromise(
    Layer.build(
      (shared ? Sandbox.layerShared : Sandbox.layer)({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(
        Layer.provide(IdsAdapter.layer),
        Layer.provide(Layer.succeed(Store, store))
      )
    ).pipe(Effect.scoped)
  )

/** `Sandbox.sent_payouts_max`, written out so that the test runs the same against a build without it. */
const max = 1_000

const aStore = () =>
  Effect.runPromise(Layer.build(MemoryStore.layer).pipe(Effect.map(Context.get(Store)), Effect.scoped))

describe("the sandbox rail's list of payouts paid", () => {
  for (const shared of [false, true]) {
    it(`keeps the last ${max}, oldest dropped first (${shared ? "layerShared" : "layer"})`, async () => {
      const world = await worldOn(await aStore(), shared)
      const send = (key: string) =>
        Effect.runPromiseExit(
          Context.get(world, Payouts).send({
            idempotency_key: key,
            business_id: "biz-1",
            network: "wave",
            account_number: "7012345",
            account_name: "Awa Njie",
            amount: 10_000n
          })
        )
      const extra = 25
      for (let i = 0; i < max + extra; i++) {
        expect(Exit.isSuccess(await send(`payout-${i}`))).toBe(true)
      }
      // a key sent again is still one payout
      expect(Exit.isSuccess(await send(`payout-${extra + 3}`))).toBe(true)
      const paid = await Effect.runPromise(Context.get(world, Sandbox.SandboxControl).payouts)
      expect(paid).toHaveLength(max)
      expect(paid[0]?.reference).toBe(`PO-payout-${extra}`)
      expect(paid.at(-1)?.reference).toBe(`PO-payout-${max + extra - 1}`)
    })
  }
})
