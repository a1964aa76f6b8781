/**
 * @xaalis/store-sqlite: the embedded durable Store of the xaalis engine, one
 * SQLite file through Node's built-in `node:sqlite` (no server, no setup).
 *
 * ```ts
 * import { SqliteStore } from "@xaalis/store-sqlite"
 * const store = SqliteStore.layerFromDataDir(process.env.DATA_DIR ?? "./data") // <DATA_DIR>/xaalis.sqlite
 * ```
 */
export * as Migrations from "./Migrations.ts"
export { SchemaTooNew } from "./Migrations.ts"
export type { SqliteStoreOptions } from "./SqliteStore.ts"
export * as SqliteStore from "./SqliteStore.ts"
