import { type Decimal, Quote } from "@xaalis/core"
import { Clock, Context, Effect, Layer, Queue, Stream } from "effect"
import { Chain, type ConfirmedTransfer } from "../../ports/Chain.ts"
import { Ids } from "../../ports/Ids.ts"
import { PayoutFailed, Payouts } from "../../ports/Payouts.ts"
import { Processor } from "../../ports/Processor.ts"
import { Rates } from "../../ports/Rates.ts"

/**
 * The sandbox's simulated world: a rate you set, chains whose transfers you push,
 * a processor whose links are local pages, and a payout rail you can make fail.
 * One `SandboxControl` drives the four simulated ports.
 */
export class SandboxControl extends Context.Service<
  SandboxControl,
  {
    /**
     * Sets the USD->GMD rate quoted from now on, observed at `as_of` (epoch ms);
     * without it the simulated feed keeps observing the rate: each read is as of
     * the clock's now, so it never goes stale.
     */
    readonly setRate: (rate: Decimal.Decimal, as_of?: number) => Effect.Effect<void>
    /**
     * The next `count` payouts fail (0 clears): of `business_id` when given (the
     * HTTP helper passes the caller's, so one business cannot fail another's
     * payouts), else of any business.
     */
    readonly failNextPayouts: (count: number, business_id?: string) => Effect.Effect<void>
    /** Payouts sent so far (successful ones). */
    readonly payouts: Effect.Effect<
      ReadonlyArray<{ readonly reference: string; readonly amount: bigint; readonly account_number: string }>
    >
    /** Publishes a transfer on the simulated chain feed. */
    readonly pushTransfer: (transfer: ConfirmedTransfer) => Effect.Effect<void>
  }
>()("@xaalis/engine/adapters/sandbox/SandboxControl") {}

const hexDigits = Buffer.from("0123456789abcdef", "latin1")
const addressText = Buffer.alloc(64)

/**
 * `prefix` then the first `n` bytes of `bytes` in lowercase hex, as one flat
 * string: an address is stored with its conversion, and a concatenation
 * (with a slice of a longer hex string) would keep a tree of pieces there.
 */
const hexText = (prefix: string, bytes: Uint8Array, n: number): string => {
  let at = addressText.write(prefix, 0, "latin1")
  for (let i = 0; i < n; i++) {
    const byte = bytes[i] as number
    addressText[at++] = hexDigits[byte >> 4] as number
    addressText[at++] = hexDigits[byte & 0x0f] as number
  }
  return addressText.toString("latin1", 0, at)
}

export interface SandboxOptions {
  readonly rate: Decimal.Decimal
  /** When the initial rate was observed (epoch ms); without it, each read is as of the clock's now (always fresh). */
  readonly rate_as_of?: number
  readonly base_url?: string
}

/** All four simulated ports plus their control, from one shared state. */
export const layer = (
  options: SandboxOptions
): Layer.Layer<Rates | Chain | Processor | Payouts | SandboxControl, never, Ids> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const ids = yield* Ids
      const base = options.base_url ?? "http://127.0.0.1:3000"
      let rate: { readonly rate: Decimal.Decimal; readonly as_of: number | undefined } = {
        rate: options.rate,
        as_of: options.rate_as_of
      }
      let failNext = 0
      const failNextOf = new Map<string, number>()
      const sent: Array<{ reference: string; amount: bigint; account_number: string }> = []
      const feed = yield* Queue.unbounded<ConfirmedTransfer>()

      // the clock of the reader (the sandbox clock in the engine): a rate kept fresh is observed "now"
      const rates = Rates.of({
        current: Effect.suspend(() => {
          const { rate: r, as_of } = rate
          return as_of === undefined
            ? Effect.map(Clock.currentTimeMillis, (t) => ({ rate: r, as_of: t }))
            : Effect.succeed({ rate: r, as_of })
        })
      })
      const chain = Chain.of({
        issueAddress: ({ network, coin }) =>
          Effect.map(ids.bytes(20), (b) =>
            network === "TRC20" ? hexText(coin === "USDT" ? "Tt" : "Tc", b, 16) : hexText("0x", b, 20)
          ),
        confirmed: Stream.fromQueue(feed)
      })
      const processor = Processor.of({
        open: ({ payment_intent_id }) => Effect.succeed({ payment_link: `${base}/pay/${payment_intent_id}` })
      })
      const payouts = Payouts.of({
        send: (input) =>
          Effect.suspend(() => {
            const own = input.business_id === undefined ? 0 : (failNextOf.get(input.business_id) ?? 0)
            if (own > 0 || failNext > 0) {
              if (own > 0) failNextOf.set(input.business_id as string, own - 1)
              else failNext -= 1
              return Effect.fail(
                new PayoutFailed({ message: `sandbox: ${input.network} payout to ${input.account_number} failed` })
              )
            }
            const reference = `PO-${input.idempotency_key}`
            if (!sent.some((s) => s.reference === reference)) {
              sent.push({ reference, amount: input.amount, account_number: input.account_number })
            }
            return Effect.succeed({ reference })
          })
      })
      const control = SandboxControl.of({
        setRate: (r, as_of) =>
          Effect.sync(() => {
            rate = { rate: r, as_of }
          }),
        failNextPayouts: (count, business_id) =>
          Effect.sync(() => {
            if (business_id === undefined) failNext = count
            else if (count === 0) failNextOf.delete(business_id)
            else failNextOf.set(business_id, count)
          }),
        payouts: Effect.sync(() => [...sent]),
        pushTransfer: (t) => Queue.offer(feed, t).pipe(Effect.asVoid)
      })
      return Context.make(Rates, rates)
        .pipe(Context.add(Chain, chain))
        .pipe(Context.add(Processor, processor))
        .pipe(Context.add(Payouts, payouts))
        .pipe(Context.add(SandboxControl, control))
    })
  )

export const networks = Quote.networks
