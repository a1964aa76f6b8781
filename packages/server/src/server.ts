import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { EngineConfig as EngineConfigModule } from "@xaalis/engine"
import { answerClientErrors, type HttpApi, HttpNotifier, makeHttpApi, runDueEvery, toNodeListener } from "@xaalis/http"
import proxyaddr from "proxy-addr"
import { type ServerConfig, trustFunction } from "./config.ts"
import { jsonLines, type LogLine } from "./log.ts"
import { rateLimiterLayer, storeLayer } from "./store.ts"

export interface RunningServer {
  /** Where it listens, e.g. http://127.0.0.1:3000 */
  readonly url: string
  readonly port: number
  /**
   * Graceful stop: no new connections and no new background work (the due
   * loop and webhook dispatch finish what they started); idle keep-alive
   * connections close at once, busy ones after their answer (which says
   * `Connection: close`), and any still open after `drain_ms` are cut; then the
   * background work still in flight and the stores close within `stop_ms`, or
   * the promise rejects.
   */
  readonly close: () => Promise<void>
}

/** How often the background loop runs due work (expiries, overdue marks, payouts, webhook retries). */
export const tick_ms = 1_000

/** How long a graceful stop waits for clients to leave their connections before cutting them. */
export const drain_ms = 10_000

/**
 * How long a graceful stop then waits for the background loop's run in flight
 * and for the store to close: a database that stopped answering (PostgreSQL
 * behind a partition: no reset, so no error either) would hold them for ever.
 * Past it the stop fails, and the process exits as after a crash (work not
 * committed is rolled back; nothing acknowledged is lost). Longer than a
 * webhook delivery may take (`HttpNotifier`'s 10 s), so a slow receiver alone
 * never makes a stop fail: no delivery starts once the stop has begun.
 */
export const stop_ms = 15_000

/**
 * How long a client may take to send a request's headers, and the whole request
 * (node's defaults are 60 s and 300 s): a client that holds a connection open by
 * sending a byte now and then is answered `400` and cut off sooner. The largest
 * body (256 KiB) needs no more than this on any usable link.
 */
export const headersTimeout = 10_000
export const requestTimeout = 30_000

/** How long `GET /readyz` reuses its last look at the store (a probe flood costs one read per period). */
export const ready_cache_ms = 1_000

const healthHeaders = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }

/** The path of a request target: origin form (`/readyz?x`), or the absolute form a proxy may send (`http://host/readyz`). */
const probePathOf = (target: string): string => {
  const path = target.startsWith("/") ? target : target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "")
  return path.split("?", 1)[0] ?? ""
}

/**
 * @internal `GET /readyz`'s verdict: the API's `check`, one at a time, reused
 * for `ready_cache_ms`; false while starting or stopping. A change is logged
 * once (`not ready` with the reason, then `ready again`), not every probe.
 */
export const readinessOf = (current: () => HttpApi | undefined, stopping: () => boolean, log: LogLine) => {
  let last: { readonly at: number; readonly ready: boolean } | undefined
  let looking: Promise<boolean> | undefined
  let logged: boolean | undefined
  return (): Promise<boolean> => {
    const api = current()
    if (stopping() || api === undefined) return Promise.resolve(false)
    if (last !== undefined && performance.now() - last.at < ready_cache_ms) return Promise.resolve(last.ready)
    looking ??= api.check().then((result) => {
      looking = undefined
      last = { at: performance.now(), ready: result.ok }
      if (!result.ok && logged !== false) log({ level: "warn", msg: "not ready", reason: result.reason })
      else if (result.ok && logged === false) log({ level: "info", msg: "ready again" })
      logged = result.ok
      return result.ok
    })
    return looking
  }
}

/**
 * Starts the reference server: the HTTP API of @xaalis/http on node:http, the
 * store chosen by `config.store`, webhooks over HTTP (signed; loopback http
 * allowed in the sandbox), and a background loop running due work every `tick_ms`.
 */
export const startServer = async (config: ServerConfig, log: LogLine = jsonLines()): Promise<RunningServer> => {
  // listen first: with PORT=0 the address (and so the default base of hosted links) is known only then
  let listener: ReturnType<typeof toNodeListener> | undefined
  // once closing, every answer says `Connection: close`, so clients on keep-alive connections move away
  let draining = false
  let served: HttpApi | undefined
  const readiness = readinessOf(
    () => served,
    () => draining,
    log
  )
  /**
   * The probes of a load balancer or an orchestrator, outside the API's paths and its rate limit, not
   * logged per request: `GET /healthz` (live: this process answers) is 200 while it runs;
   * `GET /readyz` (ready for traffic) is 200 when the store answers a read, else 503 (starting, stopping,
   * or the store down or silent: the reason goes to the log, not to the client).
   */
  const probe = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== "GET" && req.method !== "HEAD") return false
    const path = probePathOf(req.url ?? "")
    if (path !== "/healthz" && path !== "/readyz") return false
    const answer = (status: number, body: string) => {
      try {
        res.writeHead(status, { ...healthHeaders, "content-length": Buffer.byteLength(body) })
        res.end(req.method === "HEAD" ? undefined : body)
      } catch {
        res.destroy()
      }
    }
    req.resume()
    if (path === "/healthz") {
      answer(200, '{"status":"ok"}')
      return true
    }
    readiness().then(
      (ready) => answer(ready ? 200 : 503, ready ? '{"status":"ok"}' : '{"status":"unavailable"}'),
      () => answer(503, '{"status":"unavailable"}')
    )
    return true
  }
  // requireHostHeader off: an HTTP/1.1 request without Host gets the API's error object, not node's empty 400
  const server: Server = createServer(
    // timeouts checked every second (node's default: every 30 s, on top of the timeout)
    { requireHostHeader: false, headersTimeout, requestTimeout, connectionsCheckingInterval: 1_000 },
    (req, res) => {
      if (draining) res.setHeader("connection", "close")
      if (!probe(req, res)) listener?.(req, res)
    }
  )
  // unparsable requests get the error object too, and a line in the request log
  answerClientErrors(server, {
    onAnswer: (a) =>
      log({ level: "info", msg: "request", method: null, path: null, status: a.status, error: a.message })
  })
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
  // on PostgreSQL the servers on one database share their rate-limit buckets; a failure is logged once a minute
  let unavailable_logged_at = Number.NEGATIVE_INFINITY
  const rateLimiter = rateLimiterLayer(config.store, config.rateLimit, (error) => {
    const now = performance.now()
    if (now - unavailable_logged_at < 60_000) return
    unavailable_logged_at = now
    log({
      level: "warn",
      msg: "shared rate limit unavailable: requests are counted by this process alone until it answers",
      error: error instanceof Error ? error.message : String(error)
    })
  })
  const api = makeHttpApi({
    sandbox: config.sandbox,
    // servers sharing a database (PostgreSQL, or one SQLite file) share one sandbox: its clock, rate and payout
    // failures live in the store; on SQLite they are re-read only after another process committed
    sharedSandbox: config.store.kind !== "memory",
    rate: config.rate,
    config: engineConfig,
    store: storeLayer(config.store),
    notifier: HttpNotifier.layer({ allowLoopbackHttp: config.sandbox }),
    rateLimit: config.rateLimit,
    ...(rateLimiter === undefined ? {} : { rateLimiter }),
    baseUrl,
    onRequest: (r) => log({ level: "info", msg: "request", ...r }),
    // a failed attempt is a warning (it will be retried), a row given up after the retry horizon an error;
    // deliveries that succeed are not logged (the receiver's own log has them)
    onDelivery: (d) => {
      if (d.outcome === "delivered") return
      log({
        level: d.outcome === "failed" ? "error" : "warn",
        msg: d.outcome === "failed" ? "webhook given up" : "webhook attempt failed",
        event_id: d.event_id,
        event: d.event,
        business_id: d.business_id,
        mode: d.mode,
        target: d.target,
        attempt: d.attempt,
        error: d.error,
        next_attempt_at: d.next_attempt_at === null ? null : new Date(d.next_attempt_at).toISOString()
      })
    },
    onError: (fault) =>
      log({
        level: "error",
        msg: "internal error",
        request_id: fault.request_id,
        context: fault.context,
        error: fault.message
      })
  })
  // behind trusted reverse proxies the client is the nearest untrusted address of X-Forwarded-For
  const trust = config.trustProxy === undefined ? undefined : trustFunction(config.trustProxy)
  // an HTTP/1.0 request may leave Host out: it is taken as addressed to this server
  listener = toNodeListener(api.fetch, {
    hostname: new URL(url).host,
    ...(trust === undefined ? {} : { remoteAddress: (incoming: IncomingMessage) => proxyaddr(incoming, trust) })
  })
  // fail at start, not on the first request, when the store cannot open (bad DATABASE_URL, unwritable DATA_DIR…)
  try {
    await api.ready()
  } catch (e) {
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await api.dispose().catch(() => undefined)
    throw e
  }
  // ready for traffic from now on (before, /readyz answers 503 without asking: a slow start is not an outage)
  served = api

  const due = runDueEvery(api, tick_ms)

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      draining = true
      // no background work starts from now on (the due loop's next run, a dispatch kicked by a request still
      // in flight): what is in flight finishes while the connections drain, the rest stays due for the next start
      const background = Promise.all([due.stop(), api.stopBackground()])
      // awaited after the drain; until then a rejection (neither is expected to reject) must not be unhandled
      background.catch(() => undefined)
      await new Promise<void>((resolve) => {
        // no new connections; idle ones close now, busy ones after their answer: a request that arrives
        // from now on is answered with Connection: close, and one already in flight has its connection
        // closed once idle (checked every 50 ms: its answer may have been under way without that header)
        server.close(() => resolve())
        server.closeIdleConnections()
        const idle = setInterval(() => server.closeIdleConnections(), 50)
        // a client that keeps a connection busy past the deadline is cut off
        const deadline = setTimeout(() => server.closeAllConnections(), drain_ms)
        deadline.unref()
        server.once("close", () => {
          clearTimeout(deadline)
          clearInterval(idle)
        })
      })
      const released = (async () => {
        await background
        await api.dispose()
      })()
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `the background work and the store did not stop within ${stop_ms / 1_000} s (a database that does not answer?)`
              )
            ),
          stop_ms
        )
      })
      try {
        await Promise.race([released, late])
      } finally {
        clearTimeout(timer)
      }
    })()
    return closing
  }
  return { url, port, close }
}
