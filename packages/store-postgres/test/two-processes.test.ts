import { Settlement } from "@xaalis/core"
import { Businesses, Conversions, Ledger, Store, Timeline, unbalanced } from "@xaalis/engine"
import { Effect, ManagedRuntime } from "effect"
import { expect, it } from "vitest"
import { pgEngine } from "./engine.ts"
import type { CreateItem, Outcome, TransferItem, WorkItem } from "./fixtures/engine-worker.ts"
import { withPostgres } from "./pg.ts"
import { forkWorker } from "./workers.ts"

const CONVERSIONS = 4
const TRANSFERS_PER_CONVERSION = 30
const KEYS = 10
const GMD = 500_000n

withPostgres("two engine processes on one database", (db) => {
  it("overlapping transfer reports and idempotent creates from two processes at once keep every invariant", async () => {
    const runtime = ManagedRuntime.make(pgEngine(db))
    try {
      const { live, conversions } = await runtime.runPromise(
        Effect.gen(function* () {
          const created = yield* Businesses.createBusiness({ name: "Two Doors", webhook_url: "https://m.example/h" })
          const live = yield* Businesses.authenticate(created.secret_key_live)
          const conversions = yield* Effect.forEach(Array.from({ length: CONVERSIONS }), () =>
            Conversions.createConversion(live, { gmd_amount: GMD })
          )
          return { live, conversions }
        })
      )
      // conversion 0 is overpaid (its credit is capped at gmd_amount), the others stay underpaid
      const transfers: Array<TransferItem & { readonly conversion: string }> = []
      for (let j = 0; j < TRANSFERS_PER_CONVERSION; j++) {
        conversions.forEach((c, k) => {
          transfers.push({
            kind: "transfer",
            conversion: c.id,
            network: "TRC20",
            coin: "USDT",
            to_address: c.pay_address,
            amount: k === 0 ? 3_000_000n + BigInt(j) * 1_000n : 100_000n + BigInt(j) * 12_345n,
            tx_hash: `0xtwo${k}x${j}`,
            log_index: 0
          })
        })
      }
      const n = transfers.length
      const third = Math.floor(n / 3)
      const creates: Array<CreateItem> = Array.from({ length: KEYS }, (_, i) => ({ kind: "create", key: `key-${i}` }))
      const withCreates = (items: ReadonlyArray<WorkItem>) => {
        const out = [...items]
        creates.forEach((c, i) => {
          out.splice(Math.min(out.length, i * 7), 0, c)
        })
        return out
      }
      const strip = ({ conversion: _, ...t }: (typeof transfers)[number]): TransferItem => t
      // both start with the middle third at the same time: the same transfers reported twice at once;
      // then each goes on with transfers only it reports
      const itemsA = withCreates([...transfers.slice(third, 2 * third), ...transfers.slice(0, third)].map(strip))
      const itemsB = withCreates(transfers.slice(third).map(strip))
      const common = {
        url: db.url,
        schema: db.schema,
        caller: { business_id: live.business_id, account_id: live.account_id, mode: "live" as const },
        concurrency: 8,
        poolMax: 6,
        ack: false
      }
      const a = forkWorker({ ...common, items: itemsA })
      const b = forkWorker({ ...common, items: itemsB })
      await Promise.all([a.ready, b.ready])
      a.go()
      b.go()
      const outcomes: ReadonlyArray<Outcome> = (await Promise.all([a.done, b.done])).flat()

      // every transfer applied exactly once, over both processes
      const appliedTimes = new Map<string, number>()
      for (const o of outcomes) {
        if (o.kind === "transfer") appliedTimes.set(o.tx_hash, (appliedTimes.get(o.tx_hash) ?? 0) + (o.applied ? 1 : 0))
      }
      expect(appliedTimes.size).toBe(n)
      expect(
        [...appliedTimes.values()].filter((v) => v !== 1),
        "transfers not applied exactly once"
      ).toStrictEqual([])
      const reportedTwice = outcomes.filter((o) => o.kind === "transfer").length - n
      expect(reportedTwice).toBe(third)

      // one effect per idempotency key, both answers that conversion: a use that met the other process's
      // use in flight waited for its answer (none was refused as "in progress")
      for (const { key } of creates) {
        const answers = outcomes.filter((o) => o.kind === "create" && o.key === key)
        expect(answers).toHaveLength(2)
        const ids = answers.map((o) => ("id" in o ? o.id : "code" in o ? `code ${o.code}` : "?"))
        expect(new Set(ids).size, `key ${key}: one conversion, both answers it (${ids.join(", ")})`).toBe(1)
        expect(ids[0]?.startsWith("code"), `key ${key}`).toBe(false)
      }

      await runtime.runPromise(
        Effect.gen(function* () {
          const listed = yield* Conversions.listConversions(live, { limit: 100, offset: 0 })
          expect(listed.meta.total, "the conversions set up, plus one per idempotency key").toBe(CONVERSIONS + KEYS)
          const store = yield* Store
          const entries = yield* store.ledger
          expect(unbalanced(entries), "ledger balanced").toStrictEqual([])
          for (const c of conversions) {
            const doc = yield* store.transact((tx) => Timeline.getWhole(tx, c.id))
            if (doc === undefined) return expect.fail(`conversion ${c.id} vanished`)
            const mine = transfers.filter((t) => t.conversion === c.id)
            const total = mine.reduce((s, t) => s + t.amount, 0n)
            const appliedSum = outcomes
              .filter((o) => o.kind === "transfer" && o.applied && mine.some((t) => t.tx_hash === o.tx_hash))
              .reduce(
                (s, o) => s + (mine.find((t) => o.kind === "transfer" && t.tx_hash === o.tx_hash)?.amount ?? 0n),
                0n
              )
            expect(doc.data.actually_paid, "no lost update: actually_paid").toBe(total)
            expect(appliedSum, "sum of the amounts answered applied = actually_paid").toBe(doc.data.actually_paid)
            expect(new Set(doc.data.applied_transfers).size).toBe(TRANSFERS_PER_CONVERSION)
            expect(doc.data.applied_transfers).toHaveLength(TRANSFERS_PER_CONVERSION)
            expect(doc.data.status).toBe(Settlement.statusFor(doc.data.pay_amount, total))
            const credited = -entries
              .filter(
                (e) =>
                  e.cause === `conversion/${c.id}` &&
                  e.account === Ledger.accounts.business_balance &&
                  e.currency === "GMD"
              )
              .reduce((s, e) => s + e.amount, 0n)
            expect(credited, "credited = credited(actually_paid)").toBe(
              Settlement.credited(GMD, doc.data.pay_amount, doc.data.actually_paid)
            )
            expect(credited <= GMD, "credited <= gmd_amount").toBe(true)
          }
          const capped = yield* store.transact((tx) => Timeline.getWhole(tx, conversions[0]?.id ?? ""))
          expect(capped?.data.status).toBe("overpaid")
          for (const { key } of creates) {
            const row = yield* store.transact((tx) => tx.get("idempotency", `${live.business_id}:live:${key}`))
            expect((row?.data as { status?: string } | undefined)?.status, `key ${key} recorded`).toBe("completed")
          }
        })
      )
    } finally {
      await runtime.dispose()
    }
  }, 120_000)
})
