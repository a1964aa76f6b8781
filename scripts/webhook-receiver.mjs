// A local webhook receiver for the README's curl session: prints each delivery
// and whether its x-service-signature verifies with WEBHOOK_SECRET.
// Usage: WEBHOOK_SECRET=whsec_... node scripts/webhook-receiver.mjs [port]
import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"

const port = Number(process.argv[2] ?? 4000)
const secret = process.env.WEBHOOK_SECRET ?? ""
createServer((req, res) => {
  const chunks = []
  req.on("data", (c) => chunks.push(c))
  req.on("end", () => {
    const body = Buffer.concat(chunks)
    const expected = Buffer.from(createHmac("sha512", secret).update(body).digest("hex"))
    const given = Buffer.from(String(req.headers["x-service-signature"] ?? ""))
    const ok = given.length === expected.length && timingSafeEqual(given, expected)
    const { event, payload } = JSON.parse(body.toString("utf8"))
    console.log(
      `webhook ${event} ${payload.id ?? ""} id=${req.headers["webhook-id"]} signature ${ok ? "valid" : "INVALID"}`
    )
    res.end()
  })
}).listen(port, "127.0.0.1", () => console.log(`webhook receiver on http://127.0.0.1:${port}`))
