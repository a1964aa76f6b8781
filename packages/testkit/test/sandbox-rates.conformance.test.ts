import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryStore, Sandbox } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { RatesFeed, ratesChecks, ratesConformance } from "../src/index.ts"
import { checkAbout } from "./port-detects.ts"

const rate = Decimal.parse("70.25") as Decimal.Decimal

/** The sandbox world, its initial rate observed when the layer is built, with its control as the RatesFeed. */
const sandbox = (rate_as_of?: number) =>
  Sandbox.layer({ rate, ...(rate_as_of === undefined ? {} : { rate_as_of }) }).pipe(
    Layer.provideMerge(IdsAdapter.layer)
  )
const feed = Layer.effect(
  RatesFeed,
  Effect.map(Sandbox.SandboxControl, (control) => RatesFeed.of({ publish: control.setRate }))
)

// each check builds the layer when it starts: the initial rate is observed then
// the simulated feed cannot go down or hang: the outage and hang checks are left out
const omit = ["while its source is down", "while its source never answers"]
ratesConformance("sandbox", () => feed.pipe(Layer.provideMerge(sandbox(Date.now()))), { omit })

describe("Rates conformance: sandbox defaults", () => {
  // without `rate_as_of`, and after every `POST /v1/test_helpers/rates`, the sandbox keeps observing
  // its rate: each read is as of the clock's now (it used to answer Number.MAX_SAFE_INTEGER, a time in
  // the future, which made any rate look fresh and broke the port's contract)
  ratesConformance("sandbox, rate observed at each read", () => feed.pipe(Layer.provideMerge(sandbox())), { omit })

  it("the sandbox's default as_of is the clock's now, not a time in the future", async () => {
    expect(await checkAbout(ratesChecks(), "as_of is the epoch milliseconds").run(() => sandbox())).toBe("passed")
  })
})

// the world of several processes on one store (its rate a row of the store) keeps the same contract
const shared = () =>
  Sandbox.layerShared({ rate }).pipe(Layer.provideMerge(IdsAdapter.layer), Layer.provideMerge(MemoryStore.layer))
ratesConformance("sandbox shared through a store", () => feed.pipe(Layer.provideMerge(shared())), { omit })
