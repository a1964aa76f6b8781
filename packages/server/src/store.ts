import { MemoryStore, type Store } from "@xaalis/engine"
import { PostgresStore } from "@xaalis/store-postgres"
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
