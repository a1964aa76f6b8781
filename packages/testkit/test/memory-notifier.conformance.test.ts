import { MemoryNotifier } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { NotifierHarness, notifierConformance, runsFromEnv } from "../src/index.ts"

/**
 * The in-memory notifier: its receivers are URLs of its control, which records
 * every attempt and fails a URL's attempts on demand. It cannot hang, and no URL
 * is unreachable: those two checks are left out (`omit`).
 */
const memory = () =>
  Layer.effect(
    NotifierHarness,
    Effect.map(MemoryNotifier.MemoryNotifierControl, (control) => {
      let n = 0
      return NotifierHarness.of({
        business: Effect.succeed("biz_conformance"),
        canHang: false,
        receiver: Effect.sync(() => {
          const url = `https://receiver-${++n}.example/hooks`
          return {
            url,
            answer: (answer) =>
              answer._tag === "Accept"
                ? control.succeedFor(url)
                : answer._tag === "Reject"
                  ? control.failFor(url, "always")
                  : Effect.die(new Error("the memory notifier's receivers cannot hang")),
            arrivals: Effect.map(control.attempts, (all) =>
              all.filter((a) => a.url === url).map((a) => ({ event_id: a.event_id, body: a.body }))
            )
          }
        })
      })
    })
  ).pipe(Layer.provideMerge(MemoryNotifier.layer))

notifierConformance("memory", memory, {
  runs: runsFromEnv(50),
  omit: ["a receiver that never answers", "an unreachable receiver"]
})
