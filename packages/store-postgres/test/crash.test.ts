import { Settlement } from "@xaalis/core"
import {
  Businesses,
  Codec,
  Conversions,
  Dispatcher,
  Ledger,
  MemoryNotifier,
  Store,
  Timeline,
  unbalanced
} from "@xaalis/engine"
import { Effect, ManagedRuntime } from "effect"
import { expect, it } from "vitest"
import { pgEngine } from "./engine.ts"
import type { TransferItem } from "./fixtures/engine-worker.ts"
import { withPostgres } from "./pg.ts"
import { forkWorker } from "./workers.ts"

const CONVERSIONS = 10
const PER_CONVERSION = 200 // 2,000 transfers per run
const GMD = 500_000n
const SEEDS = [11, 23, 47]

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
const random = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const transferKey = (t: TransferItem) => `${t.network}:${t.tx_hash.toLowerCase()}:${t.log_index}`

withPostgres("crash safety on PostgreSQL", (db) => {
  for (const seed of SEEDS) {
    it(`SIGKILL at a random moment of ${CONVERSIONS * PER_CONVERSION} transfers (seed ${seed}): nothing acknowledged is lost, nothing applied twice, the outbox delivers everything`, async () => {
      const rand = random(seed)
      const runtime = ManagedRuntime.make(pgEngine(db))
      try {
        const { live, conversions } = await runtime.runPromise(
          Effect.gen(function* () {
            const created = yield* Businesses.createBusiness({ name: "Crash", webhook_url: "https://m.example/h" })
            const live = yield* Businesses.authenticate(created.secret_key_live)
            const conversions = yield* Effect.forEach(Array.from({ length: CONVERSIONS }), () =>
              Conversions.createConversion(live, { gmd_amount: GMD })
            )
            return { live, conversions }
          })
        )
        const transfers: Array<TransferItem & { readonly conversion: string }> = conversions.flatMap((c, k) =>
          Array.from({ length: PER_CONVERSION }, (_, j) => ({
            kind: "transfer" as const,
            conversion: c.id,
            network: "TRC20" as const,
            coin: "USDT" as const,
            to_address: c.pay_address,
            amount: 10_000n + BigInt((j * 7919 + k) % 997) * 17n,
            tx_hash: `0xCrash${seed}x${k}x${j}`,
            log_index: 0
          }))
        )
        // shuffled (Fisher–Yates, seeded)
        for (let i = transfers.length - 1; i > 0; i--) {
          const j = Math.floor(rand() * (i + 1))
          ;[transfers[i], transfers[j]] = [
            transfers[j] as (typeof transfers)[number],
            transfers[i] as (typeof transfers)[number]
          ]
        }
        const items = transfers.map(({ conversion: _, ...t }) => t)
        const common = {
          url: db.url,
          schema: db.schema,
          caller: { business_id: live.business_id, account_id: live.account_id, mode: "live" as const },
          concurrency: 4,
          poolMax: 4
        }

        // 1. a worker applies them, acknowledging each; killed once a random number of them were acknowledged
        const killAt = 100 + Math.floor(rand() * 1_200)
        const acked = new Set<string>()
        let killed = false
        // the victim's connections carry their own application_name, to see when the server has closed them
        const app = `xaalis_victim_${seed}`
        const victimUrl = new URL(db.url)
        victimUrl.searchParams.set("application_name", app)
        const victim = forkWorker({ ...common, url: victimUrl.toString(), items, ack: true }, (tx_hash) => {
          acked.add(tx_hash)
          if (!killed && acked.size >= killAt) {
            killed = true
            victim.child.kill("SIGKILL")
          }
        })
        await victim.ready
        victim.go()
        expect(await victim.exited).toBe("SIGKILL")
        expect(acked.size).toBeGreaterThanOrEqual(killAt)
        expect(acked.size, "killed mid-load").toBeLessThan(transfers.length)
        // the server rolls back (or, for a COMMIT already received, commits) the victim's open transactions
        // when it notices the dead connections; read the books after that, so one snapshot holds
        for (let i = 0; i < 500; i++) {
          const open = await db.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1",
            [app]
          )
          if (open[0]?.n === 0) break
          await new Promise((r) => setTimeout(r, 20))
        }

        // 2. what the database holds after the crash
        const committed = new Set(
          (await db.query<{ id: string }>("SELECT id FROM docs WHERE kind = 'transfer'")).map((r) => r.id)
        )
        const lost = transfers.filter((t) => acked.has(t.tx_hash) && !committed.has(transferKey(t)))
        expect(
          lost.map((t) => t.tx_hash),
          "acknowledged transfers lost by the crash"
        ).toStrictEqual([])
        await checkBooks(runtime, conversions, transfers, (t) => committed.has(transferKey(t)))

        // 3. after a restart the feed is replayed in full (at least once): each transfer ends applied once
        const restarted = forkWorker({ ...common, items, ack: false })
        await restarted.ready
        restarted.go()
        const outcomes = await restarted.done
        const appliedNow = outcomes.filter((o) => o.kind === "transfer" && o.applied).length
        expect(appliedNow, "the restart applies exactly the transfers the crash left out").toBe(
          transfers.length - committed.size
        )
        await checkBooks(runtime, conversions, transfers, () => true)

        // 4. the outbox: every event written before or after the crash is delivered, once
        await runtime.runPromise(
          Effect.gen(function* () {
            for (let round = 0; round < 100; round++) {
              const s = yield* Dispatcher.dispatchDue({ limit: 500 })
              if (s.delivered + s.retried + s.failed + s.skipped === 0) break
            }
            const rows = yield* Effect.promise(() =>
              db.query<{ id: string; data: string }>("SELECT id, data FROM docs WHERE kind = 'outbox'")
            )
            const statuses = rows.map((r) => (Codec.decode(r.data) as { status: string }).status)
            expect(rows.length, "one event per applied transfer").toBe(transfers.length)
            expect(
              statuses.filter((s) => s !== "delivered"),
              "undelivered outbox rows"
            ).toStrictEqual([])
            const control = yield* MemoryNotifier.MemoryNotifierControl
            const deliveries = yield* control.deliveries
            expect(new Set(deliveries.map((d) => `${d.event_id} ${d.url}`)).size).toBe(rows.length)
            expect(deliveries).toHaveLength(rows.length)
          })
        )
      } finally {
        await runtime.dispose()
      }
    }, 180_000)
  }
})

/**
 * The books agree with the transfers that `applied` says are in: the ledger
 * balances, and each conversion's `actually_paid`, `applied_transfers` and
 * credit are exactly those transfers' (nothing twice, nothing half-done).
 */
const checkBooks = (
  runtime: { readonly runPromise: <A, E>(effect: Effect.Effect<A, E, Store>) => Promise<A> },
  conversions: ReadonlyArray<{ readonly id: string }>,
  transfers: ReadonlyArray<TransferItem & { readonly conversion: string }>,
  applied: (t: TransferItem) => boolean
) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const store = yield* Store
      const entries = yield* store.ledger
      expect(unbalanced(entries), "ledger balanced").toStrictEqual([])
      for (const c of conversions) {
        const doc = yield* store.transact((tx) => Timeline.getWhole(tx, c.id))
        if (doc === undefined) return expect.fail(`conversion ${c.id} vanished`)
        const mine = transfers.filter((t) => t.conversion === c.id && applied(t))
        expect(doc.data.actually_paid).toBe(mine.reduce((s, t) => s + t.amount, 0n))
        expect([...doc.data.applied_transfers].sort()).toStrictEqual(mine.map(transferKey).sort())
        const credited = -entries
          .filter(
            (e) =>
              e.cause === `conversion/${c.id}` && e.account === Ledger.accounts.business_balance && e.currency === "GMD"
          )
          .reduce((s, e) => s + e.amount, 0n)
        expect(credited).toBe(Settlement.credited(GMD, doc.data.pay_amount, doc.data.actually_paid))
      }
    })
  )
