// Typechecked against the packed packages' declarations (skipLibCheck off), as an ESM consumer.
import { type Conversion, Decimal, Quote } from "@xaalis/core"
import { createEngine, MemoryStore } from "@xaalis/engine"
import { type HttpApiOptions, makeHttpApi, toNodeListener, xaalisExpress } from "@xaalis/http"
import { startServer } from "@xaalis/server"
import { PostgresStore } from "@xaalis/store-postgres"
import { SqliteStore } from "@xaalis/store-sqlite"
import { engineModelSuite, financeLawSuite, storeConformance } from "@xaalis/testkit"
import { verify } from "@xaalis/webhooks"

const rate = Decimal.parse("70") as Decimal.Decimal
const options: HttpApiOptions = { sandbox: true, store: MemoryStore.layer }
export const api = makeHttpApi(options)
export const engine = createEngine({ sandbox: { rate } })
export const listener = toNodeListener(api.fetch)
export const middleware = xaalisExpress(api.fetch)
export type Stored = Conversion.Conversion
export { engineModelSuite, financeLawSuite, PostgresStore, Quote, SqliteStore, startServer, storeConformance, verify }
