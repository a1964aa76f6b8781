/**
 * The bench's reference point: node:http reading the request body, parsing it
 * as JSON and answering a JSON of BODY_SIZE bytes (400 when the body is not JSON).
 * It logs nothing.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const size = Number(process.env.BODY_SIZE ?? 600)
const filler = "x".repeat(Math.max(0, size - '{"id":"","pad":""}'.length - 36))
const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    let status = 201
    try {
      JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      status = 400
    }
    const body = JSON.stringify({ id: crypto.randomUUID(), pad: filler })
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
})
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
