/** Forking engine worker processes (see fixtures/engine-worker.ts) from a test. */

import { type ChildProcess, fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { Outcome, StartMessage, WorkerMessage } from "./fixtures/engine-worker.ts"

const script = fileURLToPath(new URL("./fixtures/engine-worker.ts", import.meta.url))

export interface Worker {
  readonly child: ChildProcess
  /** Resolves once the worker's engine is built (connected, migrated). */
  readonly ready: Promise<void>
  /** Resolves with the worker's outcomes; rejects if it reports an error or exits without them. */
  readonly done: Promise<ReadonlyArray<Outcome>>
  /** Resolves when the process has exited, with its signal (if killed). */
  readonly exited: Promise<NodeJS.Signals | null>
  readonly go: () => void
}

/** Forks a worker, hands it `start`, and follows its messages. `onApplied` hears each acknowledged transfer. */
export const forkWorker = (start: Omit<StartMessage, "type">, onApplied?: (tx_hash: string) => void): Worker => {
  const child = fork(script, [], {
    execArgv: ["--conditions=@xaalis/source", "--disable-warning=ExperimentalWarning"],
    serialization: "advanced",
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: process.env
  })
  let readyResolve: () => void = () => undefined
  let readyReject: (e: Error) => void = () => undefined
  let doneResolve: (o: ReadonlyArray<Outcome>) => void = () => undefined
  let doneReject: (e: Error) => void = () => undefined
  const ready = new Promise<void>((resolve, reject) => {
    readyResolve = resolve
    readyReject = reject
  })
  ready.catch(() => undefined)
  const done = new Promise<ReadonlyArray<Outcome>>((resolve, reject) => {
    doneResolve = resolve
    doneReject = reject
  })
  // a test that kills the worker never awaits `done`
  done.catch(() => undefined)
  const exited = new Promise<NodeJS.Signals | null>((resolve) => {
    child.on("exit", (code, signal) => {
      const error = new Error(`worker exited (code ${code}, signal ${signal}) without its outcomes`)
      readyReject(error)
      doneReject(error)
      resolve(signal)
    })
  })
  child.on("message", (m: WorkerMessage) => {
    if (m.type === "ready") readyResolve()
    else if (m.type === "applied") onApplied?.(m.tx_hash)
    else if (m.type === "done") doneResolve(m.outcomes)
    else if (m.type === "error") {
      const error = new Error(`worker failed: ${m.message}`)
      readyReject(error)
      doneReject(error)
    }
  })
  child.send({ type: "start", ...start })
  return { child, ready, done, exited, go: () => child.send({ type: "go" }) }
}
