import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The server's entry point, as `npm start` runs it (with `--conditions=@xaalis/source`). */
export const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  /** Every line the server printed on stdout so far (JSON lines only). */
  readonly lines: Array<string>
  /** What it printed on stderr so far (the start banner, for people). */
  readonly stderr: () => string
  readonly dataDir: string
  /** Sends `signal` (default SIGTERM) and resolves with the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
  /** The log lines (parsed) that `match` accepts, once there is one (log lines are written once per turn). */
  // biome-ignore lint/suspicious/noExplicitAny: log lines are arbitrary JSON objects
  readonly logged: (match: (line: any) => boolean, timeoutMs?: number) => Promise<Array<any>>
}

/** A fresh temporary DATA_DIR; `cleanup` removes it. */
export const tempDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "xaalis-e2e-"))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Starts the reference server exactly as `npm start` does (node + the source
 * condition + src/main.ts) on a free port, with `env` added to the environment.
 */
export const startServerProcess = (env: Record<string, string>, dataDir: string): Promise<ServerProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@xaalis/source", main], {
      // DATABASE_URL cleared: CI sets it for the PostgreSQL tests, the server must run on its embedded default here
      env: { ...process.env, DATABASE_URL: "", BASE_URL: "", PORT: "0", DATA_DIR: dataDir, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const lines: Array<string> = []
    let buffer = ""
    let stderr = ""
    let started = false
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)))
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString()
    })
    child.stdout?.on("data", (c: Buffer) => {
      buffer += c.toString()
      const parts = buffer.split("\n")
      buffer = parts.pop() ?? ""
      lines.push(...parts)
      const m = lines.map((l) => /"msg":"listening","url":"(http:\/\/[^"]+)"/.exec(l)).find((x) => x !== null)
      if (!started && m?.[1] !== undefined) {
        started = true
        resolve({
          url: m[1],
          child,
          lines,
          stderr: () => stderr,
          dataDir,
          stop: (signal = "SIGTERM") => {
            if (child.exitCode === null) child.kill(signal)
            return exited
          },
          logged: async (match, timeoutMs = 5_000) => {
            const deadline = Date.now() + timeoutMs
            for (;;) {
              const found = lines.map((l) => JSON.parse(l)).filter(match)
              if (found.length > 0 || Date.now() > deadline) return found
              await new Promise((r) => setTimeout(r, 20))
            }
          }
        })
      }
    })
    void exited.then((code) => {
      if (!started) reject(new Error(`server exited with ${code} before listening: ${stderr}`))
    })
  })

export interface Reply {
  readonly status: number
  readonly headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON replies field by field
  readonly body: any
  readonly text: string
}

/** One HTTP call with a bearer key and a JSON (or raw string) body. */
export const call = async (
  url: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}
): Promise<Reply> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`
  let body: string | undefined
  if (options.raw !== undefined) body = options.raw
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
  const res = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, body: parsed, text }
}

export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** A local webhook receiver; answers `respond()`'s status (200 by default). */
export const receiver = async () => {
  const received: Array<Received> = []
  let respond: (r: Received) => number = () => 200
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const r = { path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") }
      received.push(r)
      res.statusCode = respond(r)
      res.end()
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    received,
    setRespond: (f: (r: Received) => number) => {
      respond = f
    },
    /** Resolves once `predicate` holds of the received list (polling; fails after `ms`). */
    waitFor: async (predicate: (rs: ReadonlyArray<Received>) => boolean, ms = 10_000) => {
      const until = Date.now() + ms
      while (!predicate(received)) {
        if (Date.now() > until)
          throw new Error(`receiver: condition not met after ${ms} ms (${received.length} received)`)
        await new Promise((r) => setTimeout(r, 25))
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r()))
  }
}

/** A raw TCP connection to `url`'s server, for requests sent by hand: what arrived so far, and its close. */
export const rawConnection = async (url: string) => {
  const socket = connect(Number(new URL(url).port), "127.0.0.1")
  await once(socket, "connect")
  let got = ""
  socket.on("data", (d: Buffer) => {
    got += d.toString()
  })
  return { socket, received: () => got, closed: once(socket, "close") }
}
