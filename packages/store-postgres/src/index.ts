/**
 * @xaalis/store-postgres: the engine's Store on PostgreSQL, for deployments
 * with several API processes sharing one database.
 *
 * ```ts
 * import { PostgresStore } from "@xaalis/store-postgres"
 * const store = PostgresStore.layer({ connectionString: process.env.DATABASE_URL!, schema: "xaalis" })
 * ```
 */
export * as Migrations from "./Migrations.ts"
export * as PostgresStore from "./PostgresStore.ts"
export * as RateBuckets from "./RateBuckets.ts"
