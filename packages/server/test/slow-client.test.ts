/**
 * A client that holds a connection by sending its request a byte at a time is
 * answered and cut off after `headersTimeout` (10 s), not node's 60 s (300 s
 * for a slow body): many such clients would otherwise hold the server's
 * connections and file descriptors for minutes.
 */
import { describe, expect, it } from "vitest"
import { rawConnection, startServerProcess, tempDataDir } from "./harness.ts"

describe("slow clients", () => {
  it("headers trickling in a byte a second get 400 'took too long' and the connection closed", {
    timeout: 40_000
  }, async () => {
    const data = tempDataDir()
    const server = await startServerProcess({ STORE: "memory" }, data.dir)
    try {
      const { socket, received, closed } = await rawConnection(server.url)
      const request = `GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\nX-Slow: ${"a".repeat(60)}\r\n\r\n`
      let sent = 0
      const trickle = setInterval(() => {
        if (socket.writable && sent < request.length) socket.write(request[sent++] as string)
      }, 1_000)
      await closed
      clearInterval(trickle)
      // it was cut before the request was complete (about 10 of its 80 bytes), and told why
      expect(sent).toBeLessThan(request.length)
      const got = received()
      expect(got).toMatch(/^HTTP\/1\.1 400 /)
      expect(JSON.parse(got.slice(got.indexOf("\r\n\r\n") + 4))).toEqual({
        error: { message: "The request took too long to arrive.", code: "validation_error" }
      })
    } finally {
      await server.stop("SIGKILL")
      data.cleanup()
    }
  })
})
