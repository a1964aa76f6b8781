#!/usr/bin/env -S node --disable-warning=ExperimentalWarning
/**
 * `npm start`: the reference server of decisions §9 with the settings of the
 * environment (see config.ts). Stops gracefully on SIGTERM/SIGINT; a second
 * signal, a second or more after the first, exits at once. A signal during the
 * start waits for the start (at most `stop_ms`), then stops.
 */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { isCommand, runAdmin, usage } from "./admin.ts"
import { ConfigError, fromEnv } from "./config.ts"
import { legacyDataHint } from "./legacy.ts"
import { jsonLines, messages } from "./log.ts"
import { type RunningServer, startServer, stop_ms } from "./server.ts"

const log = jsonLines()

/** A second stop signal this soon after the first is the same stop delivered twice (see `stop`). */
const repeat_ms = 1_000

const main = async () => {
  let config: ReturnType<typeof fromEnv>
  try {
    config = fromEnv(process.env)
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`xaalis: ${e.message}\n`)
      process.exit(2)
    }
    throw e
  }
  // `npm run admin -- <command>` passes "admin" first: without a command it must not start a server on the data
  const argv = process.argv.slice(2)
  const viaAdmin = argv[0] === "admin"
  const [command, ...args] = viaAdmin ? argv.slice(1) : argv
  if (command === undefined && viaAdmin) {
    process.stderr.write(`xaalis: npm run admin needs a command: npm run -s admin -- <command>\n${usage}\n`)
    process.exit(2)
  }
  if (command !== undefined) {
    // an operator's command (admin.ts) instead of the server
    if (command === "help" || command === "--help" || command === "-h") {
      process.stdout.write(
        `xaalis-server            start the reference server (settings from the environment)\n${usage}\n`
      )
      process.exit(0)
    }
    if (!isCommand(command)) {
      process.stderr.write(`xaalis: unknown command "${command}"\n${usage}\n`)
      process.exit(2)
    }
    const outcome = await runAdmin(command, args, config)
    process.stdout.write(outcome.stdout)
    process.stderr.write(outcome.stderr)
    process.exit(outcome.code)
  }
  // Handlers first: a signal that arrives before any listener exists kills the process outright.
  let server: RunningServer | undefined
  let stopping = false
  let firstSignal: number | undefined
  let abandonStart: NodeJS.Timeout | undefined
  const stop = (signal: string) => {
    const at = performance.now()
    if (firstSignal !== undefined) {
      // Ctrl-C signals the whole process group and `npm start` forwards it once more: a repeat within
      // a second is that same stop, not a second request to exit at once
      if (at - firstSignal < repeat_ms) return
      process.exit(1)
    }
    firstSignal = at
    stopping = true
    log({ level: "info", msg: "shutting down", signal })
    if (server !== undefined) shutdown(server)
    else {
      // Still starting: shut down right after the start (below). A start that waits on a database gone
      // silent (a migration has no timeout: it may lawfully take long) would hold the stop for ever:
      // past stop_ms the start is abandoned. Nothing was served yet, and an unfinished migration is one
      // transaction, rolled back by the database when the connection goes.
      abandonStart = setTimeout(() => {
        log({ level: "error", msg: "shutdown failed", error: `the start did not finish within ${stop_ms} ms` })
        process.exit(1)
      }, stop_ms)
    }
  }
  const shutdown = (running: RunningServer) =>
    running.close().then(
      () => {
        log({ level: "info", msg: "stopped" })
        process.exit(0)
      },
      (e: unknown) => {
        log({ level: "error", msg: "shutdown failed", error: String(e) })
        process.exit(1)
      }
    )
  process.on("SIGTERM", () => stop("SIGTERM"))
  process.on("SIGINT", () => stop("SIGINT"))

  const hint = legacyDataHint({
    dataDirDefaulted: process.env.DATA_DIR === undefined,
    store: config.store,
    legacy: fileURLToPath(new URL("../.data/xaalis.sqlite", import.meta.url)),
    exists: existsSync
  })
  if (hint !== undefined) log({ level: "warn", msg: hint })
  server = await startServer(config, log)
  clearTimeout(abandonStart) // the stop below has bounds of its own
  const where =
    config.store.kind === "embedded"
      ? `embedded store in ${config.store.dataDir}`
      : config.store.kind === "postgres"
        ? "PostgreSQL (DATABASE_URL)"
        : "in-memory store (data is lost on exit)"
  const lines = [
    `xaalis listening on ${server.url} (${config.sandbox ? "sandbox" : "sandbox off"}, ${where})`,
    `API description: ${server.url}/v1/openapi.json · interactive docs: ${server.url}/docs`
  ]
  if (config.sandbox) {
    lines.push(
      "Create a sandbox business:",
      `  curl -s -X POST ${server.url}/v1/test_helpers/businesses -H 'content-type: application/json' -d '{"name":"My shop"}'`
    )
  } else {
    lines.push(
      "Create a business (the test helpers are off): xaalis-server create-business --name 'My shop' (in a checkout: npm run -s admin -- create-business --name 'My shop')"
    )
  }
  // for people on stderr; stdout carries only JSON lines (the request log), with where it listens as the first
  log({ level: "info", msg: "listening", url: server.url, sandbox: config.sandbox, store: config.store.kind })
  process.stderr.write(`${lines.join("\n")}\n`)
  if (stopping) shutdown(server)
}

main().catch((e: unknown) => {
  process.stderr.write(`xaalis: could not start: ${messages(e)}\n`)
  process.exit(1)
})
