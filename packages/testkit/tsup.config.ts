import { packageConfig } from "../../tsup.base.ts"

// The suite runs inside the adopter's own vitest and fast-check; never bundle them. ESM only:
// vitest cannot be require()d, so a CommonJS build of the suites could never load.
export default packageConfig({
  format: ["esm"],
  external: ["vitest", "fast-check", "effect", "@xaalis/engine", "@xaalis/core"]
})
