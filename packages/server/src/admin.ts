/**
 * The operator's commands of the reference server, run against the store the
 * server uses (the same environment: DATA_DIR, DATABASE_URL, STORE, SANDBOX),
 * while it runs or not:
 *
 *   xaalis-server create-business [--name NAME] [--webhook-url URL]
 *   xaalis-server roll-key --business ID --mode test|live [--expires-in SECONDS]
 *   xaalis-server roll-webhook-secret --business ID [--expires-in SECONDS]
 *
 * Each prints one JSON object on stdout (secret keys are shown once, as at
 * creation) and exits 0; bad input prints the catalogue error on stderr and
 * exits 2, changing nothing (checked before the store is opened); `--help`
 * prints the usage and exits 0; a store that cannot be used exits 1. They
 * exist because none has an HTTP operation outside the sandbox: business
 * creation is a sandbox helper, and a key or a webhook secret must never be
 * able to roll itself.
 */
import { statSync } from "node:fs"
import { parseArgs } from "node:util"
import { DomainError, decodeRequest, Requests } from "@xaalis/core"
import { Businesses, type Ids, IdsAdapter, SandboxClock, type Store, type StoreError } from "@xaalis/engine"
import { liveUrlRefusal } from "@xaalis/http"
import { SqliteStore } from "@xaalis/store-sqlite"
import { Cause, Effect, Exit, Layer, Result } from "effect"
import type { ServerConfig } from "./config.ts"
import { messages } from "./log.ts"
import { storeLayer } from "./store.ts"

export const commands = ["create-business", "roll-key", "roll-webhook-secret"] as const
export type Command = (typeof commands)[number]

export const isCommand = (word: string | undefined): word is Command => commands.includes(word as Command)

export interface AdminOutcome {
  /** 0 done, 2 refused (bad arguments or a catalogue error), 1 a fault (the store could not be used). */
  readonly code: 0 | 1 | 2
  readonly stdout: string
  readonly stderr: string
}

export const usage = `usage:
  xaalis-server create-business [--name NAME] [--webhook-url URL]
  xaalis-server roll-key --business ID --mode test|live [--expires-in SECONDS]
  xaalis-server roll-webhook-secret --business ID [--expires-in SECONDS]
      (--expires-in: how long the earlier keys keep working, or the old secret keeps signing beside
       the new one: 0 to 604800 seconds; default 0: revoked at once)`

const refused = (message: string): AdminOutcome => ({ code: 2, stdout: "", stderr: `xaalis: ${message}\n` })

const parse = (command: Command, args: ReadonlyArray<string>) =>
  parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      help: { type: "boolean", short: "h" },
      ...(command === "create-business"
        ? { name: { type: "string" }, "webhook-url": { type: "string" } }
        : command === "roll-key"
          ? { business: { type: "string" }, mode: { type: "string" }, "expires-in": { type: "string" } }
          : { business: { type: "string" }, "expires-in": { type: "string" } })
    }
  }).values as Record<string, string | boolean | undefined>

const invalid = (message: string) => new DomainError({ code: "validation_error", message })

type Work = Effect.Effect<unknown, DomainError | StoreError, Store | Ids>

/**
 * The work of `command`, as an Effect on the engine's services, or the refusal
 * of its arguments: checked before the store is opened, so bad input changes
 * nothing (opening creates a missing DATA_DIR and its database, and migrates
 * an empty PostgreSQL schema).
 */
const work = (
  command: Command,
  values: Record<string, string | undefined>,
  sandbox: boolean
): Result.Result<Work, DomainError> => {
  if (command === "create-business") {
    // without a name the engine says "Sandbox business": right for the sandbox, not for a live one
    const name = values.name ?? (sandbox ? undefined : "Business")
    const body = {
      ...(name === undefined ? {} : { name }),
      ...(values["webhook-url"] === undefined ? {} : { webhook_url: values["webhook-url"] })
    }
    const decoded = decodeRequest(Requests.CreateBusinessBody, body)
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
    const input = decoded.success
    // the webhook URL receives live events: the live rules, as the HTTP helper checks them
    const refusal =
      input.webhook_url === undefined ? undefined : liveUrlRefusal(input.webhook_url, { sandbox, field: "webhook_url" })
    return refusal === undefined ? Result.succeed(Businesses.createBusiness(input)) : Result.fail(refusal)
  }
  const business = values.business
  const seconds = values["expires-in"] ?? "0"
  if (business === undefined) return Result.fail(invalid("--business is required."))
  if (!/^\d{1,7}$/.test(seconds)) return Result.fail(invalid("--expires-in must be a whole number of seconds."))
  if (command === "roll-webhook-secret") {
    return Result.succeed(
      Effect.map(
        Businesses.rollWebhookSecret({ business_id: business, expires_in_seconds: Number(seconds) }),
        (rolled) => ({
          business_id: business,
          webhook_secret: rolled.webhook_secret,
          previous_secret_expires_at: new Date(rolled.previous_secret_expires_at).toISOString()
        })
      )
    )
  }
  const mode = values.mode
  if (mode !== "test" && mode !== "live") return Result.fail(invalid("--mode must be test or live."))
  return Result.succeed(
    Effect.map(
      Businesses.rollApiKey({ business_id: business, mode, expires_in_seconds: Number(seconds) }),
      (rolled) => ({
        business_id: business,
        mode: rolled.mode,
        secret_key: rolled.secret_key,
        previous_keys: rolled.previous_keys,
        previous_keys_expire_at: new Date(rolled.previous_keys_expire_at).toISOString()
      })
    )
  )
}

/**
 * Runs one operator command against the configured store. The clock is the
 * server's: in the sandbox, the sandbox clock (real time plus the stored
 * advances), so a grace period counts in the time the server checks keys with.
 */
/** Whether nothing is at `path` (only ENOENT: a file that cannot be read is the store's to report when opened). */
const missing = (path: string): boolean => {
  try {
    statSync(path)
    return false
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT"
  }
}

export const runAdmin = async (
  command: Command,
  args: ReadonlyArray<string>,
  config: ServerConfig
): Promise<AdminOutcome> => {
  let parsed: Record<string, string | boolean | undefined>
  try {
    parsed = parse(command, args)
  } catch (e) {
    return refused(`${e instanceof Error ? e.message : String(e)}\n${usage}`)
  }
  if (parsed.help === true) return { code: 0, stdout: `${usage}\n`, stderr: "" }
  const values = parsed as Record<string, string | undefined>
  if (config.store.kind === "memory") {
    return refused("STORE=memory keeps nothing after this command: run it against DATA_DIR or DATABASE_URL.")
  }
  const checked = work(command, values, config.sandbox)
  if (Result.isFailure(checked)) return { code: 2, stdout: "", stderr: `${JSON.stringify(checked.failure.toJSON())}\n` }
  // a roll names a business that must already be in the store: with no embedded database yet there is none,
  // and opening would create an empty one (a mistyped DATA_DIR)
  if (command !== "create-business" && config.store.kind === "embedded") {
    if (missing(SqliteStore.pathInDataDir(config.store.dataDir))) {
      const none = new DomainError({
        code: "not_found",
        message: `No business with id ${JSON.stringify(values.business)}: there is no store in DATA_DIR (${config.store.dataDir}).`
      })
      return { code: 2, stdout: "", stderr: `${JSON.stringify(none.toJSON())}\n` }
    }
  }
  const services = Layer.mergeAll(IdsAdapter.layer, config.sandbox ? SandboxClock.layer : Layer.empty).pipe(
    Layer.provideMerge(storeLayer(config.store))
  )
  const exit = await Effect.runPromiseExit(Effect.provide(checked.success, services))
  if (Exit.isSuccess(exit)) return { code: 0, stdout: `${JSON.stringify(exit.value, null, 2)}\n`, stderr: "" }
  const failure = Result.getOrUndefined(Cause.findError(exit.cause))
  if (failure instanceof DomainError) {
    return { code: 2, stdout: "", stderr: `${JSON.stringify(failure.toJSON())}\n` }
  }
  // the error and its causes on one line, as the server prints a failed start: no stack trace
  return {
    code: 1,
    stdout: "",
    stderr: `xaalis: ${command} failed: ${messages(failure ?? Cause.squash(exit.cause))}\n`
  }
}
