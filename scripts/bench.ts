/**
 * `npm run bench`: every benchmark of the repository, one after the other, each
 * in its own process (so one's heap and JIT state never colour the next), then
 * a summary of their verdict lines (the lines that name a target).
 *
 * npm run bench                    # all of them
 * npm run bench -- server sqlite   # only these (core, engine, sqlite, one-address, postgres, server)
 *
 * Exits non-zero when a benchmark crashed or failed (a benchmark that ran but
 * missed its target prints NOT MET and still exits 0: the figures are the result).
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

const benches = [
  { name: "core", file: "packages/core/bench/kernels.bench.ts" },
  { name: "engine", file: "packages/engine/bench/transfers.bench.ts" },
  { name: "sqlite", file: "packages/store-sqlite/bench/transfers.bench.ts" },
  { name: "one-address", file: "packages/store-sqlite/bench/one-address.bench.ts" },
  { name: "postgres", file: "packages/store-postgres/bench/transfers.bench.ts" },
  { name: "server", file: "packages/server/bench/http.bench.ts" }
] as const

const wanted = process.argv.slice(2)
const unknown = wanted.filter((w) => !benches.some((b) => b.name === w))
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(", ")}; choose from ${benches.map((b) => b.name).join(", ")}`)
  process.exit(2)
}
const chosen = wanted.length === 0 ? benches : benches.filter((b) => wanted.includes(b.name))

/** Runs one benchmark with its output passed through; resolves with its exit code and its verdict lines. */
const run = (file: string) =>
  new Promise<{ readonly code: number; readonly verdicts: ReadonlyArray<string> }>((resolve) => {
    const child = spawn(
      process.execPath,
      ["--disable-warning=ExperimentalWarning", "--conditions=@xaalis/source", file],
      { cwd: root, stdio: ["ignore", "pipe", "inherit"] }
    )
    let text = ""
    child.stdout.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk)
      text += chunk.toString("utf8")
    })
    child.once("error", (e) => {
      console.error(`${file}: ${e.message}`)
      resolve({ code: 1, verdicts: [] })
    })
    child.once("close", (code, signal) =>
      resolve({
        code: code ?? (signal === null ? 1 : 128),
        verdicts: text.split("\n").filter((line) => line.includes("(target"))
      })
    )
  })

const failed: Array<string> = []
const summary: Array<string> = []
for (const bench of chosen) {
  const { code, verdicts } = await run(bench.file)
  if (code !== 0) failed.push(`${bench.name} (exit ${code})`)
  summary.push(
    `${bench.name}:`,
    ...(verdicts.length === 0 ? ["  (no verdict printed)"] : verdicts.map((v) => `  ${v.trim()}`))
  )
}
console.log(`\nbench summary\n${summary.join("\n")}`)
if (failed.length > 0) {
  console.error(`failed: ${failed.join(", ")}`)
  process.exitCode = 1
}
