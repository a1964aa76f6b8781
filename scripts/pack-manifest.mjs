// The manifest a package is packed with: its package.json without the `@xaalis/source` export
// condition, which points workspace consumers at src/ (decisions: "published consumers get dist/").
// Left in a published package, a consumer who runs `node --conditions=@xaalis/source` (as the
// examples do) loads node_modules/@xaalis/*/src/*.ts, which Node refuses to strip types from
// (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING), and a bundler or tsc given the condition reads
// the sources instead of the build. The packed manifest also leaves out `scripts` (workspace only).
// Every package's prepack runs `node ../../scripts/pack-manifest.mjs strip` and its postpack
// `... restore`, in the package's folder; `strip` after an interrupted pack restores first. Its
// prepublishOnly runs `... refuse-publish`: npm publish in the folder would send the registry the
// manifest read after postpack (the original); scripts/publish.sh publishes the tarballs instead.
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
} else if (command === "refuse-publish") {
  // prepublishOnly: `npm publish` in a package's folder would send the registry the restored manifest
  console.error(
    "Publish from the packed tarballs: npm run build && npm run release -- [options] (scripts/publish.sh).\n" +
      "npm publish in a package's folder would record the workspace-only @xaalis/source condition on the registry."
  )
  process.exit(1)
} else {
  console.error("usage: node pack-manifest.mjs strip|restore|refuse-publish (in a package's folder)")
  process.exit(2)
}
