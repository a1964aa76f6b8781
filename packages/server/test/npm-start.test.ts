import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))

/** `npm start` at the repository root, as the README runs it; resolves with the address it prints. */
const npmStart = (env: Record<string, string>) => {
  const child = spawn("npm", ["start"], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const listening = new Promise<string>((resolve, reject) => {
    let out = ""
    // the banner, for people, is on stderr
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.stdout.resume()
    child.once("exit", (code) => reject(new Error(`npm start exited with ${code} before listening:\n${out}`)))
  })
  return { child, listening }
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once("exit", (code) => resolve(code))
  })

describe("npm start at the repository root", () => {
  const dataDir = `.data/test-npm-start-${process.pid}`
  let started: ChildProcess | undefined
  afterEach(() => {
    started?.kill("SIGKILL")
    rmSync(`${root}${dataDir}`, { recursive: true, force: true })
  })

  it("keeps a relative DATA_DIR under the root, and a SIGTERM to npm itself stops the server gracefully", async () => {
    // the embedded store whatever the environment says (CI sets DATABASE_URL for the PostgreSQL tests)
    const { child, listening } = npmStart({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, STORE: "embedded" })
    started = child
    const url = await listening
    expect((await fetch(`${url}/v1/openapi.json`)).status).toBe(200)
    // decisions §9: data under DATA_DIR, relative to where `npm start` runs (the root), not to a workspace
    expect(existsSync(`${root}${dataDir}/xaalis.sqlite`)).toBe(true)
    expect(existsSync(`${root}packages/server/${dataDir}`)).toBe(false)
    // only npm's own process gets the signal (not the process group, as a supervisor may do)
    child.kill("SIGTERM")
    expect(await exitOf(child)).toBe(0)
    await expect(fetch(`${url}/v1/openapi.json`)).rejects.toThrow()
  }, 60_000)
})
