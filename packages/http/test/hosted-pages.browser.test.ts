import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { makeHttpApi } from "@xaalis/http"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { toNodeListener } from "../src/mounts/index.ts"

/**
 * The hosted invoice page in a real browser on a phone's width. A browser
 * audit found its line items unreadable at 360 and 390 px: the three number
 * columns had fixed widths that left the item's column 0–17 px wide, one
 * letter per line.
 */
const api = makeHttpApi()
let server: Server
let origin: string
let browser: Browser
const browserTest = 60_000

const post = async (path: string, key: string | undefined, body: unknown) =>
  (await (
    await fetch(`${origin}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
      body: JSON.stringify(body)
    })
  ).json()) as Record<string, string>

beforeAll(async () => {
  server = createServer(toNodeListener(api.fetch))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] })
})

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => server.close(resolve))
  await api.dispose()
})

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
