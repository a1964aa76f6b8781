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
})

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
      const created = JSON.parse((await page.getByTestId("response-createSandboxBusiness").textContent()) ?? "")
      expect(created.name).toBe("Docs Shop")
      expect(created.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      // the page keeps the new test key for the next calls: an authenticated read works
      expect(await page.getByTestId("key").inputValue()).toBe(created.secret_key_test)
      await page.getByTestId("op-getBalance").locator("summary").click()
      await page.getByTestId("send-getBalance").click()
      await expect.poll(() => page.getByTestId("status-getBalance").textContent(), poll).toMatch(/^200\b/)
      // a path parameter and an error answer
      await page.getByTestId("op-getInvoice").locator("summary").click()
      await page.getByTestId("param-getInvoice-id").fill("no-such-invoice")
      await page.getByTestId("send-getInvoice").click()
      await expect.poll(() => page.getByTestId("status-getInvoice").textContent(), poll).toMatch(/^404\b/)
      expect(JSON.parse((await page.getByTestId("response-getInvoice").textContent()) ?? "").error.code).toBe(
        "not_found"
      )

      expect(requested.length).toBeGreaterThanOrEqual(4)
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
      expect(await page.title()).toBe(`Payment link: ${title}`) // onerror would have set it to "pwned"
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
        const total = await page.getByText("1999999.98").first().boundingBox()
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
