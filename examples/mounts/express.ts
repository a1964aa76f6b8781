/**
 * The xaalis API inside an Express app, next to the app's own routes.
 *
 *   node --conditions=@xaalis/source express.ts      (PORT, default 3002)
 */
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { answerClientErrors, makeHttpApi, runDueEvery, xaalisExpress } from "@xaalis/http"
import express from "express"

export const start = async (
  port = Number(process.env.PORT ?? 3002)
): Promise<{ url: string; close: () => Promise<void> }> => {
  const app = express()
  // requireHostHeader off and answerClientErrors: requests node cannot take get the API's error object too
  const server = createServer({ requireHostHeader: false }, app)
  answerClientErrors(server)
  // Listen first: with port 0 the address, and so the links the API hands out, is known only then.
  server.listen(port, "127.0.0.1")
  await once(server, "listening")
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // links the API hands out (hosted pages) start with the public address
  const api = makeHttpApi({ sandbox: true, baseUrl: process.env.PUBLIC_BASE_URL ?? url })
  // Before any body parser: the API reads the exact body bytes itself (an HTTP/1.0 request without Host
  // is taken as addressed to this server).
  app.use(xaalisExpress(api.fetch, { hostname: new URL(url).host }))
  // The app's own routes can parse JSON as usual, after it.
  app.use(express.json())
  app.get("/health", (_req, res) => {
    res.json({ ok: true })
  })

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
  console.log(`xaalis API (Express) on ${url}/v1, docs on ${url}/docs`)
}
