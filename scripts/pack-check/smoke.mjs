// The packed packages as an ESM consumer runs them: a conversion over the HTTP API on the embedded store,
// a signed webhook verified, the engine's Promise facade.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Decimal } from "@xaalis/core"
import { createEngine } from "@xaalis/engine"
import { makeHttpApi } from "@xaalis/http"
import { SqliteStore } from "@xaalis/store-sqlite"
import { sign, verify } from "@xaalis/webhooks"

const fail = (what) => {
  console.error(`pack-check ESM: ${what}`)
  process.exit(1)
}
const dir = mkdtempSync(join(tmpdir(), "xaalis-pack-"))
try {
  const api = makeHttpApi({ sandbox: true, store: SqliteStore.layerFromDataDir(dir) })
  const post = (path, body, key) =>
    api.fetch(
      new Request(`http://pack.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(body)
      })
    )
  const business = await (await post("/v1/test_helpers/businesses", { name: "pack" })).json()
  const created = await post("/v1/minting/offramp", { gmd_amount: 5000 }, business.secret_key_live)
  const conversion = await created.json()
  if (created.status !== 201 || conversion.pay_amount !== 73.64)
    fail(`offramp answered ${created.status} ${JSON.stringify(conversion)}`)
  await api.dispose()

  const body = JSON.stringify({ event: "ramp.paid", payload: conversion })
  const headers = sign(body, business.webhook_secret, { id: "evt_1", timestamp: Math.floor(Date.now() / 1000) })
  const verified = verify(body, headers, business.webhook_secret)
  if (verified.event !== "ramp.paid" || verified.payload.id !== conversion.id)
    fail(`verify gave ${JSON.stringify(verified)}`)

  const engine = createEngine({ sandbox: { rate: Decimal.parse("70") } })
  const b = await engine.createBusiness({ name: "facade" })
  const caller = await engine.authenticate(b.secret_key_live)
  const c = await engine.createConversion(caller, { gmd_amount: 5000 })
  if (c.pay_amount !== 73.64) fail(`facade quoted ${c.pay_amount}`)
  await engine.dispose()
  console.log("pack-check ESM: ok")
} finally {
  rmSync(dir, { recursive: true, force: true })
}
