/**
 * The request log: JSON Lines with the same text as before (`{time, ...fields}`),
 * written to stdout in one write per turn of the event loop, and nothing lost
 * when the process exits.
 */
import { execFileSync, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it, vi } from "vitest"
import { batchedStdout, jsonLines } from "../src/log.ts"

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe("jsonLines", () => {
  it("writes JSON.stringify({time, ...fields}) and a newline, whatever the fields", () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    vi.setSystemTime(new Date("2026-01-02T03:04:05.678Z"))
    const time = "2026-01-02T03:04:05.678Z"
    const lines: Array<string> = []
    const log = jsonLines((line) => lines.push(line))
    const samples: ReadonlyArray<Record<string, unknown>> = [
      {},
      { level: "info", msg: "request", method: "POST", path: '/v1/"x"\n', status: 201, duration_ms: 0.125 },
      { level: "error", nested: { a: [1, "b"] }, skipped: undefined },
      { time: "overridden", level: "info" }
    ]
    for (const fields of samples) log(fields)
    expect(lines).toEqual(samples.map((fields) => `${JSON.stringify({ time, ...fields })}\n`))
    for (const line of lines) expect(JSON.parse(line)).toBeTypeOf("object")
  })
})

describe("jsonLines time", () => {
  it("stamps each line with the time it is written, to the millisecond", () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    vi.setSystemTime(new Date("2026-01-02T03:04:05.678Z"))
    const lines: Array<string> = []
    const log = jsonLines((line) => lines.push(line))
    log({ n: 1 })
    log({ n: 2 })
    vi.setSystemTime(new Date("2026-01-02T03:04:05.679Z"))
    log({ n: 3 })
    vi.setSystemTime(new Date("2027-06-30T23:59:59.999Z"))
    log({ n: 4 })
    expect(lines.map((l) => (JSON.parse(l) as { time: string }).time)).toEqual([
      "2026-01-02T03:04:05.678Z",
      "2026-01-02T03:04:05.678Z",
      "2026-01-02T03:04:05.679Z",
      "2027-06-30T23:59:59.999Z"
    ])
  })
})

describe("batchedStdout", () => {
  it("writes the lines of one turn of the event loop in one write, at the end of the turn", async () => {
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true)
    const out = batchedStdout()
    expect(batchedStdout()).toBe(out) // one batch per process
    out("a\n")
    out("b\n")
    expect(write).not.toHaveBeenCalled()
    await new Promise((resolve) => setImmediate(resolve))
    expect(write.mock.calls).toEqual([["a\nb\n"]])
  })

  it("writes at once when 64 KiB are pending", () => {
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true)
    const out = batchedStdout()
    const big = `${"x".repeat(70_000)}\n`
    out(big)
    expect(write.mock.calls).toEqual([[big]])
  })

  it("loses no line when the process exits right after logging", () => {
    const module = fileURLToPath(new URL("../src/log.ts", import.meta.url))
    const script = `import { jsonLines } from ${JSON.stringify(module)}
const log = jsonLines()
for (let i = 0; i < 1000; i++) log({ level: "info", msg: "line", i })
process.exit(0)`
    const stdout = execFileSync(
      process.execPath,
      ["--conditions=@xaalis/source", "--disable-warning=ExperimentalWarning", "--input-type=module", "-e", script],
      { encoding: "utf8" }
    )
    const lines = stdout.trim().split("\n")
    expect(lines).toHaveLength(1000)
    expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(Array.from({ length: 1000 }, (_, i) => i))
  })

  it("survives a reader of stdout that goes away (EPIPE): lines dropped, one notice on stderr", async () => {
    const module = fileURLToPath(new URL("../src/log.ts", import.meta.url))
    const script = `import { jsonLines } from ${JSON.stringify(module)}
const log = jsonLines()
log({ level: "info", msg: "first" })
let i = 0
const timer = setInterval(() => {
  log({ level: "info", msg: "line", i: i++ })
  if (i === 100) { clearInterval(timer); process.stderr.write("still serving\\n") }
}, 5)`
    const child = spawn(
      process.execPath,
      ["--conditions=@xaalis/source", "--disable-warning=ExperimentalWarning", "--input-type=module", "-e", script],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let stderr = ""
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString()
    })
    // the reader takes the first line and goes away, as `| head -1` does
    child.stdout.once("data", () => child.stdout.destroy())
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
    expect(stderr).not.toContain("Unhandled 'error' event")
    expect([code, stderr]).toEqual([0, expect.stringMatching(/stdout failed \(EPIPE\)[\s\S]*still serving/)])
  }, 20_000)
})
