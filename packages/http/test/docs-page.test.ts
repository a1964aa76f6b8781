import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { makeHttpApi, routes } from "@xaalis/http"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** The smallest node:http adapter of a fetch handler (the real mounts live in src/mounts). */
const serve = (fetch: (request: Request) => Promise<Response>) =>
  createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = chunks.length === 0 ? undefined : Buffer.concat(chunks)
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v)
    const response = await fetch(
      new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method ?? "GET",
        headers,
        ...(body === undefined || req.method === "GET" || req.method === "HEAD" ? {} : { body })
      })
    )
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  })

const api = makeHttpApi()
let server: Server
let origin: string
let browser: Browser

/** A real browser on a loaded CI machine: polls and tests get room beyond vitest's 1 s and 5 s defaults. */
const poll = { timeout: 15_000 }
const browserTest = 60_000

/** A POST to the API in process, its JSON answer. */
const post = async (path: string, key: string | undefined, body: unknown) =>
  (await (
    await api.fetch(
      new Request(`${origin}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(key === undefined ? {} : { authorization: `Bearer ${key}` })
        },
        body: JSON.stringify(body)
      })
    )
  ).json()) as Record<string, string>

beforeAll(async () => {
  server = serve(api.fetch)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] })
  // a browser's first start on a machine (font caches) on a loaded 2-core CI box took over vitest's 10 s
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => server.close(resolve))
  await api.dispose()
})

describe("GET /docs in a real browser", () => {
  it(
    "lists every operation and creates a sandbox business through the try-it form",
    async () => {
      const page = await browser.newPage()
      const requested: Array<string> = []
      page.on("request", (r) => requested.push(r.url()))
      const consoleErrors: Array<string> = []
      page.on("console", (m) => {
        if (m.type() === "error") consoleErrors.push(m.text())
      })

      const res = await page.goto(`${origin}/docs`)
      expect(res?.status()).toBe(200)
      expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'")
      await page.locator("[data-testid=ops][data-ready=true]").waitFor()
      expect(await page.locator("details.op[data-testid^=op-]").count()).toBe(routes.length)

      const op = page.getByTestId("op-createSandboxBusiness")
      await op.locator("summary").click()
      await page.getByTestId("body-createSandboxBusiness").fill('{"name": "Docs Shop"}')
      await page.getByTestId("send-createSandboxBusiness").click()
      await expect.poll(() => page.getByTestId("status-createSandboxBusiness").textContent(), poll).toMatch(/^201\b/)
      // the answer is announced to screen readers
      expect(await page.getByRole("status").first().getAttribute("aria-live")).toBe("polite")
      expect(await page.getByTestId("status-createSandboxBusiness").getAttribute("aria-live")).toBe("polite")
      const created = JSON.parse((await page.getByTestId("response-createSandboxBusiness").textContent()) ?? "")
      expect(created.name).toBe("Docs Shop")
      expect(created.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      // the page keeps the new test key for the next calls: an authenticated read works
      expect(await page.getByTestId("key").inputValue()).toBe(created.secret_key_test)
      await page.getByTestId("op-getBalance").locator("summary").click()
      await page.getByTestId("send-getBalance").click()
      await expect.poll(() => page.getByTestId("status-getBalance").textContent(), poll).toMatch(/^200\b/)
      // a conversion takes a live key: the page sends the business's own live key for it, and says so
      await page.getByTestId("op-createConversion").locator("summary").click()
      await page.getByTestId("send-createConversion").click()
      await expect
        .poll(() => page.getByTestId("status-createConversion").textContent(), poll)
        .toBe("201 Created (sent with the business's live key: this operation takes a live key)")
      expect(await page.getByTestId("key").inputValue()).toBe(created.secret_key_test)
      // a description's `code` spans show as code, not with their backticks
      const cancel = page.getByTestId("op-cancelPaymentIntent")
      expect(await cancel.locator("p code").first().textContent()).toBe("payment_intent.cancelled")
      expect(await cancel.locator("p").first().textContent()).not.toContain("`")
      // a path parameter left empty is asked for, not sent as "{id}"
      await page.getByTestId("op-getInvoice").locator("summary").click()
      await page.getByTestId("send-getInvoice").click()
      expect(await page.getByTestId("status-getInvoice").textContent()).toBe("Fill in id first.")
      // a path parameter and an error answer
      await page.getByTestId("param-getInvoice-id").fill("no-such-invoice")
      await page.getByTestId("send-getInvoice").click()
      await expect.poll(() => page.getByTestId("status-getInvoice").textContent(), poll).toMatch(/^404\b/)
      expect(JSON.parse((await page.getByTestId("response-getInvoice").textContent()) ?? "").error.code).toBe(
        "not_found"
      )

      expect(requested.length).toBeGreaterThanOrEqual(5)
      expect(requested.filter((u) => !u.startsWith(`${origin}/`))).toEqual([])
      // the browser logs the one 404 the test asked for; nothing else went wrong (no script error, no favicon)
      expect(consoleErrors).toEqual(["Failed to load resource: the server responded with a status of 404 (Not Found)"])
      await page.close()
    },
    browserTest
  )
})

describe("a hosted payment page in a real browser", () => {
  it(
    "shows a caller's markup as text, runs no script, and its own style passes the CSP",
    async () => {
      const biz = await post("/v1/test_helpers/businesses", undefined, { name: "Shop" })
      const title = `<img src=x onerror="document.title='pwned'">`
      const link = await post("/v1/payment-links", biz.secret_key_test, { data: { amount: 25, title } })
      const page = await browser.newPage()
      const consoleErrors: Array<string> = []
      page.on("console", (m) => {
        if (m.type() === "error") consoleErrors.push(m.text())
      })
      const res = await page.goto(`${origin}${new URL(link.url as string).pathname}`)
      expect(res?.status()).toBe(200)
      expect(await page.getByTestId("heading").textContent()).toBe(title)
      expect(await page.getByTestId("amount").textContent()).toBe("25.00 GMD")
      expect(await page.getByTestId("test-mode").isVisible()).toBe(true)
      expect(await page.locator("img").count()).toBe(0)
      // onerror would have set it to "pwned"
      expect(await page.title()).toBe(`Payment link to Shop: ${title}, 25.00 GMD (Open for payment)`)
      // the inline style applied (its hash is in the CSP): the amount is rendered bold
      expect(
        await page
          .getByTestId("amount")
          .evaluate(
            (el) =>
              (globalThis as unknown as { getComputedStyle: (e: unknown) => { fontWeight: string } }).getComputedStyle(
                el
              ).fontWeight
          )
      ).toBe("600")
      expect(consoleErrors).toEqual([])
      await page.close()
    },
    browserTest
  )
  it(
    "long caller text wraps inside the page, prices stay in view, and the headers forbid framing",
    async () => {
      const biz = await post("/v1/test_helpers/businesses", undefined, { name: "W".repeat(255) })
      const invoice = await post("/v1/invoices", biz.secret_key_test, {
        data: {
          customer: "c",
          line_items: [{ item: "X".repeat(255), quantity: 2, unit_price: 999999.99 }],
          notes: "Y".repeat(1500)
        }
      })
      for (const width of [1000, 390]) {
        const page = await browser.newPage({ viewport: { width, height: 800 } })
        const res = await page.goto(`${origin}${new URL(invoice.payment_link as string).pathname}`)
        expect(res?.headers()["x-frame-options"]).toBe("DENY")
        // no horizontal scrolling: the page is as wide as the window
        const scrollWidth = await page.evaluate(
          () =>
            (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
              .documentElement.scrollWidth
        )
        expect(scrollWidth, `${width}px`).toBeLessThanOrEqual(width)
        // the line's total is inside the window
        const total = await page.getByText("1,999,999.98").first().boundingBox()
        expect(total, `${width}px`).not.toBeNull()
        expect((total?.x ?? 0) + (total?.width ?? 0), `${width}px`).toBeLessThanOrEqual(width)
        await page.close()
      }
      const docs = await fetch(`${origin}/docs`)
      expect([docs.headers.get("x-frame-options"), docs.headers.get("referrer-policy")]).toEqual([
        "DENY",
        "no-referrer"
      ])
    },
    browserTest
  )
})

describe("hosted pages on narrow phones and against stacked marks (a browser audit)", () => {
  /** The page of `link` at `width`: its horizontal scroll width, and the page to look into (close it). */
  const open = async (link: string, width: number) => {
    const page = await browser.newPage({ viewport: { width, height: 700 } })
    expect((await page.goto(`${origin}${new URL(link).pathname}`))?.status()).toBe(200)
    const scrollWidth = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth
    )
    return { page, scrollWidth }
  }
  it(
    "keeps every line total whole and in view down to 320 px, and never splits the amount asked inside its number",
    async () => {
      const biz = await post("/v1/test_helpers/businesses", undefined, { name: "Shop" })
      const invoices = [
        // the audit's cases: a 999,945,000.00 total cut to "999,945,00" at 320 px; a 360 px page scrolled sideways
        {
          totals: ["999,945,000.00", "10,000.00"],
          line_items: [
            { item: "Hand-woven basket, large", quantity: 1.2345, unit_price: 810000000 },
            { item: "y", quantity: 999999.9999, unit_price: 0.01 }
          ]
        },
        { totals: ["987,654,240.00"], line_items: [{ item: "Cement bags", quantity: 1234.5678, unit_price: 800000 }] }
      ]
      for (const { totals, line_items } of invoices) {
        const invoice = await post("/v1/invoices", biz.secret_key_test, { data: { customer: "c", line_items } })
        for (const width of [320, 360, 390, 1000]) {
          const { page, scrollWidth } = await open(invoice.payment_link as string, width)
          expect(scrollWidth, `${width}px`).toBeLessThanOrEqual(width)
          for (const total of totals) {
            const cell = page.locator("td.n", { hasText: total }).last()
            expect(await cell.textContent(), `${width}px`).toBe(total)
            const box = await cell.boundingBox()
            expect(box, `${width}px ${total}`).not.toBeNull()
            expect((box?.x ?? 0) + (box?.width ?? 0), `${width}px ${total}`).toBeLessThanOrEqual(width)
          }
          await page.close()
        }
      }
      const intent = await post("/v1/payments", biz.secret_key_test, {
        data: { amount: 1000000000, transaction_fee_type: "customer" }
      })
      for (const width of [320, 360]) {
        const { page, scrollWidth } = await open(intent.payment_link as string, width)
        expect(scrollWidth, `${width}px`).toBeLessThanOrEqual(width)
        // the number is on one line: its box is one line high
        const num = page.locator("[data-testid=amount] .num")
        expect(await num.textContent()).toBe("1,015,000,000.00")
        const rects = await num.evaluate(
          (el) => (el as unknown as { getClientRects: () => ArrayLike<unknown> }).getClientRects().length
        )
        expect(rects, `${width}px`).toBe(1)
        const box = await num.boundingBox()
        expect((box?.x ?? 0) + (box?.width ?? 0), `${width}px`).toBeLessThanOrEqual(width)
        await page.close()
      }
    },
    browserTest
  )
  it(
    "draws nothing of a title's stacked combining marks over the line that names the merchant",
    async () => {
      const biz = await post("/v1/test_helpers/businesses", undefined, { name: "Kairaba Coffee" })
      const marks = Array.from({ length: 26 }, (_, i) => String.fromCodePoint(0x300 + i)).join("")
      const plain = await post("/v1/payment-links", biz.secret_key_test, { data: { amount: 10, title: "Pay" } })
      const stacked = await post("/v1/payment-links", biz.secret_key_test, {
        data: { amount: 10, title: `Pay${marks.repeat(9)}` }
      })
      const shot = async (link: string) => {
        const { page } = await open(link, 375)
        const image = await page.getByTestId("by").screenshot()
        await page.close()
        return image
      }
      // the merchant's line looks exactly as it does under a plain title
      expect(Buffer.compare(await shot(stacked.url as string), await shot(plain.url as string))).toBe(0)
    },
    browserTest
  )
})

/** The browser's globals the page checks below read (the test files are typed without the DOM library). */
interface PageGlobals {
  readonly document: {
    readonly documentElement: { readonly scrollWidth: number }
    querySelectorAll: (selector: string) => ArrayLike<{
      readonly id: string
      readonly tagName: string
      readonly labels: ArrayLike<unknown> | null
      getAttribute: (name: string) => string | null
      setAttribute: (name: string, value: string) => void
    }>
  }
}

describe("the docs page's layout, labels, prefilled bodies and fallback", () => {
  it(
    "fits a 360 px wide window: long paths wrap, nothing scrolls sideways, open operations included",
    async () => {
      const page = await browser.newPage({ viewport: { width: 360, height: 800 } })
      await page.goto(`${origin}/docs`)
      await page.locator("[data-testid=ops][data-ready=true]").waitFor()
      const scrollWidth = () =>
        page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth)
      expect(await scrollWidth(), "operations closed").toBeLessThanOrEqual(360)
      await page.evaluate(() => {
        for (const d of Array.from((globalThis as unknown as PageGlobals).document.querySelectorAll("details")))
          d.setAttribute("open", "")
      })
      expect(await scrollWidth(), "operations open").toBeLessThanOrEqual(360)
      // the longest path is on screen, wrapped
      const code = page.locator("[data-testid=op-sandboxCustomerPaysInvoice] summary code")
      const box = await code.boundingBox()
      expect((box?.x ?? 0) + (box?.width ?? Number.POSITIVE_INFINITY)).toBeLessThanOrEqual(360)
      await page.close()
    },
    browserTest
  )

  it(
    "links every input, textarea and select to a label, with ids unique in the page",
    async () => {
      const page = await browser.newPage()
      await page.goto(`${origin}/docs`)
      await page.locator("[data-testid=ops][data-ready=true]").waitFor()
      const controls = await page.evaluate(() =>
        Array.from((globalThis as unknown as PageGlobals).document.querySelectorAll("input, textarea, select")).map(
          (c) => ({
            id: c.id,
            testid: c.getAttribute("data-testid"),
            labels: c.labels === null ? 0 : c.labels.length
          })
        )
      )
      // the key, every parameter and header field, every body
      expect(controls.length).toBeGreaterThan(routes.length)
      expect(controls.filter((c) => c.labels === 0)).toEqual([])
      const ids = await page.evaluate(() =>
        Array.from((globalThis as unknown as PageGlobals).document.querySelectorAll("[id]")).map((e) => e.id)
      )
      expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([])
      await page.close()
    },
    browserTest
  )

  it(
    "prefills every POST body with one the API accepts: sent as is, each answers 2xx (no 400)",
    async () => {
      const spec = (await (await api.fetch(new Request(`${origin}/v1/openapi.json`))).json()) as {
        paths: Record<string, Record<string, { operationId: string; requestBody?: unknown; security?: Array<unknown> }>>
      }
      const posts = Object.entries(spec.paths).flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method, op]) => method === "post" && op.requestBody !== undefined)
          .map(([, op]) => ({ path, ...op, live: (op as Record<string, unknown>)["x-live-key-only"] === true }))
      )
      expect(posts.map((p) => p.operationId)).toEqual(
        expect.arrayContaining(["createInvoice", "createDraftInvoice", "sandboxChainTransfer", "setSandboxRate"])
      )

      const page = await browser.newPage()
      await page.goto(`${origin}/docs`)
      await page.locator("[data-testid=ops][data-ready=true]").waitFor()
      const prefilled: Record<string, string> = {}
      for (const p of posts) prefilled[p.operationId] = await page.getByTestId(`body-${p.operationId}`).inputValue()
      await page.close()

      const biz = await post("/v1/test_helpers/businesses", undefined, { name: "Prefill" })
      // an object for the operations on one (a payment request for the sandbox payer)
      const request = await post("/v1/minting/intents", biz.secret_key_live, { amount: 10 })
      expect(request.id).toBeDefined()
      // and a payment intent for the processor helpers that take a body (fail: `{reason?}`)
      const intent = await post("/v1/payments", biz.secret_key_test, { data: { amount: 100 } })
      expect(intent.payment_intent_id).toBeDefined()
      const idFor = (path: string) => (path.includes("/payments/") ? intent.payment_intent_id : request.id) ?? ""
      const answers: Record<string, string> = {}
      for (const p of posts) {
        const key = p.security?.length === 0 ? undefined : p.live ? biz.secret_key_live : biz.secret_key_test
        const res = await api.fetch(
          new Request(`${origin}${p.path.replace("{id}", idFor(p.path))}`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(key === undefined ? {} : { authorization: `Bearer ${key}` })
            },
            body: prefilled[p.operationId] ?? ""
          })
        )
        answers[p.operationId] = `${res.status} ${prefilled[p.operationId]} -> ${await res.text()}`
      }
      // every prefilled body decodes and is taken: a 2xx answer each
      expect(Object.values(answers).filter((a) => !/^2\d\d /.test(a))).toEqual([])
      // the rate helper proposes the default rate, not 1 GMD per USD
      expect(JSON.parse(prefilled.setSandboxRate ?? "")).toEqual({ rate: 70 })
    },
    browserTest
  )

  it(
    "is served at /docs/ too, and says nothing of sandbox businesses when the sandbox is off",
    async () => {
      const page = await browser.newPage()
      const res = await page.goto(`${origin}/docs/`)
      expect(res?.status()).toBe(200)
      await page.locator("[data-testid=ops][data-ready=true]").waitFor()
      expect(await page.locator("details.op[data-testid^=op-]").count()).toBe(routes.length)
      expect(await page.locator("label[for=key]").textContent()).toContain("Create a sandbox business below")
      await page.close()
      const live = makeHttpApi({ sandbox: false })
      const liveServer = serve(live.fetch)
      await new Promise<void>((resolve) => liveServer.listen(0, "127.0.0.1", resolve))
      try {
        const livePage = await browser.newPage()
        await livePage.goto(`http://127.0.0.1:${(liveServer.address() as AddressInfo).port}/docs`)
        await livePage.locator("[data-testid=ops][data-ready=true]").waitFor()
        expect(await livePage.locator("label[for=key]").textContent()).toBe("Secret key (Authorization: Bearer …).")
        await livePage.close()
      } finally {
        await new Promise((resolve) => liveServer.close(resolve))
        await live.dispose()
      }
    },
    browserTest
  )
  it(
    "without JavaScript, points to /v1/openapi.json instead of loading forever",
    async () => {
      const context = await browser.newContext({ javaScriptEnabled: false })
      const page = await context.newPage()
      // from both addresses of the page (from /docs/ a link relative to the page would be /docs/v1/openapi.json)
      for (const path of ["/docs", "/docs/"]) {
        await page.goto(`${origin}${path}`)
        const note = page.getByTestId("noscript")
        expect(await note.isVisible()).toBe(true)
        expect(await page.getByTestId("ops").textContent()).not.toContain("Loading")
        const href = await note.locator("a").evaluate((a) => (a as unknown as { href: string }).href)
        expect(href, path).toBe(`${origin}/v1/openapi.json`)
        expect((await api.fetch(new Request(href))).status).toBe(200)
      }
      await context.close()
    },
    browserTest
  )
})

/**
 * The hosted payment request page on a phone's width. A newcomer audit found
 * its address table broke "Netw/ork", "TRC2/0" and "US/DT" over two lines at
 * 360 and 390 px: a payer could misread which network to send on.
 */
describe("the hosted payment request page on a phone", () => {
  it(
    "each address's network and coin stay on one line at 360 and 390 px; only the address breaks",
    async () => {
      const biz = await post("/v1/test_helpers/businesses", undefined, { name: "Kairaba Coffee" })
      const request = await post("/v1/minting/intents", biz.secret_key_live, { amount: 25 })
      for (const width of [360, 390]) {
        const page = await browser.newPage({ viewport: { width, height: 740 } })
        await page.goto(`${origin}${new URL(request.link as string).pathname}`)
        // the lines each cell's text takes (the distinct tops of its text's boxes)
        const lines = await page.evaluate(() => {
          interface Rect {
            readonly top: number
          }
          interface Cell {
            readonly textContent: string | null
          }
          const g = globalThis as unknown as {
            document: {
              querySelectorAll: (s: string) => ArrayLike<Cell>
              createRange: () => { selectNodeContents: (n: Cell) => void; getClientRects: () => ArrayLike<Rect> }
            }
          }
          return Array.from(
            g.document.querySelectorAll('[data-testid="addresses"] th, [data-testid="addresses"] td:not(:last-child)'),
            (cell) => {
              const range = g.document.createRange()
              range.selectNodeContents(cell)
              const tops = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)))
              return `${cell.textContent}: ${tops.size}`
            }
          )
        })
        expect(lines, `${width}px`).toEqual([
          "Network: 1",
          "Coin: 1",
          "Address: 1",
          "TRC20: 1",
          "USDT: 1",
          "TRC20: 1",
          "USDC: 1",
          "ARC: 1",
          "USDC: 1"
        ])
        const scrollWidth = await page.evaluate(
          () =>
            (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
              .documentElement.scrollWidth
        )
        expect(scrollWidth, `${width}px: no sideways scroll`).toBeLessThanOrEqual(width)
        await page.close()
      }
    },
    browserTest
  )
})

/**
 * The hosted invoice page on a phone's width. A browser audit found its line
 * items unreadable at 360 and 390 px: the three number columns had fixed
 * widths that left the item's column 0–17 px wide, one letter per line.
 */
describe("the hosted invoice page on a phone", () => {
  it(
    "line items stay readable at 360 and 390 px: the item's column keeps room, totals in view, no sideways scroll",
    async () => {
      const biz = await post("/v1/test_helpers/businesses", undefined, { name: "Kairaba Coffee" })
      const invoice = await post("/v1/invoices", biz.secret_key_test, {
        data: {
          customer: "c",
          line_items: [
            { item: "Rice, 50 kg bag", quantity: 12, unit_price: 1350.5 },
            { item: "Palm oil, 20 litres", quantity: 2.5, unit_price: 999999.99 },
            { item: "Delivery to Brikama", quantity: 1, unit_price: 250 }
          ]
        }
      })
      for (const width of [360, 390]) {
        const page = await browser.newPage({ viewport: { width, height: 740 } })
        await page.goto(`${origin}${new URL(invoice.payment_link as string).pathname}`)
        const scrollWidth = await page.evaluate(
          () =>
            (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
              .documentElement.scrollWidth
        )
        expect(scrollWidth, `${width}px: no sideways scroll`).toBeLessThanOrEqual(width)
        // the item's name reads as words: its cell is wide enough for "Delivery" on one line
        const item = await page.getByText("Delivery to Brikama").boundingBox()
        expect(item?.width ?? 0, `${width}px: the item's column`).toBeGreaterThanOrEqual(60)
        const words = await page.getByText("Rice, 50 kg bag").boundingBox()
        expect(words?.height ?? Number.POSITIVE_INFINITY, `${width}px: a short name on at most 3 lines`).toBeLessThan(
          80
        )
        // the largest total is inside the window
        const total = await page.getByText("2,499,999.98").boundingBox()
        expect(total, `${width}px`).not.toBeNull()
        expect((total?.x ?? 0) + (total?.width ?? 0), `${width}px: the total in view`).toBeLessThanOrEqual(width)
        await page.close()
      }
    },
    browserTest
  )
})
