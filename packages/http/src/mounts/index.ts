/**
 * Mounts of the xaalis fetch handler in Node servers and web frameworks. The
 * handler itself needs no adapter in fetch runtimes (Bun, Deno, Workers). The
 * Fastify plugin is the subpath `@xaalis/http/fastify`.
 */
export { bodyConsumedHint, type XaalisExpressMiddleware, type XaalisExpressOptions, xaalisExpress } from "./Express.ts"
export { type MountHonoOptions, mountHono } from "./Hono.ts"
export { defaultPaths as mountedPaths } from "./internal.ts"
export { answerClientError, answerClientErrors, type NodeListenerOptions, toNodeListener } from "./NodeListener.ts"
