import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: { compilerOptions: { allowImportingTsExtensions: true, noEmit: false, emitDeclarationOnly: true } },
  tsconfig: "tsconfig.src.json",
  sourcemap: true,
  clean: true,
  target: "es2023",
  // `node:sqlite` exists only under its `node:` name (there is no bare `sqlite` built-in)
  removeNodeProtocol: false
})
