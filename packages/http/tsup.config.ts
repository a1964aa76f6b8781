import { packageConfig } from "../../tsup.base.ts"

// `@xaalis/http/fastify` is an entry of its own: only it names Fastify's types.
export default packageConfig({ entry: ["src/index.ts", "src/fastify.ts"] })
