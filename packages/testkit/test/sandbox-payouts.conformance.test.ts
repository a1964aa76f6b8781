import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryStore, Sandbox } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { PayoutsRail, payoutsConformance, runsFromEnv } from "../src/index.ts"

/** The sandbox's payout rail, with its control as the rail's statement and its failure switch. */
const sandbox = () =>
  Layer.effect(
    PayoutsRail,
    Effect.map(Sandbox.SandboxControl, (control) =>
      PayoutsRail.of({ paid: control.payouts, failNext: (count) => control.failNextPayouts(count) })
    )
  ).pipe(
    Layer.provideMerge(
      Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(IdsAdapter.layer))
    )
  )

// the sandbox's rail answers in process and cannot be made to hang
const cannotHang = "a send the rail never answers"

payoutsConformance("sandbox", sandbox, { runs: runsFromEnv(50), omit: [cannotHang] })

// without the statement: the checks that only need `send`
payoutsConformance(
  "sandbox (send only)",
  () => Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provide(IdsAdapter.layer)),
  // without failNext the sandbox cannot be made to refuse: that check needs the statement above
  { runs: runsFromEnv(20), omit: ["a send that fails with PayoutFailed paid nothing", cannotHang] }
)

// the world of several processes on one store: a business's failures asked for are rows of the store
// (the conformance's failNext asks for failures of any business, kept in the process; the stored
// per-business count is held to its contract in the engine's sandbox-shared test)
payoutsConformance(
  "sandbox shared through a store",
  () =>
    Sandbox.layerShared({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(
      Layer.provide(IdsAdapter.layer),
      Layer.provide(MemoryStore.layer)
    ),
  { runs: runsFromEnv(20), omit: ["a send that fails with PayoutFailed paid nothing", cannotHang] }
)
