import { Validator } from "@seriousme/openapi-schema-validator"
import { routes, routesFor } from "@xaalis/http"
import { Ajv2020 } from "ajv/dist/2020.js"
import ajvFormats from "ajv-formats"
import { JsonSchema, Schema, SchemaRepresentation } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type Answer, type Setup, setup } from "./helpers.ts"
import { everyOperation } from "./scenario.ts"

let s: Setup
afterEach(async () => {
  await s.api.dispose()
})

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
type Doc = any

/** Every `$ref` anywhere in `value`, with where it was found. */
const refs = (value: unknown, at = "#"): Array<{ at: string; ref: string }> => {
  if (value === null || typeof value !== "object") return []
  const out: Array<{ at: string; ref: string }> = []
  for (const [k, v] of Object.entries(value)) {
    if (k === "$ref" && typeof v === "string") out.push({ at, ref: v })
    else out.push(...refs(v, `${at}/${k}`))
  }
  return out
}

/** Resolves a local JSON pointer (`#/components/schemas/Invoice`) in `doc`. */
const resolve = (doc: Doc, ref: string): unknown =>
  ref
    .replace(/^#\//, "")
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc)

/**
 * A validator built from the document's own JSON Schema (OpenAPI 3.1 dialect),
 * by effect's JSON Schema importer: independent of the effect Schemas the
 * document was generated from.
 */
const validatorOf = (doc: Doc, schema: JsonSchema.JsonSchema) => {
  const definitions = Object.fromEntries(
    Object.entries(doc.components.schemas as Record<string, JsonSchema.JsonSchema>).map(([name, def]) => [
      name,
      JsonSchema.fromSchemaOpenApi3_1(def).schema
    ])
  )
  const imported = SchemaRepresentation.fromJsonSchemaDocument(
    { dialect: "draft-2020-12", schema: JsonSchema.fromSchemaOpenApi3_1(schema).schema, definitions },
    { patterns: "apply" }
  )
  return (value: unknown) => Schema.decodeUnknownResult(imported as Schema.Codec<unknown>)(value)._tag === "Success"
}

/**
 * The request body validator a client would build from the document with
 * ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect, with its formats): the
 * conditional keywords (`if`/`else`) effect's importer does not take.
 */
const ajvBodyOf = (doc: Doc, operationId: string) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  // ajv-formats is CommonJS: its module object is the plugin, and carries it again as `default`
  ajvFormats.default(ajv)
  ajv.addSchema({ ...doc, $id: "https://xaalis.test/openapi.json" })
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Doc>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (op.operationId !== operationId) continue
      const pointer = ["paths", path, method, "requestBody", "content", "application/json", "schema"]
        .map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1"))
        .join("/")
      const validate = ajv.compile({ $ref: `https://xaalis.test/openapi.json#/${pointer}` })
      return (value: unknown) => validate(value) === true
    }
  }
  throw new Error(`no operation ${operationId}`)
}

const operationOf = (doc: Doc, operationId: string) => {
  for (const item of Object.values(doc.paths as Record<string, Record<string, Doc>>)) {
    for (const op of Object.values(item)) if (op.operationId === operationId) return op
  }
  throw new Error(`no operation ${operationId}`)
}

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document served without a key, listing every route of the table exactly once", async () => {
    s = setup()
    const res = await s.call("GET", "/v1/openapi.json")
    expect(res.status).toBe(200)
    const doc: Doc = res.body
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.info.version).toBe("1.0.0")
    expect(doc.components.securitySchemes.bearerAuth).toEqual(
      expect.objectContaining({ type: "http", scheme: "bearer" })
    )
    const listed = Object.entries(doc.paths as Record<string, Record<string, Doc>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`)
    )
    expect(listed.sort()).toEqual(routes.map((r) => `${r.method} ${r.path} ${r.operationId}`).sort())
    expect(new Set(routes.map((r) => r.operationId)).size).toBe(routes.length)
    for (const r of routes) {
      const op = operationOf(doc, r.operationId)
      expect({ id: r.operationId, security: op.security }).toEqual({
        id: r.operationId,
        security: r.auth === "none" ? [] : [{ bearerAuth: [] }]
      })
      expect(Object.keys(op.responses)).toContain(String(r.status))
      expect(op.responses["500"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" })
      if (r.body !== undefined) expect(op.requestBody.content["application/json"].schema).toBeDefined()
      if (r.auth === "live") expect(Object.keys(op.responses)).toContain("403")
      const names = (op.parameters ?? []).map((p: { name: string }) => p.name)
      if (r.method === "POST" && r.auth !== "none") expect(names).toContain("Idempotency-Key")
      if (r.query !== undefined) expect(names).toEqual(expect.arrayContaining(["limit", "offset"]))
      for (const m of r.path.matchAll(/\{(\w+)\}/g)) expect(names).toContain(m[1])
    }
    expect(routesFor(false).every((r) => !r.sandbox_only)).toBe(true)
  })

  it("validates against the official OpenAPI 3.1 schema, with the sandbox on and off", async () => {
    for (const sandbox of [true, false]) {
      s = setup({ sandbox })
      const doc: Doc = (await s.call("GET", "/v1/openapi.json")).body
      await s.api.dispose()
      const validator = new Validator()
      const result = await validator.validate(structuredClone(doc))
      expect({ sandbox, version: validator.version, errors: result.errors }).toEqual({
        sandbox,
        version: "3.1",
        errors: undefined
      })
      expect(result.valid).toBe(true)
      // the validator does catch a broken document: a parameter in a place OpenAPI has no name for
      const broken = structuredClone(doc)
      broken.paths["/v1/balance"].get.parameters = [{ name: "x", in: "body", schema: { type: "string" } }]
      expect((await new Validator().validate(broken)).valid).toBe(false)
    }
    s = setup()
  })

  it("has no dangling $ref", async () => {
    s = setup()
    const doc: Doc = (await s.call("GET", "/v1/openapi.json")).body
    const all = refs(doc)
    expect(all.length).toBeGreaterThan(20)
    for (const { at, ref } of all) {
      expect({ at, ref, local: ref.startsWith("#/") }).toEqual({ at, ref, local: true })
      expect({ at, ref, resolves: resolve(doc, ref) !== undefined }).toEqual({ at, ref, resolves: true })
    }
  })

  it("describes the answers the API actually gives, successes and errors", async () => {
    s = setup({ rateLimit: { rps: 1000, burst: 1000 } })
    const doc: Doc = (await s.call("GET", "/v1/openapi.json")).body
    const { answers, test, live, ids } = await everyOperation(s)
    const errors: Array<[string, Answer]> = [
      ["getBalance", await s.call("GET", "/v1/balance")],
      ["createConversion", await s.call("POST", "/v1/minting/offramp", { key: test, body: {} })],
      ["createConversion", await s.call("POST", "/v1/minting/offramp", { key: live, body: { gmd_amount: 1 } })],
      ["getInvoice", await s.call("GET", "/v1/invoices/nope", { key: test })],
      ["payInvoice", await s.call("POST", `/v1/invoices/${ids.draft.id}/pay`, { key: test })],
      [
        "createPaymentLink",
        await s.call("POST", "/v1/payment-links", {
          key: test,
          body: { data: { amount: 1 } },
          headers: { "idempotency-key": "k" }
        })
      ],
      [
        "createPaymentLink",
        await s.call("POST", "/v1/payment-links", {
          key: test,
          body: { data: { amount: 2 } },
          headers: { "idempotency-key": "k" }
        })
      ]
    ]
    expect(errors.map(([, a]) => a.status)).toEqual([401, 403, 400, 404, 409, 201, 409])
    let checked = 0
    for (const [operationId, seen] of [...answers, ...errors.map(([id, a]) => [id, [a]] as const)]) {
      const op = operationOf(doc, operationId)
      for (const a of seen) {
        const response = op.responses[String(a.status)]
        expect({ operationId, status: a.status, documented: response !== undefined }).toEqual({
          operationId,
          status: a.status,
          documented: true
        })
        const valid = validatorOf(doc, response.content["application/json"].schema)
        expect({ operationId, status: a.status, valid: valid(a.body) }).toEqual({
          operationId,
          status: a.status,
          valid: true
        })
        for (const name of Object.keys(response.headers ?? {})) {
          expect({ operationId, name, sent: a.headers.get(name) !== null }).toEqual({ operationId, name, sent: true })
        }
        checked += 1
      }
    }
    expect(checked).toBeGreaterThan(routes.length)
    // the validators are not vacuous
    const conversion = validatorOf(doc, { $ref: "#/components/schemas/Conversion" })
    const sample = answers.get("createConversion")?.[0]?.body
    expect(conversion(sample)).toBe(true)
    expect(conversion({ ...sample, id: undefined })).toBe(false)
    expect(conversion({ ...sample, status: "sent" })).toBe(false)
    expect(conversion({ ...sample, pay_amount: "73.64" })).toBe(false)
    const error = validatorOf(doc, { $ref: "#/components/schemas/Error" })
    expect(error({ error: { message: "x", code: "teapot" } })).toBe(false)
    // the balance's list of currencies is described, not only tolerated
    const balance = validatorOf(doc, { $ref: "#/components/schemas/Balance" })
    const held = answers.get("getBalance")?.[0]?.body
    expect(held.balances).toHaveLength(2)
    expect(balance(held)).toBe(true)
    expect(balance({ ...held, balances: [{ currency: "EUR", available: 1 }] })).toBe(false)
  })

  it("states the wallet rules the API enforces on request bodies (a body the document accepts is not refused for them)", async () => {
    s = setup()
    const doc: Doc = (await s.call("GET", "/v1/openapi.json")).body
    const bodyOf = (operationId: string) => ajvBodyOf(doc, operationId)
    const intent = bodyOf("createPaymentIntent")
    expect(intent({ data: { amount: 100, account_number: "7012345" } })).toBe(true)
    expect(intent({ data: { amount: 100, account_number: "1".repeat(32) } })).toBe(false)
    expect(intent({ data: { amount: 100, account_number: "+2207012345" } })).toBe(false)
    const conversion = bodyOf("createConversion")
    const wallet = { network: "wave", account_number: "7012345", account_name: "Awa" }
    const payout = (payout_method: object) => ({ gmd_amount: 5000, destination: "mobile_money", payout_method })
    expect(conversion(payout(wallet))).toBe(true)
    expect(conversion(payout({ ...wallet, account_number: "123456" }))).toBe(false)
    expect(conversion(payout({ ...wallet, account_name: "Aw" }))).toBe(false)
  })

  it("states the URL rules the API enforces: http(s) callbacks, redirects of any safe scheme only with skip_url_validation", async () => {
    s = setup()
    const doc: Doc = (await s.call("GET", "/v1/openapi.json")).body
    const intent = ajvBodyOf(doc, "createPaymentIntent")
    const { secret_key_test } = await s.business()
    const accepts = async (data: object) => {
      const res = await s.call("POST", "/v1/payments", {
        key: secret_key_test,
        body: { data: { amount: 100, ...data } },
        headers: { "x-no-effect": "true" }
      })
      expect([200, 400]).toContain(res.status)
      return res.status === 200
    }
    const cases: ReadonlyArray<object> = [
      { callback_url: "https://example.com/hook" },
      { callback_url: "HTTP://example.com" },
      { callback_url: "mailto:a@example.com" },
      { callback_url: "urn:isbn:0451450523" },
      { callback_url: "https://user@example.com/" },
      { return_url: "https://shop.example/done", cancel_url: "http://shop.example/cancel" },
      { return_url: "myapp://done" },
      { return_url: "myapp://done", skip_url_validation: true },
      { cancel_url: "myapp://cancel", skip_url_validation: false },
      { return_url: "javascript:alert(1)", skip_url_validation: true },
      { return_url: "JavaScript:alert(1)", skip_url_validation: true },
      { cancel_url: "data:text/html,x", skip_url_validation: true },
      { return_url: null, cancel_url: null }
    ]
    for (const data of cases) {
      // the document and the API agree on every case: a client that checks bodies against it is never refused
      expect({ data, document: intent({ data: { amount: 100, ...data } }) }).toEqual({
        data,
        document: await accepts(data)
      })
    }
    expect(intent({ data: { amount: 100, callback_url: "mailto:a@example.com" } })).toBe(false)
    expect(intent({ data: { amount: 100, return_url: "myapp://done", skip_url_validation: true } })).toBe(true)
    const invoice = ajvBodyOf(doc, "createInvoice")
    const person = { amount: 50, customer_name: "Awa", customer_email: "awa@example.com" }
    expect(invoice({ data: { ...person, callback_url: "https://example.com/i" } })).toBe(true)
    expect(invoice({ data: { ...person, callback_url: "ftp://example.com/i" } })).toBe(false)
  })

  it("accepts exactly the bodies the API accepts: text rules, URLs, wallets, USD maximums, invoice requirements (a review's cases)", async () => {
    s = setup()
    const doc: Doc = (await s.call("GET", "/v1/openapi.json")).body
    const { secret_key_test: test, secret_key_live: live } = await s.business()
    const texts = [
      "Tea",
      "Café au lait ☕",
      "a\nb",
      "a\tb",
      "a\u202eb",
      "a\u200fb",
      "a\u0085b",
      "   ",
      "\u200b",
      "",
      "x".repeat(300)
    ]
    const urls = [
      "https://example.com/hook",
      "https://exämple.com/",
      "https://example.com/é",
      "https://example.com/<x>",
      'https://example.com/a"b',
      "https://example.com/%zz",
      "https://example.com#frag#frag",
      "https://[::1",
      "https://example.com/\u200b",
      "https://example.com/a b",
      "mailto:a@example.com",
      "ftp://example.com/",
      "//example.com/x",
      "/relative"
    ]
    type Case = { readonly operationId: string; readonly path: string; readonly key: string; readonly body: object }
    const cases: Array<Case> = []
    /** Adds the bodies of one operation, each made from its variant by `body`. */
    const adder = (operationId: string, path: string, key: string, body: (x: object) => object) => (x: object) =>
      cases.push({ operationId, path, key, body: body(x) })
    const intent = adder("createPaymentIntent", "/v1/payments", test, (d) => ({ data: { amount: 100, ...d } }))
    const link = adder("createPaymentLink", "/v1/payment-links", test, (d) => ({ data: { amount: 10, ...d } }))
    const invoice = adder("createInvoice", "/v1/invoices", test, (d) => ({ data: d }))
    const conversion = adder("createConversion", "/v1/minting/offramp", live, (b) => b)
    for (const t of texts) {
      link({ title: t })
      link({ description: t })
      invoice({ amount: 5, customer: "c", notes: t })
      invoice({ amount: 5, customer_name: t, customer_email: "a@example.com" })
      conversion({
        gmd_amount: 5000,
        destination: "mobile_money",
        payout_method: { network: "wave", account_number: "7012345", account_name: t }
      })
    }
    for (const name of ["  Aw  ", "Awa", " Awa ", "A w", "Aw\n", "Awa\n", "\u202eAwa"]) {
      conversion({
        gmd_amount: 5000,
        destination: "mobile_money",
        payout_method: { network: "wave", account_number: "7012345", account_name: name }
      })
    }
    for (const u of urls) {
      intent({ callback_url: u })
      intent({ return_url: u })
      intent({ return_url: u, skip_url_validation: true })
      invoice({ amount: 5, customer: "c", callback_url: u })
    }
    for (const currency of ["USD", "GMD"]) {
      for (const amount of [10000000, 10000000.01, 999999999.99]) {
        intent({ amount, currency })
        link({ amount, currency })
        invoice({ amount, currency, customer: "c" })
        invoice({ currency, customer: "c", line_items: [{ item: "x", quantity: 1, unit_price: amount }] })
      }
    }
    invoice({ customer: "c" })
    invoice({ customer: "c", amount: 0 })
    invoice({ customer: "c", amount: null, line_items: [{ item: "x", quantity: 2, unit_price: 3 }] })
    invoice({ customer: "c", line_items: [] })
    invoice({ amount: 5 })
    invoice({ amount: 5, customer: null, customer_name: "Awa" })
    invoice({ amount: 5, customer_name: "Awa", customer_email: "a@example.com" })
    const disagreements: Array<unknown> = []
    for (const c of cases) {
      const document = ajvBodyOf(doc, c.operationId)(c.body)
      const res = await s.call("POST", c.path, {
        key: c.key,
        body: c.body,
        ...(c.operationId === "createPaymentIntent" ? { headers: { "x-no-effect": "true" } } : {})
      })
      expect(res.status, JSON.stringify(c.body)).toBeLessThan(500)
      const api = res.status < 300
      if (document !== api) disagreements.push({ body: c.body, document, api, answer: res.body })
    }
    expect(disagreements).toEqual([])
    expect(cases.length).toBeGreaterThan(140)
  })

  it("gives the USD maximum of every fiat amount, which its schema's maximum (GMD's) cannot", async () => {
    s = setup()
    const doc: Doc = (await s.call("GET", "/v1/openapi.json")).body
    const { secret_key_test } = await s.business()
    const data = (operationId: string) =>
      operationOf(doc, operationId).requestBody.content["application/json"].schema.properties.data.properties
    const described = (field: Doc) => JSON.stringify(field)
    for (const operationId of ["createPaymentIntent", "createPaymentLink", "createInvoice"]) {
      expect(described(data(operationId).amount), operationId).toContain("at most 1000000000 in GMD, 10000000 in USD")
    }
    expect(described(data("createInvoice").line_items)).toContain("10000000 in USD")
    // and the API holds to it
    const over = await s.call("POST", "/v1/payment-links", {
      key: secret_key_test,
      body: { data: { amount: 10000000.01, currency: "USD" } }
    })
    expect(over.status).toBe(400)
    const at = await s.call("POST", "/v1/payment-links", {
      key: secret_key_test,
      body: { data: { amount: 10000000, currency: "USD" } }
    })
    expect(at.status).toBe(201)
  })

  it("says what null means on each optional field, and that it keeps amount, line_items and currency on an update", async () => {
    s = setup()
    const doc: Doc = (await s.call("GET", "/v1/openapi.json")).body
    const dataOf = (operationId: string) =>
      operationOf(doc, operationId).requestBody.content["application/json"].schema.properties.data.properties
    const update = dataOf("updateInvoice")
    for (const field of ["amount", "line_items", "currency"]) {
      expect(update[field].description).toMatch(/null or absent leaves it as it is/)
    }
    expect(update.notes.description).toMatch(/null clears it/)
    expect(dataOf("createInvoice").notes.description).toMatch(/null is the same as leaving it out/)
  })
})
