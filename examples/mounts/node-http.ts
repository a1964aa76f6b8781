/**
 * The xaalis API on a bare `node:http` server: the whole server is the API.
 *
 *   node --conditions=@xaalis/source node-http.ts      (PORT, default 3001)
 */
import { once } from "node:events"
import { createServer, type RequestListener } from "node:http"
import type { AddressInfo } from "node:net"
import { answerClientErrors, makeHttpApi, runDueEvery, toNodeListener } from "@xaalis/http"

export const start = async (
  port = Number(process.env.PORT ?? 3001)
): Promise<{ url: string; close: () => Promise<void> }> => {
  // Listen first: with port 0 the address, and so the links the API hands out, is known only then.
  let listener: RequestListener | undefined
  // requireHostHeader off and answerClientErrors: requests node cannot take get the API's error object too
  const server = createServer({ requireHostHeader: false }, (req, res) => listener?.(req, res))
  answerClientErrors(server)
  server.listen(port, "127.0.0.1")
  await once(server, "listening")
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // links the API hands out (hosted pages) start with the public address
  const api = makeHttpApi({ sandbox: true, baseUrl: process.env.PUBLIC_BASE_URL ?? url })
  // an HTTP/1.0 request without Host is taken as addressed to this server
  listener = toNodeListener(api.fetch, { hostname: new URL(url).host })

  // The handler only works when called: due work (expiries, webhook retries) runs on a timer.
  const due = runDueEvery(api, 1_000)

  return {
    url,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await due.stop()
      await api.dispose()
    }
  }
}

if (import.meta.main) {
  const { url } = await start()
  console.log(`xaalis API (node:http) on ${url}/v1, docs on ${url}/docs`)
}
