import { join, resolve } from "node:path"
import type { ServerConfig } from "./config.ts"

/**
 * Before `npm start` ran from the root, it ran in `packages/server`, so the
 * default `./.data` was `packages/server/.data`. When the default directory has
 * no database yet and that old one exists, says where the data went and how to
 * keep it (nothing is moved: the operator decides).
 */
export const legacyDataHint = (o: {
  readonly dataDirDefaulted: boolean
  readonly store: ServerConfig["store"]
  /** Where the old default put the database. */
  readonly legacy: string
  readonly exists: (path: string) => boolean
}): string | undefined => {
  if (!o.dataDirDefaulted || o.store.kind !== "embedded") return undefined
  const current = resolve(join(o.store.dataDir, "xaalis.sqlite"))
  if (current === resolve(o.legacy) || o.exists(current) || !o.exists(o.legacy)) return undefined
  return `no database in ${o.store.dataDir} yet, but an earlier npm start kept one in ${resolve(o.legacy, "..")}: stop the server and move that directory to ${resolve(o.store.dataDir)} to keep its data, or set DATA_DIR to it`
}
