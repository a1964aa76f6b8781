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
})
