/**
 * The xaalis API inside an Express app, next to the app's own routes.
 *
 *   node --conditions=@xaalis/source express.ts      (PORT, default 3002)
 */
import { once } from "node:events"
import type { AddressInfo } from "node:net"
import { makeHttpApi, runDueEvery, xaalisExpress } from "@xaalis/http"
import express from "express"

export const start = async (
  port = Number(process.env.PORT ?? 3002)
): Promise<{ url: string; close: () => Promise<void> }> => {
  // links the API hands out (hosted pages) start with the public address
  const api = makeHttpApi({ sandbox: true, baseUrl: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}` })
  const app = express()
  // Before any body parser: the API reads the exact body bytes itself.
  app.use(xaalisExpress(api.fetch))
  // The app's own routes can parse JSON as usual, after it.
  app.use(express.json())
  app.get("/health", (_req, res) => {
    res.json({ ok: true })
  })
  const server = app.listen(port, "127.0.0.1")
  await once(server, "listening")

  // The handler only works when called: due work (expiries, webhook retries) runs on a timer.
  const due = runDueEvery(api, 1_000)

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
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
