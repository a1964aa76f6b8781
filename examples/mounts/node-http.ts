/**
 * The xaalis API on a bare `node:http` server: the whole server is the API.
 *
 *   node --conditions=@xaalis/source node-http.ts      (PORT, default 3001)
 */
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { makeHttpApi, runDueEvery, toNodeListener } from "@xaalis/http"

export const start = async (
  port = Number(process.env.PORT ?? 3001)
): Promise<{ url: string; close: () => Promise<void> }> => {
  // links the API hands out (hosted pages) start with the public address
  const api = makeHttpApi({ sandbox: true, baseUrl: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}` })
  const server = createServer(toNodeListener(api.fetch))
  server.listen(port, "127.0.0.1")
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
  console.log(`xaalis API (node:http) on ${url}/v1, docs on ${url}/docs`)
}
