/**
 * @xaalis/http: the whole HTTP API of xaalis (decisions §7 and §9) as one
 * web-standard fetch handler (`Request -> Response`), generated from one route
 * table that also yields the OpenAPI 3.1 document and the `/docs` page.
 */

export {
  check_timeout_ms,
  type FetchHandler,
  type HealthCheck,
  type HttpApi,
  type HttpApiOptions,
  type HttpFault,
  internal_error_message,
  liveUrlRefusal,
  makeHttpApi,
  type RequestLog
} from "./HttpApi.ts"
export * as HttpHeaders from "./headers.ts"
export * from "./mounts/index.ts"
export * from "./notifier/index.ts"
export { type OpenApiOptions, openApiDocument } from "./openapi.ts"
export * as RateLimiter from "./RateLimiter.ts"
export type { Auth, Caller, Method, Route } from "./Route.ts"
export { routes, routesFor } from "./routes.ts"
export { type DueLoop, runDueEvery } from "./schedule.ts"
export * as Schemas from "./schemas.ts"
