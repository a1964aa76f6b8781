/** Child processes of the tests: node:sqlite files shared across OS processes. */

import { type ChildProcess, fork } from "node:child_process"
import { fileURLToPath } from "node:url"

/** Starts `test/children/<script>` with Node's TypeScript support and the workspace's source condition. */
export const spawnChild = (script: string, args: ReadonlyArray<string>): ChildProcess =>
  fork(fileURLToPath(new URL(`./children/${script}`, import.meta.url)), [...args], {
    execArgv: ["--conditions=@xaalis/source", "--no-warnings"],
    stdio: ["ignore", "pipe", "pipe", "ipc"]
  })

/** What a child wrote on stderr, for failure messages. */
export const collectStderr = (child: ChildProcess): (() => string) => {
  let text = ""
  child.stderr?.setEncoding("utf8")
  child.stderr?.on("data", (chunk: string) => {
    text += chunk
  })
  return () => text
}

/** The next IPC message of `child` matching `type` (rejects if the child exits first). */
export const nextMessage = <M extends { readonly type: string }>(
  child: ChildProcess,
  type: M["type"],
  stderr: () => string
): Promise<M> =>
  new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (typeof m === "object" && m !== null && (m as { type?: unknown }).type === type) {
        cleanup()
        resolve(m as M)
      }
    }
    const onExit = (code: number | null, signal: string | null) => {
      cleanup()
      reject(new Error(`child exited (${code ?? signal}) before "${type}":\n${stderr()}`))
    }
    const cleanup = () => {
      child.off("message", onMessage)
      child.off("exit", onExit)
    }
    child.on("message", onMessage)
    child.on("exit", onExit)
  })

/** Resolves with the exit code or signal once `child` has exited. */
export const exited = (child: ChildProcess): Promise<number | string | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode ?? child.signalCode)
    : new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)))

/** mulberry32: a small seeded PRNG (uniform in [0, 1)). */
export const prng = (seed: number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A seeded shuffle (Fisher–Yates) of a copy of `items`. */
export const shuffled = <T>(items: ReadonlyArray<T>, random: () => number): Array<T> => {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const tmp = out[i] as T
    out[i] = out[j] as T
    out[j] = tmp
  }
  return out
}
