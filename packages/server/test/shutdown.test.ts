/**
 * A graceful stop while clients keep every keep-alive connection busy (the next
 * request written the moment an answer arrives, as load generators and proxies
 * do). Before, the server kept answering them for as long as they kept sending:
 * SIGTERM under a minute-long load stopped it only when the load ended (here,
 * the test's 30 s timeout). Now the answers after the stop began say
 * `Connection: close`, the clients move away, and the server exits while the
 * load is still running.
 */
import { spawn } from "node:child_process"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { describe, expect, it, vi } from "vitest"
import { call, rawConnection, startServerProcess, tempDataDir } from "./harness.ts"

const autocannonCli = createRequire(import.meta.url).resolve("autocannon")

describe("graceful stop", () => {
  it("on SIGTERM under keep-alive load, exits while the load goes on", { timeout: 30_000 }, async () => {
    const data = tempDataDir()
    const server = await startServerProcess({ RATE_LIMIT_RPS: "0" }, data.dir)
    const load = spawn(
      process.execPath,
      [autocannonCli, "-c", "10", "-d", "60", "-H", "authorization=Bearer none", `${server.url}/v1/balance`],
      { stdio: "ignore" }
    )
    try {
      await new Promise((r) => setTimeout(r, 1_500))
      expect(await server.stop("SIGTERM")).toBe(0)
      expect(load.exitCode).toBeNull() // the load was still running
      expect(server.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true)
    } finally {
      load.kill("SIGKILL")
      await server.stop("SIGKILL")
      data.cleanup()
    }
  })

  it("on SIGTERM with a backlog of due webhooks to a slow receiver, exits after the attempts in flight; the next start sends the rest", {
    timeout: 60_000
  }, async () => {
    // a receiver that answers after 1.5 s, then at once once the server has stopped
    let delay = 1_500
    const ids = new Set<string>()
    let received = 0
    const receiver = createServer((req, res) => {
      received += 1
      ids.add(String(req.headers["webhook-id"]))
      req.resume()
      setTimeout(() => res.end("ok"), delay)
    })
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()))
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
    const data = tempDataDir()
    let server = await startServerProcess({ RATE_LIMIT_RPS: "0" }, data.dir)
    try {
      const biz = (await call(server.url, "POST", "/v1/test_helpers/businesses", { body: {} })).body
      for (let i = 0; i < 60; i++) {
        const created = await call(server.url, "POST", "/v1/payments", {
          key: biz.secret_key_test,
          body: { data: { amount: 100 + i, callback_url: hook } }
        })
        expect(created.status).toBe(201)
      }
      // the background loop's dispatch has its eight attempts out
      await vi.waitFor(() => expect(received).toBeGreaterThanOrEqual(8), { timeout: 10_000, interval: 20 })
      expect(await server.stop("SIGTERM")).toBe(0)
      // the attempts in flight finished; the backlog (eight at a time, 1.5 s each: 11 s more) did not hold the stop
      const atStop = received
      expect(atStop).toBeLessThan(60)
      delay = 0
      server = await startServerProcess({ RATE_LIMIT_RPS: "0" }, data.dir)
      await vi.waitFor(() => expect(ids.size).toBe(60), { timeout: 30_000, interval: 50 })
    } finally {
      await server.stop("SIGKILL")
      receiver.closeAllConnections()
      receiver.close()
      data.cleanup()
    }
  })

  it("an answer given after the stop began says Connection: close", { timeout: 30_000 }, async () => {
    const data = tempDataDir()
    const server = await startServerProcess({ RATE_LIMIT_RPS: "0" }, data.dir)
    try {
      // one connection, kept busy: the first answer arrives, the stop begins, the second request is on its way
      const { socket, received, closed } = await rawConnection(server.url)
      const request = "GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n"
      // a slow request: its headers now, the stop, then the end of its headers
      socket.write(request.slice(0, 20))
      await new Promise((r) => setTimeout(r, 200))
      const stopped = server.stop("SIGTERM")
      // the rest of the request only once the stop has begun, however long a loaded machine takes to get there
      await vi.waitFor(() => expect(server.lines.some((l) => l.includes('"msg":"shutting down"'))).toBe(true), {
        timeout: 10_000,
        interval: 20
      })
      socket.write(request.slice(20))
      await closed
      expect(await stopped).toBe(0)
      const got = received()
      const head = got.slice(0, got.indexOf("\r\n\r\n")).toLowerCase()
      expect(head).toMatch(/^http\/1\.1 200 /)
      expect(head).toContain("connection: close")
    } finally {
      await server.stop("SIGKILL")
      data.cleanup()
    }
  })
})
