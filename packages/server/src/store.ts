import { MemoryStore, type Store } from "@xaalis/engine"
import { RateLimiter } from "@xaalis/http"
import { PostgresStore, RateBuckets } from "@xaalis/store-postgres"
import { SqliteStore } from "@xaalis/store-sqlite"
import type { Layer } from "effect"
import type { ServerConfig } from "./config.ts"

/** The Store of the configured kind: embedded SQLite under DATA_DIR (default), PostgreSQL, or memory. */
export const storeLayer = (store: ServerConfig["store"]): Layer.Layer<Store, unknown> => {
  switch (store.kind) {
    case "embedded":
      return SqliteStore.layerFromDataDir(store.dataDir)
    case "postgres":
      return PostgresStore.layer({ connectionString: store.url })
    case "memory":
      return MemoryStore.layer
  }
}

/**
 * The rate limiter for the configured store: on PostgreSQL, buckets in the
 * database shared by every server on it (one limit per key for the whole
 * deployment); otherwise none here, and the API keeps its buckets in memory
 * (one process per embedded store is the reference server's way to run).
 * While the database does not answer, a request is counted in the process's
 * own bucket, and `onUnavailable` is told.
 */
export const rateLimiterLayer = (
  store: ServerConfig["store"],
  rateLimit: ServerConfig["rateLimit"],
  onUnavailable: (error: unknown) => void
): Layer.Layer<RateLimiter.RateLimiter, unknown> | undefined =>
  store.kind === "postgres" && rateLimit !== false
    ? RateLimiter.layerShared({ ...rateLimit, onUnavailable }, RateBuckets.make({ connectionString: store.url }))
    : undefined
