import { packageConfig } from "../../tsup.base.ts"

// The suite runs inside the adopter's own vitest and fast-check; never bundle them.
export default packageConfig({ external: ["vitest", "fast-check", "effect", "@xaalis/engine", "@xaalis/core"] })
