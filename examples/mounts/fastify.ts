/**
 * The xaalis API as a Fastify plugin, next to the app's own routes.
 *
 *   node --conditions=@xaalis/source fastify.ts      (PORT, default 3003)
 */
import type { AddressInfo } from "node:net"
import { answerClientError, answerClientErrors, type HttpApi, makeHttpApi, runDueEvery } from "@xaalis/http"
import { xaalisFastify } from "@xaalis/http/fastify"
import Fastify from "fastify"

export const start = async (
  port = Number(process.env.PORT ?? 3003)
): Promise<{ url: string; close: () => Promise<void> }> => {
  // Fastify takes its routes before it listens, and with port 0 the address (so the links the API hands
  // out) is known only after: the plugin calls the API made once it listens.
  let api: HttpApi | undefined
  // Requests node cannot parse (garbage, headers over its limit) get the API's error object, not
  // Fastify's own JSON; so do CONNECT and an Expect other than 100-continue (answerClientErrors below).
  const app = Fastify({ clientErrorHandler: answerClientError })
  // The plugin hands every body to the API unread, in its own context; add `prefix` to mount it elsewhere.
  await app.register(xaalisFastify, {
    handler: (request, context) => (api as HttpApi).fetch(request, context),
    hostname: "127.0.0.1" // for HTTP/1.0 requests without Host
  })
  app.get("/health", async () => ({ ok: true }))
  answerClientErrors(app.server, { clientError: false })
  await app.listen({ port, host: "127.0.0.1" })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  // links the API hands out (hosted pages) start with the public address
  api = makeHttpApi({ sandbox: true, baseUrl: process.env.PUBLIC_BASE_URL ?? url })

  // The handler only works when called: due work (expiries, webhook retries) runs on a timer.
  const due = runDueEvery(api, 1_000)

  return {
    url,
    close: async () => {
      await app.close()
      await due.stop()
      await api.dispose()
    }
  }
}

if (import.meta.main) {
  const { url } = await start()
  console.log(`xaalis API (Fastify) on ${url}/v1, docs on ${url}/docs`)
}
