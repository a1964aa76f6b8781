import { Resources } from "@xaalis/core"
import { webhookEventNames } from "@xaalis/webhooks"
import { describe, expect, it } from "vitest"

// @xaalis/webhooks has no dependencies, so it carries its own copy of the event table: the two must agree.
describe("webhook event names", () => {
  it("@xaalis/webhooks knows exactly the events the service sends", () => {
    expect([...webhookEventNames]).toStrictEqual([...Resources.EventName.literals])
  })
})
