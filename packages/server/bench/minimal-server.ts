/**
 * The bench's floor: the work of a create-conversion request done by the
 * project's own pure functions called straight from node:http, with no HTTP
 * layer, engine use case, Effect runtime or Store port in between. It is not a
 * server to run: it serves one key and one route, keeps rows in plain Maps and
 * has no idempotency, rate limiting, outbox or error catalogue beyond a bare
 * 400/401. What it does for each request is what the reference server must do
 * at the least:
 *
 * - authenticate: SHA-256 of the bearer key, looked up in a Map (`BENCH_KEY` is
 *   the one live key it knows);
 * - read the body, as UTF-8, and parse it exactly (`Json.parseJson`);
 * - decode it with the request schema (`decodeRequest`, Effect Schema);
 * - quote it (`Conversion.create`) at the sandbox rate, with a time-ordered UUID, a
 *   reference and a deposit address drawn from the engine's entropy pool;
 * - store the row, its two unique keys and its due time in Maps;
 * - present it (`Present.conversion`), answer with the reference server's
 *   headers and log one JSON line (the server's own logger).
 *
 * The server bench runs it beside the bare server and the reference server:
 * bare → minimal is what the work itself costs on the machine; minimal →
 * reference is what the layers cost.
 *
 * `KEEP_ROWS=0` drops the rows instead of keeping them (nothing else changes):
 * the bench runs that too, to show what keeping a growing set of rows in the
 * heap costs under load, a cost every in-memory store pays.
 */
import { hash as digestOf } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Conversion, Decimal, decodeRequest, Json, Reference, Requests } from "@xaalis/core"
import { EngineConfig, IdsAdapter, Present } from "@xaalis/engine"
import { Result } from "effect"
import { jsonLines } from "../src/log.ts"

const key = process.env.BENCH_KEY ?? ""
const rate = Decimal.parse("70") as Decimal.Decimal
const config = EngineConfig.defaultEngineConfig.conversion
const pool = new IdsAdapter.EntropyPool(4096)
const objectId = IdsAdapter.makeTimeOrderedUuid(pool)
const log = jsonLines()
const keys = new Map([[digestOf("sha256", key, "hex"), { business_id: "bench", mode: "live" as const }]])
const docs = new Map<string, unknown>()
const uniqueKeys = new Map<string, string>()
const due = new Map<string, number>()
const keepRows = process.env.KEEP_ROWS !== "0"
const utf8 = new TextDecoder("utf-8", { fatal: true })
const hex = "0123456789abcdef"

/** A sandbox-like TRC20 USDT address: "Tt" and 32 hex digits. */
const address = (): string => {
  const bytes = pool.bytes
  const at = pool.take(16)
  let s = "Tt"
  for (let i = 0; i < 16; i++) {
    const byte = bytes[at + i] as number
    s += hex.charAt(byte >> 4) + hex.charAt(byte & 15)
  }
  return s
}

const answer = (status: number, body: string, request_id: string) => ({
  status,
  body,
  headers: {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "request-id": request_id,
    "content-length": Buffer.byteLength(body)
  }
})

const error = (status: number, code: string, message: string, request_id: string) =>
  answer(status, JSON.stringify({ error: { message, code } }), request_id)

const create = (authorization: string | undefined, bytes: Buffer, request_id: string) => {
  const caller =
    authorization?.startsWith("Bearer ") === true
      ? keys.get(digestOf("sha256", authorization.slice(7), "hex"))
      : undefined
  if (caller === undefined) return error(401, "authentication_error", "Invalid API key.", request_id)
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return error(400, "validation_error", "The request body must be UTF-8 encoded JSON.", request_id)
  }
  const parsed = Json.parseJson(text)
  if (Result.isFailure(parsed)) return error(400, "validation_error", parsed.failure.message, request_id)
  const input = decodeRequest(Requests.CreateConversionBody, parsed.success)
  if (Result.isFailure(input)) return error(400, "validation_error", input.failure.message, request_id)
  const now = Date.now()
  const id = objectId()
  const step = Conversion.create(input.success, {
    id,
    reference: Reference.conversionReference(now, pool.uint32()),
    pay_address: address(),
    now,
    rate,
    config
  })
  if (step._tag === "Failure") return error(400, step.failure.code, step.failure.message, request_id)
  const state = step.success.state
  if (keepRows) {
    docs.set(id, Object.freeze({ business_id: caller.business_id, mode: caller.mode, version: 1, data: state }))
    uniqueKeys.set(`ref:${state.reference}`, id)
    uniqueKeys.set(`addr:${state.network}:${state.pay_currency}:${state.pay_address}`, id)
    due.set(id, state.invoice_expires_at)
  }
  return answer(201, JSON.stringify(Present.conversion(state, { timeline: false })), request_id)
}

const server = createServer((req, res) => {
  const started = performance.now()
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const request_id = IdsAdapter.uuidFrom(pool)
    const a =
      req.method === "POST" && req.url === "/v1/minting/offramp"
        ? create(req.headers.authorization, Buffer.concat(chunks), request_id)
        : error(404, "not_found", `No route ${req.method} ${req.url}.`, request_id)
    res.writeHead(a.status, a.headers)
    res.end(a.body)
    log({
      level: "info",
      msg: "request",
      method: req.method,
      path: req.url,
      status: a.status,
      duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
      request_id
    })
  })
})
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  process.stderr.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
