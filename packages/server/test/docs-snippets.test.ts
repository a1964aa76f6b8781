import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

/**
 * The TypeScript blocks of the docs compile against the packages' real exports.
 * A block is checked when the line before its fence is `<!-- typecheck -->`,
 * or `<!-- typecheck: … -->` whose text is a prelude (hidden from readers) that
 * declares what the fragment takes as given (`declare const rawBody: string`).
 * Each block is its own module in one program, with the repository's compiler
 * options (tsconfig.base.json) and the `@xaalis/source` condition, so a renamed
 * function, option or field fails here before a reader copies it.
 */
const root = fileURLToPath(new URL("../../../", import.meta.url))
const documents = [
  "README.md",
  "docs/engine.md",
  "docs/http.md",
  "docs/operations.md",
  "docs/storage-embedded.md",
  "packages/testkit/README.md",
  "packages/webhooks/README.md",
  "examples/mounts/README.md"
]

interface Snippet {
  readonly where: string
  readonly file: string
  readonly text: string
}

const marker = /^<!-- typecheck(?::([\s\S]*?))? -->$/

const snippetsOf = (document: string): ReadonlyArray<Snippet> => {
  const lines = readFileSync(root + document, "utf8").split("\n")
  const found: Array<Snippet> = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ts\s*$/.test(lines[i] ?? "")) continue
    const end = lines.indexOf("```", i + 1)
    if (end < 0) throw new Error(`${document}:${i + 1}: a block that never ends`)
    // the marker is the line before the fence, or a comment of several lines ending there
    let start = i - 1
    while (start > 0 && !(lines[start] ?? "").startsWith("<!--") && (lines[start] ?? "").trim() !== "") start--
    const comment = lines.slice(start, i).join("\n")
    const match = marker.exec(comment)
    if (match !== null) {
      const prelude = match[1] ?? ""
      const body = lines.slice(i + 1, end).join("\n")
      const name = `${document.replace(/[^A-Za-z0-9]/g, "_")}_${i + 1}.ts`
      found.push({ where: `${document}:${i + 1}`, file: `${root}${name}`, text: `${prelude}\n${body}\nexport {}\n` })
    }
    i = end
  }
  return found
}

describe("the docs' TypeScript blocks", () => {
  const snippets = documents.flatMap(snippetsOf)

  it("are found (each document's marked blocks)", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(12)
  })

  it("typecheck against the packages' exports", { timeout: 60_000 }, () => {
    const config = ts.readConfigFile(`${root}tsconfig.base.json`, ts.sys.readFile)
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
    // a snippet may import a name it only mentions; everything else as in the packages
    const compilerOptions = { ...options, types: ["node"], noUnusedLocals: false, noUnusedParameters: false }
    const virtual = new Map(snippets.map((s) => [s.file, s.text]))
    const host = ts.createCompilerHost(compilerOptions)
    const getSourceFile = host.getSourceFile.bind(host)
    host.getSourceFile = (fileName, language, onError, fresh) => {
      const text = virtual.get(fileName)
      return text === undefined
        ? getSourceFile(fileName, language, onError, fresh)
        : ts.createSourceFile(fileName, text, language, true)
    }
    const fileExists = host.fileExists.bind(host)
    host.fileExists = (fileName) => virtual.has(fileName) || fileExists(fileName)
    const readFile = host.readFile.bind(host)
    host.readFile = (fileName) => virtual.get(fileName) ?? readFile(fileName)
    const program = ts.createProgram([...virtual.keys()], compilerOptions, host)
    const where = new Map(snippets.map((s) => [s.file, s.where]))
    const errors = ts.getPreEmitDiagnostics(program).map((d) => {
      const position =
        d.file === undefined || d.start === undefined ? "" : `:${d.file.getLineAndCharacterOfPosition(d.start).line}`
      const file = d.file === undefined ? "" : (where.get(d.file.fileName) ?? d.file.fileName)
      return `${file}${position} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
    })
    expect(errors).toEqual([])
  })
})
