/**
 * The dependency rule, checked by a test rather than by hope: nothing in
 * packages/core/src does I/O, reads a clock, draws randomness or touches global
 * state. It may import only its own modules and `effect`.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const SRC = join(import.meta.dirname, "..", "src")

const files = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

/** Removes comments so that prose mentioning `Date` does not count. */
const stripComments = (code: string): string =>
  code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1")

const ALLOWED_IMPORT = /^(\.{1,2}\/|effect$|effect\/)/

const FORBIDDEN: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bDate\b/, "the global Date (a clock): take `now` as an argument"],
  [/\bMath\.random\b/, "Math.random: take randomness from the caller"],
  [/\bperformance\.now\b|\bprocess\b|\bglobalThis\b|\bsetTimeout\b|\bsetInterval\b/, "runtime globals"],
  [/\bcrypto\b|\bfetch\s*\(|\brequire\s*\(/, "I/O or platform APIs"],
  [/\bimport\s*\(/, "dynamic import"]
]

export const violations = (path: string, source: string): Array<string> => {
  const code = stripComments(source)
  const found: Array<string> = []
  for (const m of code.matchAll(/\bfrom\s+["']([^"']+)["']|\bimport\s+["']([^"']+)["']/g)) {
    const spec = m[1] ?? m[2] ?? ""
    if (!ALLOWED_IMPORT.test(spec))
      found.push(`${path}: imports "${spec}" (core may import only its own modules and effect)`)
    if (/\/(adapters?|engine|http|server|node)\b/.test(spec)) found.push(`${path}: imports an adapter "${spec}"`)
  }
  for (const [re, why] of FORBIDDEN) if (re.test(code)) found.push(`${path}: uses ${why}`)
  return found
}

describe("core purity", () => {
  it("no file of packages/core/src imports node built-ins or adapters, or calls Date / Math.random", () => {
    const all = files(SRC)
    expect(all.length).toBeGreaterThan(5)
    const found = all.flatMap((f) => violations(relative(SRC, f), readFileSync(f, "utf8")))
    expect(found).toEqual([])
  })

  it("the check itself catches each kind of violation", () => {
    expect(violations("x.ts", `import { readFileSync } from "node:fs"`)).toHaveLength(1)
    expect(violations("x.ts", `import pg from "pg"`)).toHaveLength(1)
    expect(violations("x.ts", `import { Store } from "../adapters/memory.ts"`)).toHaveLength(1)
    expect(violations("x.ts", `const t = Date.now()`)).toHaveLength(1)
    expect(violations("x.ts", `const d = new Date(0)`)).toHaveLength(1)
    expect(violations("x.ts", `const r = Math.random()`)).toHaveLength(1)
    expect(violations("x.ts", `const e = process.env.X`)).toHaveLength(1)
    expect(violations("x.ts", `// Date is fine in a comment\nconst x = 1`)).toEqual([])
    expect(violations("x.ts", `import { Result } from "effect"\nimport * as D from "./money/Decimal.ts"`)).toEqual([])
  })
})
