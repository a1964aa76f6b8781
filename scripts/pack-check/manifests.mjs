// The installed packages as a consumer gets them: each carries its LICENSE and shares the consumer's
// effect (a peer dependency); every file that `exports`,
// `main`, `module`, `types` and `bin` name is there; no `@xaalis/source` condition is left (it points
// at src/*.ts, which Node will not run from node_modules); and every bare import of dist/ is a
// dependency or peer dependency the package declares (or a node: builtin).
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { join } from "node:path"

const problems = []
const names = ["core", "engine", "http", "webhooks", "store-sqlite", "store-postgres", "server", "testkit"]
for (const name of names) {
  const dir = join("node_modules", "@xaalis", name)
  const text = readFileSync(join(dir, "package.json"), "utf8")
  const manifest = JSON.parse(text)
  if (!existsSync(join(dir, "LICENSE"))) problems.push(`@xaalis/${name}: no LICENSE file in the package`)
  // effect is a peer: the consumer's own copy serves every package (two copies would make two
  // incompatible sets of Effect types, and layers built with one would not typecheck with the other)
  // (the server, an application with a bin, depends on it with the same range: it must start even where
  // peers are not installed, yarn v1 or --legacy-peer-deps, and npm dedupes it with the peers)
  if (name !== "server" && manifest.dependencies?.effect !== undefined)
    problems.push(`@xaalis/${name}: effect must be a peer dependency, not a dependency`)
  if (existsSync(join(dir, "node_modules", "effect")))
    problems.push(`@xaalis/${name}: installed its own copy of effect`)
  if (text.includes("@xaalis/source"))
    problems.push(`@xaalis/${name}: package.json still names the @xaalis/source condition`)
  const targets = (value, where) => {
    if (typeof value === "string") {
      if (!existsSync(join(dir, value))) problems.push(`@xaalis/${name}: ${where} -> ${value} is missing`)
    } else if (value !== null && typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) targets(inner, `${where}.${key}`)
    }
  }
  for (const field of ["exports", "main", "module", "types", "bin"]) targets(manifest[field], field)
  const declared = new Set([
    manifest.name,
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {})
  ])
  const dist = join(dir, "dist")
  for (const file of readdirSync(dist).filter((f) => /\.(js|cjs|d\.ts|d\.cts)$/.test(f))) {
    const code = readFileSync(join(dist, file), "utf8")
    for (const [, specifier] of code.matchAll(
      /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)["'](@?[a-z][\w./-]*)["']/gm
    )) {
      if (specifier.startsWith("node:") || builtinModules.includes(specifier)) continue
      const bare = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]
      if (!declared.has(bare))
        problems.push(`@xaalis/${name}: dist/${file} imports ${specifier}, not a declared dependency`)
    }
  }
}
if (problems.length > 0) {
  console.error(`pack-check manifests:\n  ${[...new Set(problems)].join("\n  ")}`)
  process.exit(1)
}
console.log("pack-check manifests: ok")
