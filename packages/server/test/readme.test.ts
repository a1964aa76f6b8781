import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

const root = new URL("../../../", import.meta.url)
const read = (path: string) => readFileSync(new URL(path, root), "utf8")

describe("the README", () => {
  it("starts with the install-and-start command and the test command that CI runs", () => {
    const readme = read("README.md")
    const ci = read(".ci/run")
    const firstBlock = readme.slice(readme.indexOf("```sh"), readme.indexOf("```", readme.indexOf("```sh") + 5))
    expect(firstBlock).toContain("npx -y -p node@24 -- npm ci && npm start")
    expect(firstBlock).toContain("npm test")
    expect(ci).toContain("npx -y -p node@24 -- npm ci")
    expect(ci).toMatch(/npm start/)
    expect(ci).toContain("npm test")
    expect(ci).toContain("scripts/curl-session.sh")
  })

  it("shows the curl session exactly as scripts/curl-session.sh runs it", () => {
    const script = read("scripts/curl-session.sh")
    const steps = script.slice(script.indexOf("# 1.")).trimEnd()
    expect(read("README.md")).toContain(steps)
  })

  it("approves in allowScripts every locked package with an install script (npm 12 blocks the others)", () => {
    // npm ≥ 12 skips unapproved install scripts: without node's preinstall the
    // node@24 devDependency has no binary and `npm run` falls back to the system Node.
    const lock = JSON.parse(read("package-lock.json")) as {
      packages: Record<string, { hasInstallScript?: boolean }>
    }
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length))
    const allowed = (JSON.parse(read("package.json")) as { allowScripts?: Record<string, boolean> }).allowScripts ?? {}
    expect(withScripts).toContain("node")
    for (const name of withScripts) expect(allowed[name], name).toBe(true)
  })
})
