import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { EngineConfig as EngineConfigModule } from "@xaalis/engine"
import { answerClientErrors, HttpNotifier, makeHttpApi, runDueEvery, toNodeListener } from "@xaalis/http"
import type { ServerConfig } from "./config.ts"
import { jsonLines, type LogLine } from "./log.ts"
import { storeLayer } from "./store.ts"

export interface RunningServer {
  /** Where it listens, e.g. http://127.0.0.1:3000 */
  readonly url: string
  readonly port: number
  /** Graceful stop: no new connections, in-flight requests finish, the background loop stops, stores close. */
  readonly close: () => Promise<void>
}

/** How often the background loop runs due work (expiries, overdue marks, payouts, webhook retries). */
export const tick_ms = 1_000

/**
 * Starts the reference server: the HTTP API of @xaalis/http on node:http, the
 * store chosen by `config.store`, webhooks over HTTP (signed; loopback http
 * allowed in the sandbox), and a background loop running due work every `tick_ms`.
 */
export const startServer = async (config: ServerConfig, log: LogLine = jsonLines()): Promise<RunningServer> => {
  // listen first: with PORT=0 the address (and so the default base of hosted links) is known only then
  let listener: ReturnType<typeof toNodeListener> | undefined
  const server: Server = createServer((req, res) => listener?.(req, res))
  answerClientErrors(server) // unparsable requests get the error object too
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(config.port, config.host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`
  const baseUrl = config.baseUrl ?? url

  const engineConfig = EngineConfigModule.withPercentages(
    { ...EngineConfigModule.defaultEngineConfig, base_url: baseUrl },
    {
      conversion: config.conversionFeePercent,
      payment_request: config.paymentRequestFeePercent,
      payment_intent: config.paymentFeePercent
    }
  )
  const api = makeHttpApi({
    sandbox: config.sandbox,
    rate: config.rate,
    config: engineConfig,
    store: storeLayer(config.store),
    notifier: HttpNotifier.layer({ allowLoopbackHttp: config.sandbox }),
    rateLimit: config.rateLimit,
    baseUrl,
    onRequest: (r) => log({ level: "info", msg: "request", ...r }),
    onError: (fault) =>
      log({
        level: "error",
        msg: "internal error",
        request_id: fault.request_id,
        context: fault.context,
        error: fault.message
      })
  })
  listener = toNodeListener(api.fetch)
  // fail at start, not on the first request, when the store cannot open (bad DATABASE_URL, unwritable DATA_DIR…)
  try {
    await api.ready()
  } catch (e) {
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await api.dispose().catch(() => undefined)
    throw e
  }

  const due = runDueEvery(api, tick_ms)

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      })
      await due.stop()
      await api.dispose()
    })()
    return closing
  }
  return { url, port, close }
}
