import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: { compilerOptions: { allowImportingTsExtensions: true, noEmit: false, emitDeclarationOnly: true } },
  tsconfig: "tsconfig.src.json",
  sourcemap: true,
  clean: true,
  target: "es2023",
  // The suite runs inside the adopter's own vitest and fast-check; never bundle them.
  external: ["vitest", "fast-check", "effect", "@xaalis/engine", "@xaalis/core"]
})
