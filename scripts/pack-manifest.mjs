// The manifest a package is packed with: its package.json without the `@xaalis/source` export
// condition, which points workspace consumers at src/ (decisions: "published consumers get dist/").
// Left in a published package, a consumer who runs `node --conditions=@xaalis/source` (as the
// examples do) loads node_modules/@xaalis/*/src/*.ts, which Node refuses to strip types from
// (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING), and a bundler or tsc given the condition reads
// the sources instead of the build. The packed manifest also leaves out `scripts` (workspace only).
// Every package's prepack runs `node ../../scripts/pack-manifest.mjs strip` and its postpack
// `... restore`, in the package's folder; `strip` after an interrupted pack restores first.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"

const condition = "@xaalis/source"
const backup = "package.json.workspace"

const withoutCondition = (value) =>
  typeof value === "object" && value !== null
    ? Object.fromEntries(
        Object.entries(value)
          .filter(([key]) => key !== condition)
          .map(([key, inner]) => [key, withoutCondition(inner)])
      )
    : value

const command = process.argv[2]
if (command === "strip") {
  if (existsSync(backup)) renameSync(backup, "package.json")
  const text = readFileSync("package.json", "utf8")
  const manifest = JSON.parse(text)
  writeFileSync(backup, text)
  // nor its scripts: all of them are for the workspace (build, this pack step, the server's `start`
  // from src/ under the condition); none runs when a consumer installs the package
  const { scripts: _scripts, ...rest } = manifest
  const packed = { ...rest, exports: withoutCondition(manifest.exports) }
  writeFileSync("package.json", `${JSON.stringify(packed, null, 2)}\n`)
} else if (command === "restore") {
  if (existsSync(backup)) renameSync(backup, "package.json")
} else {
  console.error("usage: node pack-manifest.mjs strip|restore (in a package's folder)")
  process.exit(2)
}
