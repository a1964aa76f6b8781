import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))

/**
 * `npm start` at the repository root, as the README runs it; resolves with the address it prints.
 * `detached`: in a process group of its own, as in a terminal (Ctrl-C signals the whole group).
 */
const npmStart = (env: Record<string, string>, detached = false) => {
  const child = spawn("npm", ["start"], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached
  })
  const stdout = { text: "" }
  const listening = new Promise<string>((resolve, reject) => {
    let out = ""
    // the banner, for people, is on stderr
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.stdout.on("data", (chunk: Buffer) => {
      stdout.text += chunk.toString()
    })
    child.once("exit", (code) => reject(new Error(`npm start exited with ${code} before listening:\n${out}`)))
  })
  return { child, listening, stdout }
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

  it("Ctrl-C (SIGINT to the process group, which npm forwards again) stops gracefully: the request in flight is answered", async () => {
    const { child, listening, stdout } = npmStart(
      { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, STORE: "embedded" },
      true
    )
    started = child
    const url = new URL(await listening)
    // a request in flight: its headers sent, its body still to come, so the stop has to wait for it
    const socket = connect(Number(url.port), url.hostname)
    await once(socket, "connect")
    const body = JSON.stringify({ name: "Kairaba Coffee" })
    socket.write(
      `POST /v1/test_helpers/businesses HTTP/1.1\r\nHost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`
    )
    let answer = ""
    const answered = new Promise<void>((resolve) =>
      socket.on("data", (d: Buffer) => {
        answer += d.toString()
        if (answer.includes("secret_key_live")) resolve()
      })
    )
    socket.on("error", () => {})
    await new Promise((r) => setTimeout(r, 300))
    // as a terminal's Ctrl-C: npm and the server both get it, then npm forwards it to the server too
    process.kill(-(child.pid as number), "SIGINT")
    // before, the forwarded copy counted as a second signal: exit 1 at once, the request reset
    await new Promise((r) => setTimeout(r, 500))
    socket.write(body)
    await answered
    expect(answer).toMatch(/^HTTP\/1\.1 201 /)
    // its connection, idle after the answer, is closed then (not at the keep-alive timeout or the drain's end)
    const t0 = Date.now()
    expect(await exitOf(child)).toBe(0)
    expect(Date.now() - t0).toBeLessThan(3_000)
    expect(stdout.text).toContain('"msg":"stopped"')
  }, 60_000)
})
