// Every package loads with require() (the CommonJS builds; @xaalis/testkit is ESM only and loads through
// Node's require of ES modules), and the engine's facade works from CommonJS.
const names = ["core", "engine", "http", "webhooks", "store-sqlite", "store-postgres", "server", "testkit"]
for (const name of names) {
  const exported = Object.keys(require(`@xaalis/${name}`))
  if (exported.length === 0) throw new Error(`@xaalis/${name} exports nothing to require()`)
}
if (typeof require("@xaalis/http/fastify").xaalisFastify !== "function") throw new Error("no xaalisFastify")
const { Decimal } = require("@xaalis/core")
const { createEngine } = require("@xaalis/engine")
const engine = createEngine({ sandbox: { rate: Decimal.parse("70") } })
engine
  .createBusiness({ name: "cjs" })
  .then((b) => engine.authenticate(b.secret_key_live))
  .then((caller) => engine.createConversion(caller, { gmd_amount: 5000 }))
  .then(async (c) => {
    await engine.dispose()
    if (c.pay_amount !== 73.64) throw new Error(`quoted ${c.pay_amount}`)
    console.log("pack-check CJS: ok")
  })
  .catch((e) => {
    console.error(`pack-check CJS: ${e}`)
    process.exit(1)
  })
