/**
 * The xaalis API as a Fastify plugin, next to the app's own routes.
 *
 *   node --conditions=@xaalis/source fastify.ts      (PORT, default 3003)
 */
import type { AddressInfo } from "node:net"
import { makeHttpApi, runDueEvery } from "@xaalis/http"
import { xaalisFastify } from "@xaalis/http/fastify"
import Fastify from "fastify"

export const start = async (
  port = Number(process.env.PORT ?? 3003)
): Promise<{ url: string; close: () => Promise<void> }> => {
  // links the API hands out (hosted pages) start with the public address
  const api = makeHttpApi({ sandbox: true, baseUrl: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}` })
  const app = Fastify()
  // The plugin reads every body as raw bytes in its own context; add `prefix` to mount it elsewhere.
  await app.register(xaalisFastify, { handler: api.fetch })
  app.get("/health", async () => ({ ok: true }))
  await app.listen({ port, host: "127.0.0.1" })

  // The handler only works when called: due work (expiries, webhook retries) runs on a timer.
  const due = runDueEvery(api, 1_000)

  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
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
