/**
 * Every read of the store is an index search (no full scan, no sort in a
 * temporary B-tree), so units of work stay short as tables grow; only the
 * audit read `ledger` scans, by design.
 */

import { DatabaseSync } from "node:sqlite"
import { describe, expect, it } from "vitest"
import { Migrations, SqliteStore } from "../src/index.ts"

const db = new DatabaseSync(":memory:")
Migrations.migrate(db, 0)
const plan = (text: string): ReadonlyArray<string> =>
  db
    .prepare(`EXPLAIN QUERY PLAN ${text}`)
    .all()
    .map((r) => String(r.detail))

/** Statements that read no table. */
const transactionControl = new Set(["begin", "commit", "savepoint", "release", "rollbackTo"])

describe("query plans", () => {
  for (const [name, text] of Object.entries(SqliteStore.sql)) {
    if (transactionControl.has(name) || name === "ledger") continue
    it(`${name}: index searches only`, () => {
      const steps = plan(text)
      expect(
        steps.filter((s) => !s.startsWith("SEARCH")),
        steps.join(" | ")
      ).toStrictEqual([])
      expect(steps.some((s) => s.includes("TEMP B-TREE"))).toBe(false)
    })
  }

  it("list, count, due and balances use their own indexes", () => {
    expect(plan(SqliteStore.sql.list)).toStrictEqual([
      "SEARCH docs USING INDEX docs_list (kind=? AND business_id=? AND mode=?)"
    ])
    expect(plan(SqliteStore.sql.count)[0]).toContain("COVERING INDEX docs_list")
    expect(plan(SqliteStore.sql.due)[0]).toContain("USING INDEX docs_due")
    expect(plan(SqliteStore.sql.balances)[0]).toContain("COVERING INDEX ledger_balances")
  })
})
