import { defineConfig, type Options } from "tsup"

/**
 * How every package builds: ESM + CJS + `.d.ts` from `src/index.ts`, the
 * declarations checked against the other packages' dist (`tsconfig.src.json`
 * clears the `@xaalis/source` condition), `node:` imports kept as written
 * (`node:sqlite` has no bare name). A package passes only what differs.
 */
export const packageConfig = (overrides: Options = {}) =>
  defineConfig({
    entry: ["src/index.ts"],
    format: ["esm", "cjs"],
    dts: { compilerOptions: { allowImportingTsExtensions: true, noEmit: false, emitDeclarationOnly: true } },
    tsconfig: "tsconfig.src.json",
    sourcemap: true,
    clean: true,
    target: "es2023",
    removeNodeProtocol: false,
    ...overrides
  })
