import { once } from "node:events"
import { type AddressInfo, connect, createServer, type Socket } from "node:net"

/** The server's ReadyForQuery message when idle ('Z', length 5, 'I'): the end of a connection's handshake. */
const readyForQuery = Buffer.from([0x5a, 0, 0, 0, 5, 0x49])

/**
 * A TCP relay to PostgreSQL that can go silent: from `silence()` on, nothing
 * passes either way and nothing is closed (a network partition: no reset, so
 * no error either), until `resume()`; what was sent meanwhile is lost, as
 * packets dropped by a partition are (the connections that were open are then
 * out of step with their server). `url` is `target` through the relay.
 */
export const silentRelay = async (target: string) => {
  const to = new URL(target)
  const sockets = new Set<Socket>()
  let silent = false
  let silentOnceReady = false
  const server = createServer((client) => {
    const upstream = connect(Number(to.port || 5432), to.hostname)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("error", () => undefined)
      s.on("close", () => sockets.delete(s))
    }
    client.on("data", (d) => {
      if (!silent) upstream.write(d)
    })
    upstream.on("data", (d) => {
      if (silent) return
      client.write(d)
      if (silentOnceReady && d.includes(readyForQuery)) silent = true
    })
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const url = new URL(target)
  url.hostname = "127.0.0.1"
  url.port = String((server.address() as AddressInfo).port)
  return {
    url: url.toString(),
    silence: () => {
      silent = true
    },
    /** Goes silent once a connection is ready for its first query (after the handshake): a connect succeeds, the first statement waits. */
    silenceOnceConnected: () => {
      silentOnceReady = true
    },
    resume: () => {
      silent = false
    },
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise((r) => server.close(r))
    }
  }
}
