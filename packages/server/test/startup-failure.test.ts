import { describe, expect, it } from "vitest"
import { startServerProcess, tempDataDir } from "./harness.ts"

describe("a server that cannot start", () => {
  it("exits 1 and says why on stderr, with the store's cause (the address it could not reach)", async () => {
    const data = tempDataDir()
    try {
      // port 1 on loopback: nothing listens there, the connection is refused at once
      await expect(startServerProcess({ DATABASE_URL: "postgres://127.0.0.1:1/x" }, data.dir)).rejects.toThrow(
        /server exited with 1 before listening: xaalis: could not start: PostgresStore: .*unreachable.* \(cause: connect ECONNREFUSED 127\.0\.0\.1:1\)/
      )
    } finally {
      data.cleanup()
    }
  })
})
