import { describe, expect, it } from "@effect/vitest"
import { Decimal } from "@xaalis/core"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import { layerDeterministic } from "../src/adapters/Ids.ts"
import * as Sandbox from "../src/adapters/sandbox/Sandbox.ts"
import { Chain } from "../src/ports/Chain.ts"
import { Ids } from "../src/ports/Ids.ts"
import { flat } from "../src/usecases/common.ts"

/**
 * Texts stored with a row (unique keys, deposit addresses, references) are
 * built as flat strings rather than trees of concatenated pieces: the text
 * must be exactly the one a concatenation gives.
 */
describe("flat", () => {
  it("returns the same text for any string (ASCII flattened, anything else as given)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: "binary", maxLength: 300 })), (s) => {
        const pieces = `${s.slice(0, 3)}${s.slice(3)}`
        expect(flat(pieces)).toBe(s)
      }),
      { numRuns: 500 }
    )
    expect(flat(`addr:${"TRC20"}:${"USDT"}:Tt${"ab".repeat(16)}`)).toBe(`addr:TRC20:USDT:Tt${"ab".repeat(16)}`)
    expect(flat("é".repeat(3))).toBe("ééé")
    // one non-ASCII character among ASCII, at every length around the limit: never read back as Latin-1 bytes
    for (let n = 100; n <= 400; n++) {
      const text = `é${"a".repeat(n - 1)}`
      expect(flat(text)).toBe(text)
      const astral = `${"a".repeat(n - 2)}😀`
      expect(flat(astral)).toBe(astral)
    }
    expect(flat("")).toBe("")
  })
})

describe("Sandbox chain addresses", () => {
  const world = Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal })

  it.effect("are the hex of the ids' 20 bytes: Tt/Tc + the first 16 on TRC20, 0x + all 20 on ARC", () =>
    Effect.gen(function* () {
      const chain = yield* Chain
      const issued = [
        yield* chain.issueAddress({ network: "TRC20", coin: "USDT", owner: "a" }),
        yield* chain.issueAddress({ network: "TRC20", coin: "USDC", owner: "b" }),
        yield* chain.issueAddress({ network: "ARC", coin: "USDT", owner: "c" })
      ]
      // the same seed again gives the same bytes: the expected texts, by concatenation
      const bytes = yield* Effect.gen(function* () {
        const ids = yield* Ids
        return [yield* ids.bytes(20), yield* ids.bytes(20), yield* ids.bytes(20)]
      }).pipe(Effect.provide(layerDeterministic(3)))
      const hex = bytes.map((b) => Buffer.from(b).toString("hex"))
      expect(issued).toStrictEqual([`Tt${hex[0]?.slice(0, 32)}`, `Tc${hex[1]?.slice(0, 32)}`, `0x${hex[2]}`])
      expect(issued[0]).toMatch(/^Tt[0-9a-f]{32}$/)
      expect(issued[1]).toMatch(/^Tc[0-9a-f]{32}$/)
      expect(issued[2]).toMatch(/^0x[0-9a-f]{40}$/)
    }).pipe(Effect.provide(world.pipe(Layer.provide(layerDeterministic(3)))))
  )
})
