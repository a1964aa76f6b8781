import { spawn } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { verify } from "@xaalis/webhooks"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { call, receiver, type ServerProcess, startServerProcess, tempDataDir } from "./harness.ts"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

type Outcome = { code: number | null; stdout: string; stderr: string }

/** Runs `command`, collecting its exit code and output; a process still running after 15 s is killed. */
const run = (command: string, args: ReadonlyArray<string>, env: Record<string, string>, cwd?: string) =>
  new Promise<Outcome>((resolve) => {
    const child = spawn(command, args, {
      env: { ...process.env, DATABASE_URL: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      ...(cwd === undefined ? {} : { cwd })
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString()
    })
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString()
    })
    // a server started by mistake would never exit
    const guard = setTimeout(() => child.kill("SIGKILL"), 15_000)
    child.once("exit", (code) => {
      clearTimeout(guard)
      resolve({ code, stdout, stderr })
    })
  })

/** `xaalis-server <args>` as an operator runs it, on `dataDir`: exit code, stdout, stderr. */
const admin = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  run(process.execPath, ["--conditions=@xaalis/source", main, ...args], env)

/** `npm run -s admin -- <args>` at the repository root, as the README shows it. */
const npmAdmin = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  run(
    "npm",
    ["run", "-s", "admin", ...(args.length > 0 ? ["--", ...args] : [])],
    { PORT: "0", ...env },
    fileURLToPath(new URL("../../../", import.meta.url))
  )

describe("npm run admin", () => {
  it("without a command prints the usage and exits 2 (it used to start a server on the data)", async () => {
    const data = tempDataDir()
    try {
      const none = await npmAdmin([], { DATA_DIR: data.dir })
      expect(none.code).toBe(2)
      expect(none.stderr).toContain("npm run admin needs a command")
      expect(none.stderr).toContain("xaalis-server create-business")
      expect(none.stdout).toBe("")
      // with one, it runs it
      const created = await npmAdmin(["create-business", "--name", "Kairaba Coffee"], { DATA_DIR: data.dir })
      expect(created.code).toBe(0)
      expect(JSON.parse(created.stdout)).toMatchObject({ name: "Kairaba Coffee" })
    } finally {
      data.cleanup()
    }
  }, 40_000)
})

describe("operator commands of xaalis-server", () => {
  let data = tempDataDir()
  let server: ServerProcess | undefined
  beforeEach(() => {
    data = tempDataDir()
    server = undefined
  })
  afterEach(async () => {
    await server?.stop()
    data.cleanup()
  })

  it("create-business with the sandbox off, then roll-key against the running server's store", async () => {
    const env = { DATA_DIR: data.dir, SANDBOX: "0" }
    const created = await admin(["create-business", "--name", "Kairaba Coffee"], env)
    expect(created.code).toBe(0)
    const biz = JSON.parse(created.stdout)
    expect(biz).toMatchObject({ name: "Kairaba Coffee" })
    // unnamed, with the sandbox off, a business is not called a sandbox one
    const unnamed = await admin(["create-business"], env)
    expect([unnamed.code, JSON.parse(unnamed.stdout).name]).toEqual([0, "Business"])
    const inSandbox = await admin(["create-business"], { ...env, SANDBOX: "1" })
    expect(JSON.parse(inSandbox.stdout).name).toBe("Sandbox business")
    expect(biz.secret_key_live).toMatch(/^sk_live_/)

    server = await startServerProcess(env, data.dir)
    const url = server.url
    expect((await call(url, "GET", "/v1/balance", { key: biz.secret_key_test })).status).toBe(200)
    // with the sandbox off there is no business creation over HTTP
    expect((await call(url, "POST", "/v1/test_helpers/businesses", { body: {} })).status).toBe(404)

    // a rolled key with a grace period: both keys work; the test key is untouched
    const graceful = await admin(["roll-key", "--business", biz.id, "--mode", "live", "--expires-in", "3600"], env)
    expect(graceful.code).toBe(0)
    const first = JSON.parse(graceful.stdout)
    expect(first).toMatchObject({ business_id: biz.id, mode: "live", previous_keys: 1 })
    expect(Date.parse(first.previous_keys_expire_at) - Date.now()).toBeGreaterThan(3_500_000)
    expect((await call(url, "GET", "/v1/balance", { key: first.secret_key })).status).toBe(200)
    expect((await call(url, "GET", "/v1/balance", { key: biz.secret_key_live })).status).toBe(200)

    // revoked at once: the key in its grace period (never cached: it has an expiry) fails on its next request
    const now = await admin(["roll-key", "--business", biz.id, "--mode", "live"], env)
    expect(now.code).toBe(0)
    const second = JSON.parse(now.stdout)
    expect(second.previous_keys).toBe(2) // the original key's grace period is cut short too
    const refused = await call(url, "GET", "/v1/balance", { key: biz.secret_key_live })
    expect(refused.status).toBe(401)
    expect(refused.body).toEqual({ error: { message: "Invalid API key.", code: "authentication_error" } })
    expect((await call(url, "GET", "/v1/balance", { key: second.secret_key })).status).toBe(200)
    expect((await call(url, "GET", "/v1/balance", { key: biz.secret_key_test })).status).toBe(200)
  }, 60_000)

  it("roll-webhook-secret: during the grace period a delivery verifies with the old secret and the new one", async () => {
    const env = { DATA_DIR: data.dir }
    const hooks = await receiver()
    try {
      const biz = JSON.parse((await admin(["create-business", "--webhook-url", `${hooks.url}/hooks`], env)).stdout)
      const rolled = await admin(["roll-webhook-secret", "--business", biz.id, "--expires-in", "3600"], env)
      expect(rolled.code).toBe(0)
      const fresh = JSON.parse(rolled.stdout)
      expect(fresh.webhook_secret).toMatch(/^whsec_/)
      expect(Date.parse(fresh.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3_500_000)

      server = await startServerProcess(env, data.dir)
      const key = biz.secret_key_live
      const conversion = await call(server.url, "POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } })
      expect(conversion.status).toBe(201)
      const paid = await call(server.url, "POST", "/v1/test_helpers/chain/transfers", {
        key,
        body: { network: "TRC20", currency: "USDT", to_address: conversion.body.pay_address, amount: 73.64 }
      })
      expect(paid.body.applied).toBe(true)
      await hooks.waitFor((rs) => rs.some((r) => JSON.parse(r.body).event === "ramp.paid"))
      const hook = hooks.received.find((r) => JSON.parse(r.body).event === "ramp.paid")!
      // a receiver still on the old secret verifies either scheme; one already on the new secret, the standard one
      expect(verify(hook.body, hook.headers, biz.webhook_secret, { scheme: "service" }).event).toBe("ramp.paid")
      expect(verify(hook.body, hook.headers, biz.webhook_secret, { scheme: "standard" }).event).toBe("ramp.paid")
      expect(verify(hook.body, hook.headers, fresh.webhook_secret, { scheme: "standard" }).event).toBe("ramp.paid")
      expect(() => verify(hook.body, hook.headers, fresh.webhook_secret, { scheme: "service" })).toThrow(/signature/i)
    } finally {
      await hooks.close()
    }
  }, 60_000)

  it("bad input: the catalogue error or the usage on stderr, exit 2, nothing changed", async () => {
    const env = { DATA_DIR: data.dir }
    const biz = JSON.parse((await admin(["create-business"], env)).stdout)
    const cases: ReadonlyArray<[ReadonlyArray<string>, RegExp]> = [
      [["roll-key", "--business", biz.id, "--mode", "prod"], /"code":"validation_error"/],
      [["roll-key", "--business", biz.id, "--mode", "live", "--expires-in", "604801"], /"code":"validation_error"/],
      [["roll-key", "--business", biz.id, "--mode", "live", "--expires-in", "-5"], /validation_error|usage/],
      [["roll-key", "--mode", "live"], /--business is required/],
      [["roll-key", "--business", "no-such-business", "--mode", "live"], /"code":"not_found"/],
      [["roll-key", "--business", biz.id, "--mode", "live", "--bogus"], /Unknown option '--bogus'[\s\S]*usage/],
      [["create-business", "--webhook-url", "not a url"], /"code":"validation_error"/],
      // the webhook URL receives live events: the live rules, as the HTTP helper applies them
      [["create-business", "--webhook-url", "https://10.0.0.1/hooks"], /webhook_url is not allowed in live mode/],
      [["create-business", "--webhook-url", "http://example.com/hooks"], /webhook_url is not allowed in live mode/],
      [["roll-webhook-secret", "--business", biz.id, "--expires-in", "604801"], /"code":"validation_error"/],
      [["roll-webhook-secret", "--business", "no-such-business"], /"code":"not_found"/],
      [["roll-webhook-secret", "--business", biz.id, "--mode", "live"], /Unknown option '--mode'/],
      [["frobnicate"], /unknown command "frobnicate"/]
    ]
    for (const [args, stderr] of cases) {
      const outcome = await admin(args, env)
      expect([args.join(" "), outcome.code, outcome.stdout]).toEqual([args.join(" "), 2, ""])
      expect(outcome.stderr).toMatch(stderr)
    }
    // without the sandbox, not even loopback over plain http
    const off = await admin(["create-business", "--webhook-url", "http://127.0.0.1:9/hooks"], { ...env, SANDBOX: "0" })
    expect([off.code, off.stdout]).toEqual([2, ""])
    expect(off.stderr).toMatch(/webhook_url is not allowed in live mode/)
    const memory = await admin(["create-business"], { STORE: "memory" })
    expect([memory.code, memory.stderr]).toEqual([2, expect.stringContaining("STORE=memory keeps nothing")])
    // the keys still work: nothing was rolled
    server = await startServerProcess(env, data.dir)
    expect((await call(server.url, "GET", "/v1/balance", { key: biz.secret_key_live })).status).toBe(200)
    const help = await admin(["help"], env)
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining("roll-key --business ID")])
  }, 60_000)

  it("bad input and --help open no store: a missing DATA_DIR stays missing (it used to get a fresh database)", async () => {
    const missing = join(data.dir, "typo")
    const env = { DATA_DIR: missing }
    for (const args of [
      ["roll-key", "--mode", "live"],
      ["roll-key", "--business", "b", "--mode", "prod"],
      ["roll-webhook-secret", "--business", "b", "--expires-in", "soon"],
      ["create-business", "--name", ""],
      ["create-business", "--webhook-url", "http://example.com/hooks"]
    ]) {
      const outcome = await admin(args, env)
      expect([args.join(" "), outcome.code, outcome.stdout]).toEqual([args.join(" "), 2, ""])
      expect(outcome.stderr).toMatch(/"code":"validation_error"/)
      expect(existsSync(missing)).toBe(false)
    }
    // well-formed, but naming a business in a store that does not exist: not_found, and still nothing created
    for (const args of [
      ["roll-key", "--business", "b", "--mode", "live"],
      ["roll-webhook-secret", "--business", "b"]
    ]) {
      const outcome = await admin(args, env)
      expect([args.join(" "), outcome.code, outcome.stdout]).toEqual([args.join(" "), 2, ""])
      expect(outcome.stderr).toMatch(/"code":"not_found"/)
      expect(outcome.stderr).toContain("there is no store in DATA_DIR")
      expect(existsSync(missing)).toBe(false)
    }
    for (const command of ["create-business", "roll-key", "roll-webhook-secret"]) {
      for (const flag of ["--help", "-h"]) {
        const help = await admin([command, flag], env)
        expect([help.code, help.stderr]).toEqual([0, ""])
        expect(help.stdout).toContain(`xaalis-server ${command}`)
      }
    }
    expect(existsSync(missing)).toBe(false)
  }, 60_000)

  it("a store that cannot be opened: exit 1 and one line naming the cause, no stack trace", async () => {
    const file = join(data.dir, "not-a-directory")
    writeFileSync(file, "x")
    const outcome = await admin(["create-business"], { DATA_DIR: file })
    expect([outcome.code, outcome.stdout]).toEqual([1, ""])
    expect(outcome.stderr).toMatch(/^xaalis: create-business failed: .*EEXIST.*\n$/)
    expect(outcome.stderr).not.toMatch(/\n\s+at /)
  }, 30_000)
})
