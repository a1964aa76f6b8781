// Typechecked against the packed packages' CommonJS declarations (.d.cts).
import { Decimal } from "@xaalis/core"
import { createEngine } from "@xaalis/engine"
import { makeHttpApi } from "@xaalis/http"
import { verify } from "@xaalis/webhooks"

export const parts = [Decimal.parse("1"), createEngine, makeHttpApi, verify]
