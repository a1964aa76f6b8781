/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by
 * function and by package, as shares of the profile's samples.
 *
 * node packages/server/bench/cpuprofile-summary.ts <file.cpuprofile> [top=40]
 * (INCLUSIVE_MATCH=<regexp>: restrict the inclusive-time list to matching functions/files)
 */
import { readFileSync } from "node:fs"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const [file, topArg] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: cpuprofile-summary.ts <file.cpuprofile> [top]")
const top = Number(topArg ?? 40)
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const self = new Map<number, number>()
profile.samples.forEach((id, i) => {
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
})
const total = [...self.values()].reduce((a, b) => a + b, 0)

/** The package a script belongs to: a workspace package, a dependency, node's own code, or V8. */
const packageOf = (url: string): string => {
  if (url === "") return "(v8/native)"
  if (url.startsWith("node:")) return "node:internal"
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (dep?.[1] !== undefined) return dep[1]
  const ws = /\/(packages|examples)\/([^/]+)\//.exec(url)
  if (ws?.[2] !== undefined) return `@xaalis/${ws[2]}`
  return url
}
const shortUrl = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|packages)\//, "$1/")

const byFunction = new Map<string, number>()
const byPackage = new Map<string, number>()
for (const [id, t] of self) {
  const n = byId.get(id)
  if (n === undefined) continue
  const { functionName, url, lineNumber } = n.callFrame
  const fn = `${functionName || "(anonymous)"} ${url === "" ? "" : `${shortUrl(url)}:${lineNumber + 1}`}`
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + t)
  const pkg = packageOf(url)
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + t)
}

// inclusive ("total") time: every function on a sample's stack, counted once per sample
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const inclusive = new Map<string, number>()
const keyOf = (n: ProfileNode) =>
  `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url === "" ? "" : `${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`}`
for (const [id, t] of self) {
  const seen = new Set<string>()
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const n = byId.get(at)
    if (n !== undefined) seen.add(keyOf(n))
  }
  for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + t)
}

const pct = (t: number) => `${((t / total) * 100).toFixed(1).padStart(5)}%`
const print = (title: string, m: Map<string, number>, n: number) => {
  console.log(`\n${title}`)
  for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${pct(t)}  ${k}`)
}
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`)
print("self time by package", byPackage, 30)
print(`self time by function (top ${top})`, byFunction, top)
const only = process.env.INCLUSIVE_MATCH
print(
  `inclusive time by function (top ${top}${only === undefined ? "" : `, matching ${only}`})`,
  new Map([...inclusive].filter(([k]) => only === undefined || new RegExp(only).test(k))),
  top
)
