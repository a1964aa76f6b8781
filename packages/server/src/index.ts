/**
 * @xaalis/server: the reference server (decisions §9). `npm start` at the
 * repository root runs `src/main.ts`; `startServer` embeds it in a process of
 * your own (tests, custom entry points).
 */
export { ConfigError, defaults, fromEnv, type ServerConfig } from "./config.ts"
export { batchedStdout, jsonLines, type LogLine } from "./log.ts"
export { type RunningServer, startServer, tick_ms } from "./server.ts"
export { storeLayer } from "./store.ts"
