/**
 * `@xaalis/http/fastify`: the fetch handler as a Fastify plugin. A subpath of its
 * own, so that the main entry's types never name Fastify's: a project without
 * Fastify (an optional peer dependency) typechecks the main entry without it.
 *
 * @example
 * import { xaalisFastify } from "@xaalis/http/fastify"
 * await app.register(xaalisFastify, { handler: api.fetch })
 */
export { type XaalisFastifyOptions, xaalisFastify } from "./mounts/Fastify.ts"
