import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts", "src/main.ts"],
  format: ["esm", "cjs"],
  dts: { compilerOptions: { allowImportingTsExtensions: true, noEmit: false, emitDeclarationOnly: true } },
  tsconfig: "tsconfig.src.json",
  sourcemap: true,
  clean: true,
  target: "es2023"
})
