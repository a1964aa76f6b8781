/** The reference server's log: JSON Lines on stdout. */

/** One structured line per event on stdout (JSON Lines). */
export type LogLine = (fields: Readonly<Record<string, unknown>>) => void

let stdoutBatch: ((line: string) => void) | undefined

/**
 * Lines to stdout in batches: the lines of one turn of the event loop go out
 * in one write (at the latest in the check phase of that turn, or as soon as
 * 64 KiB are pending), instead of one write system call per request. Pending
 * lines are written synchronously when the process exits (`process.exit`, the
 * end of the event loop, an uncaught exception); only a SIGKILL can lose the
 * last turn's lines. One batch per process, shared by every logger. When
 * stdout fails (EPIPE: its reader is gone), lines are dropped with one notice
 * on stderr, and the process goes on serving.
 */
export const batchedStdout = (): ((line: string) => void) => {
  if (stdoutBatch !== undefined) return stdoutBatch
  let pending = ""
  let scheduled = false
  // a reader of stdout that went away (a log shipper restarted, `npm start | head`) must not take the
  // server down with it: without a listener, the EPIPE of the next write is an uncaught 'error' event
  let broken = false
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (broken) return
    broken = true
    pending = ""
    try {
      process.stderr.write(`xaalis: stdout failed (${e.code ?? e.message}): log lines are dropped from now on\n`)
    } catch {
      // stderr gone too: nothing left to tell
    }
  })
  const flush = () => {
    scheduled = false
    if (pending === "" || broken) return
    const out = pending
    pending = ""
    process.stdout.write(out)
  }
  process.on("exit", flush)
  stdoutBatch = (line) => {
    if (broken) return
    pending += line
    if (pending.length >= 65_536) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
  return stdoutBatch
}

/** A JSON Lines logger: `{time, ...fields}` per line, to `write` (default: stdout, batched per event-loop turn). */
export const jsonLines = (write: (line: string) => void = batchedStdout()): LogLine => {
  // the time of the last line, as text: lines of one millisecond (a busy server writes several) share it
  let lastMs = Number.NaN
  let lastTime = ""
  return (fields) => {
    const ms = Date.now()
    if (ms !== lastMs) {
      lastTime = new Date(ms).toISOString()
      lastMs = ms
    }
    const time = lastTime
    if (Object.hasOwn(fields, "time")) return write(`${JSON.stringify({ time, ...fields })}\n`)
    // the same text as JSON.stringify({time, ...fields}), without copying the fields
    const rest = JSON.stringify(fields)
    write(rest === "{}" ? `{"time":"${time}"}\n` : `{"time":"${time}",${rest.slice(1)}\n`)
  }
}

/** An error's message and those of its causes, for the operator: a store's own words on what it could not reach. */
export const messages = (e: unknown): string => {
  const parts: Array<string> = []
  for (let c: unknown = e, depth = 0; c !== undefined && depth < 5; depth++) {
    parts.push(c instanceof Error ? c.message : String(c))
    c = c instanceof Error ? c.cause : undefined
  }
  return parts.join(" (cause: ") + ")".repeat(parts.length - 1)
}
