/**
 * The xaalis API as a fetch-runtime module: the handler is already
 * `(Request) => Promise<Response>`, so Bun, Deno and Cloudflare Workers serve
 * the default export as it is:
 *
 *   bun fetch.ts  |  deno serve fetch.ts  |  a Worker's entry module
 *
 * On Node, the runner at the bottom serves the same API with `toNodeListener`:
 *
 *   node --conditions=@xaalis/source fetch.ts      (PORT, default 3005)
 */
import { once } from "node:events"
import { createServer, type RequestListener } from "node:http"
import type { AddressInfo } from "node:net"
import { answerClientErrors, makeHttpApi, runDueEvery, toNodeListener } from "@xaalis/http"

// links the API hands out (hosted pages) start with the public address
const api = makeHttpApi({
  sandbox: true,
  baseUrl: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3005}`
})

export default {
  fetch: api.fetch,
  // Runtimes with scheduled events (Workers cron triggers) run due work here.
  scheduled: () => api.runDue()
}

/**
 * The tiny Node runner: serves the same API, made once the server listens (with
 * port 0 the address, and so the links the API hands out, is known only then),
 * until `close` (which disposes it).
 */
export const start = async (
  port = Number(process.env.PORT ?? 3005)
): Promise<{ url: string; close: () => Promise<void> }> => {
  let listener: RequestListener | undefined
  // requireHostHeader off and answerClientErrors: requests node cannot take get the API's error object too
  const server = createServer({ requireHostHeader: false }, (req, res) => listener?.(req, res))
  answerClientErrors(server)
  server.listen(port, "127.0.0.1")
  await once(server, "listening")
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const served = makeHttpApi({ sandbox: true, baseUrl: process.env.PUBLIC_BASE_URL ?? url })
  listener = toNodeListener(served.fetch, { hostname: new URL(url).host })

  const due = runDueEvery(served, 1_000)

  return {
    url,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await due.stop()
      await served.dispose()
    }
  }
}

// Bun and Deno serve the default export themselves; only plain Node needs the runner.
if (import.meta.main && !("Bun" in globalThis) && !("Deno" in globalThis)) {
  const { url } = await start()
  console.log(`xaalis API (fetch module on node:http) on ${url}/v1, docs on ${url}/docs`)
}
