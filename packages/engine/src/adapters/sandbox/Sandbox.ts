import { Decimal, Quote } from "@xaalis/core"
import { Clock, Context, Effect, Layer, Queue, Stream } from "effect"
import { Chain, type ConfirmedTransfer } from "../../ports/Chain.ts"
import { Ids } from "../../ports/Ids.ts"
import { PayoutFailed, Payouts } from "../../ports/Payouts.ts"
import { Processor } from "../../ports/Processor.ts"
import { Rates } from "../../ports/Rates.ts"
import { type Doc, Store, type StoreError, type Tx } from "../../ports/Store.ts"
import { callersStore, putCounter, unitOfWorkIn } from "../../usecases/common.ts"

/**
 * The sandbox's simulated world: a rate you set, chains whose transfers you push,
 * a processor whose links are local pages, and a payout rail you can make fail.
 * One `SandboxControl` drives the four simulated ports.
 *
 * `layer` keeps the rate and the payout failures asked for in the process.
 * `layerShared` keeps them in the Store, for several processes serving one
 * sandbox on one database: a rate set through any of them is quoted by all
 * (each re-reads it in `refresh`), and a business's `failNextPayouts` count is
 * taken down by whichever process sends its next payouts.
 */
export class SandboxControl extends Context.Service<
  SandboxControl,
  {
    /**
     * Sets the USD->GMD rate quoted from now on, observed at `as_of` (epoch ms);
     * without it the simulated feed keeps observing the rate: each read is as of
     * the clock's now, so it never goes stale.
     */
    readonly setRate: (rate: Decimal.Decimal, as_of?: number) => Effect.Effect<void, StoreError>
    /**
     * The next `count` payouts fail (0 clears): of `business_id` when given (the
     * HTTP helper passes the caller's, so one business cannot fail another's
     * payouts), else of any business (kept in the process, shared or not).
     */
    readonly failNextPayouts: (count: number, business_id?: string) => Effect.Effect<void, StoreError>
    /**
     * Re-reads the rate other processes set (`layerShared`); does nothing in a
     * world of one process (`layer`).
     */
    readonly refresh: Effect.Effect<void, StoreError>
    /**
     * Payouts paid so far, oldest first: the last `sent_payouts_max` of them
     * (a long-running server pays without end; only tests read this list).
     */
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

/** Id of the Store row (kind `counter`, no owner) of a shared world's rate. */
export const rate_row_id = "sandbox_rate"
/** Id of the Store row of a business's count of payouts to fail, in a shared world. */
export const failNextRowId = (business_id: string): string => `sandbox_fail_next:${business_id}`

interface RateRow {
  /** The rate as a decimal text. */
  readonly rate: string
  /** When it was observed (epoch ms); null: always fresh. */
  readonly as_of: number | null
}

interface FailNextRow {
  readonly count: number
}

/**
 * Id of the Store row keeping the simulated rail's outcome of a payout key, in
 * a shared world: a key sent again (its sender stopped before booking the
 * outcome, or two sends overlapped) gets the first outcome, as a rail with
 * idempotency keys answers.
 */
export const payoutOutcomeRowId = (idempotency_key: string): string => `sandbox_payout:${idempotency_key}`

type PayoutOutcome = "paid" | "failed"

type SandboxServices = Rates | Chain | Processor | Payouts | SandboxControl

/** All four simulated ports plus their control, from one state kept in the process. */
export const layer = (options: SandboxOptions): Layer.Layer<SandboxServices, never, Ids> =>
  Layer.effectContext(Effect.flatMap(Ids, (ids) => world(options, ids, undefined)))

/**
 * The same world with its rate and its per-business payout failures kept in
 * the Store, for a sandbox served by several processes on one database (see
 * `SandboxControl`). The rate stored by an earlier `setRate` wins over
 * `options.rate` when the layer is built.
 */
export const layerShared = (options: SandboxOptions): Layer.Layer<SandboxServices, StoreError, Ids | Store> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const store = yield* Store
      const stored = yield* readRate(store)
      const initial: SandboxOptions = stored === undefined ? options : { ...options, ...stored }
      return yield* world(initial, yield* Ids, store)
    })
  )

const readRate = (store: Store["Service"]) =>
  unitOfWorkIn(store, (tx) =>
    Effect.map(tx.get("counter", rate_row_id), (doc) => {
      const row = doc?.data as RateRow | undefined
      const rate = row === undefined ? undefined : Decimal.parse(row.rate)
      if (rate === undefined) return undefined
      return row?.as_of == null ? { rate } : { rate, rate_as_of: row.as_of }
    })
  )

/**
 * Writes the system row `id` of a shared world (inserted or revised) in a unit
 * of work of its own, through the Store of the caller's context when it has
 * one (an HTTP request under an Idempotency-Key: its key's row then commits
 * with the setting, so a retry after a crash is answered instead of setting it
 * again), else through the world's.
 */
const writeRow = <D>(store: Store["Service"], id: string, data: D) =>
  Effect.flatMap(callersStore(store), (current) =>
    unitOfWorkIn(current, (tx) =>
      Effect.flatMap(tx.get("counter", id), (row) => putCounter(tx, { id, scope: null, now: 0, current: row, data }))
    )
  )

/** Takes one from a business's stored count of payouts to fail, in `tx`: true when there was one. */
const takeStoredFailure = (tx: Tx, business_id: string) =>
  Effect.gen(function* () {
    const id = failNextRowId(business_id)
    const doc = (yield* tx.get("counter", id)) as Doc<FailNextRow> | undefined
    if (doc === undefined || doc.data.count <= 0) return false
    yield* putCounter(tx, { id, scope: null, now: 0, current: doc, data: { count: doc.data.count - 1 } })
    return true
  })

/**
 * The outcome of a payout key on a shared world's rail, decided in one unit of
 * work where two sends of one key meet: the key's first outcome when it has
 * one, else failed when a failure was asked for (taken now), else paid; kept
 * for the next send of the key.
 */
const decideShared = (store: Store["Service"], key: string, business_id: string | undefined, failGlobal: boolean) =>
  unitOfWorkIn(store, (tx) =>
    Effect.gen(function* () {
      const id = payoutOutcomeRowId(key)
      const known = (yield* tx.get("counter", id)) as Doc<{ readonly outcome: PayoutOutcome }> | undefined
      if (known !== undefined) return { outcome: known.data.outcome, global: false }
      const own = business_id !== undefined && (yield* takeStoredFailure(tx, business_id))
      const outcome: PayoutOutcome = own || failGlobal ? "failed" : "paid"
      yield* putCounter(tx, { id, scope: null, now: 0, current: undefined, data: { outcome } })
      return { outcome, global: !own && failGlobal }
    })
  )

/**
 * How many paid payouts `SandboxControl.payouts` keeps: every payout the rail
 * paid was kept for the life of the process, and each new one scanned them all
 * (an audit counted 8,572 kept after 8,572 payouts of a reference server).
 */
export const sent_payouts_max = 1_000

const world = (options: SandboxOptions, ids: Ids["Service"], store: Store["Service"] | undefined) =>
  Effect.gen(function* () {
    const base = options.base_url ?? "http://127.0.0.1:3000"
    let rate: { readonly rate: Decimal.Decimal; readonly as_of: number | undefined } = {
      rate: options.rate,
      as_of: options.rate_as_of
    }
    let failNext = 0
    const failNextOf = new Map<string, number>()
    /** The payouts paid, by reference (one per key), the oldest dropped past `sent_payouts_max`. */
    const sent = new Map<string, { reference: string; amount: bigint; account_number: string }>()
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
    /** In the process: each key's first outcome. */
    const outcomes = new Map<string, PayoutOutcome>()
    const answer = (
      outcome: PayoutOutcome,
      reference: string,
      input: { readonly network: string; readonly amount: bigint; readonly account_number: string }
    ): Effect.Effect<{ readonly reference: string }, PayoutFailed> => {
      if (outcome === "failed") {
        return Effect.fail(
          new PayoutFailed({ message: `sandbox: ${input.network} payout to ${input.account_number} failed` })
        )
      }
      // one payment per key, however often it is sent
      if (!sent.has(reference)) {
        sent.set(reference, { reference, amount: input.amount, account_number: input.account_number })
        if (sent.size > sent_payouts_max) sent.delete(sent.keys().next().value as string)
      }
      return Effect.succeed({ reference })
    }
    // a rail with idempotency keys: a key sent again gets its first outcome (the port: "never
    // PayoutFailed for a key it paid"), so a failure asked for is taken only by a key's first send
    const sendNow = (input: Parameters<Payouts["Service"]["send"]>[0]) => {
      const key = input.idempotency_key
      const reference = `PO-${key}`
      if (store === undefined) {
        // in the process: decided synchronously, so two sends of one key cannot interleave
        let outcome = outcomes.get(key)
        if (outcome === undefined) {
          const own = input.business_id === undefined ? 0 : (failNextOf.get(input.business_id) ?? 0)
          if (own > 0) {
            failNextOf.set(input.business_id as string, own - 1)
            outcome = "failed"
          } else if (failNext > 0) {
            failNext -= 1
            outcome = "failed"
          } else outcome = "paid"
          outcomes.set(key, outcome)
        }
        return answer(outcome, reference, input)
      }
      // shared: decided in one unit of work. A failure asked for without a business (kept in the
      // process) is reserved first, so two sends at once cannot both take one; given back unless used
      const reserved = failNext > 0
      if (reserved) failNext -= 1
      const giveBack = Effect.sync(() => {
        if (reserved) failNext += 1
      })
      return decideShared(store, key, input.business_id, reserved).pipe(
        // a commit whose end was not seen (a dropped connection) is settled by deciding again: the
        // key's kept outcome answers then; a store that stays down is a send that did not happen
        Effect.retry({ times: 2 }),
        Effect.matchEffect({
          onFailure: () => Effect.andThen(giveBack, answer("failed", reference, input)),
          onSuccess: ({ outcome, global }) =>
            Effect.andThen(global ? Effect.void : giveBack, answer(outcome, reference, input))
        })
      )
    }
    const payouts = Payouts.of({
      // decided when the send runs, not when it is built
      send: (input) => Effect.suspend(() => sendNow(input))
    })
    const control = SandboxControl.of({
      setRate: (r, as_of) => {
        const set = Effect.sync(() => {
          rate = { rate: r, as_of }
        })
        if (store === undefined) return set
        const row: RateRow = { rate: Decimal.format(r), as_of: as_of ?? null }
        return Effect.andThen(writeRow(store, rate_row_id, row), set)
      },
      failNextPayouts: (count, business_id) => {
        if (business_id !== undefined && store !== undefined) {
          const id = failNextRowId(business_id)
          return writeRow(store, id, { count } satisfies FailNextRow)
        }
        return Effect.sync(() => {
          if (business_id === undefined) failNext = count
          else if (count === 0) failNextOf.delete(business_id)
          else failNextOf.set(business_id, count)
        })
      },
      refresh:
        store === undefined
          ? Effect.void
          : Effect.map(readRate(store), (stored) => {
              if (stored !== undefined) rate = { rate: stored.rate, as_of: stored.rate_as_of }
            }),
      payouts: Effect.sync(() => [...sent.values()]),
      pushTransfer: (t) => Queue.offer(feed, t).pipe(Effect.asVoid)
    })
    return Context.make(Rates, rates)
      .pipe(Context.add(Chain, chain))
      .pipe(Context.add(Processor, processor))
      .pipe(Context.add(Payouts, payouts))
      .pipe(Context.add(SandboxControl, control))
  })

export const networks = Quote.networks
