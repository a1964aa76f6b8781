/**
 * The xaalis API mounted in a Hono app, served on Node by @hono/node-server.
 *
 *   node --conditions=@xaalis/source hono.ts      (PORT, default 3004)
 */
import { once } from "node:events"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { serve } from "@hono/node-server"
import { answerClientErrors, type HttpApi, makeHttpApi, mountHono, runDueEvery } from "@xaalis/http"
import { Hono } from "hono"

export const start = async (
  port = Number(process.env.PORT ?? 3004)
): Promise<{ url: string; close: () => Promise<void> }> => {
  // With port 0 the address (so the links the API hands out) is known only once the server listens:
  // the mount calls the API made then.
  let api: HttpApi | undefined
  const app = new Hono()
  app.get("/health", (c) => c.json({ ok: true }))
  // /v1/..., /docs and the hosted pages under /pay go to the API (with the client address under @hono/node-server);
  // mountHono(app, api.fetch, "/payments") would put them under /payments.
  mountHono(app, (request, context) => (api as HttpApi).fetch(request, context))
  const server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }) as Server
  // requests node cannot parse (garbage, headers over its limit), CONNECT and an Expect other than
  // 100-continue get the API's error object rather than node's empty answer
  answerClientErrors(server)
  if (!server.listening) await once(server, "listening")
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // links the API hands out (hosted pages) start with the public address
  api = makeHttpApi({ sandbox: true, baseUrl: process.env.PUBLIC_BASE_URL ?? url })

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
  console.log(`xaalis API (Hono) on ${url}/v1, docs on ${url}/docs`)
}
