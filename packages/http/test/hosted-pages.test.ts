import { afterEach, describe, expect, it } from "vitest"
import { expectError, setup } from "./helpers.ts"

let s: ReturnType<typeof setup> | undefined
afterEach(async () => {
  await s?.api.dispose()
  s = undefined
})

const pathOf = (link: string) => new URL(link).pathname

describe("hosted pages behind the links the API hands out", () => {
  it("serve every kind without a key: public facts only, caller text escaped, no script", async () => {
    s = setup()
    const { secret_key_test: test, secret_key_live: live } = await s.business({ name: "Awa's shop" })
    const request = await s.call("POST", "/v1/minting/intents", {
      key: live,
      body: { amount: 10, metadata: { secret: "meta-secret" }, callback_url: "https://merchant.example/cb-secret" }
    })
    const link = await s.call("POST", "/v1/payment-links", {
      key: test,
      body: {
        data: {
          amount: 9.5,
          title: "<img src=x onerror=alert(1)>",
          description: "Rice & oil",
          metadata: { m: "meta-secret" }
        }
      }
    })
    const invoice = await s.call("POST", "/v1/invoices", {
      key: test,
      body: {
        data: {
          customer: "cus_1",
          customer_email: "private@example.gm",
          customer_name: "Private Name",
          line_items: [{ item: "Rice <50kg>", quantity: 1.5, unit_price: 10 }],
          discount: { type: "percentage", amount: 10 },
          due_date: "2026-12-31"
        }
      }
    })
    const intent = await s.call("POST", "/v1/payments", {
      key: test,
      body: { data: { amount: 100, transaction_fee_type: "customer", network: "wave", account_number: "7012345" } }
    })
    const pages = [
      { link: request.body.link, has: ["10.00 USD", "pending", "TRC20", "USDT", "USDC", "ARC"], test: false },
      {
        link: link.body.url,
        has: ["9.50 GMD", "active", "&lt;img src=x onerror=alert(1)&gt;", "Rice &amp; oil"],
        test: true
      },
      {
        link: invoice.body.payment_link,
        has: [
          "13.50 GMD",
          "not-paid",
          "Not paid",
          "Rice &lt;50kg&gt;",
          "15.00",
          "1.50 GMD",
          "31 Dec 2026",
          "Awa&#39;s shop"
        ],
        test: true
      },
      {
        link: intent.body.payment_link,
        has: ["101.50 GMD", 'data-status="requires_payment_method"', "Awaiting payment", "wave", " UTC</bdi>"],
        test: true
      }
    ]
    for (const p of pages) {
      const res = await s.call("GET", pathOf(p.link))
      expect(res.status, p.link).toBe(200)
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(res.headers.get("cache-control")).toBe("no-store")
      const csp = res.headers.get("content-security-policy") ?? ""
      expect(csp).toContain("default-src 'none'")
      expect(csp).not.toContain("script-src")
      for (const text of p.has) expect(res.text, `${p.link}: ${text}`).toContain(text)
      // every page names who is paid (escaped and isolated, like all caller text): a payment goes to the
      // merchant, an invoice comes from it
      const towards = p.link === invoice.body.payment_link ? "Invoice from" : "to"
      expect(res.text, p.link).toContain(`${towards} <strong data-testid="merchant"><bdi>Awa&#39;s shop</bdi></strong>`)
      expect(res.text.includes("Test mode"), p.link).toBe(p.test)
      // nothing private: metadata, secrets, callback URLs, the customer's contact details, raw caller markup
      for (const secret of [
        "meta-secret",
        "cb-secret",
        intent.body.intent_secret,
        "private@example.gm",
        "Private Name",
        "7012345",
        "<img",
        "<script"
      ]) {
        expect(res.text, `${p.link} leaks ${secret}`).not.toContain(secret)
      }
    }
  })

  it("follow the object: a payment shows on the request's page", async () => {
    s = setup()
    const { secret_key_live: live } = await s.business()
    const request = await s.call("POST", "/v1/minting/intents", { key: live, body: { amount: 10 } })
    await s.call("POST", `/v1/test_helpers/minting/intents/${request.body.id}/pay`, {
      key: live,
      body: { amount: 4.25, currency: "USDT", network: "TRC20" }
    })
    const page = await s.call("GET", pathOf(request.body.link))
    expect(page.text).toContain('data-status="partially_paid">Partially paid<')
    expect(page.text).toContain("4.25 USD")
    expect(page.text).toContain('data-testid="addresses"')
    // paid in full: the page says so and stops asking for funds
    await s.call("POST", `/v1/test_helpers/minting/intents/${request.body.id}/pay`, {
      key: live,
      body: { amount: 5.75, currency: "USDT", network: "TRC20" }
    })
    const done = await s.call("GET", pathOf(request.body.link))
    expect(done.text).toContain("Paid in full")
    expect(done.text).not.toContain('data-testid="addresses"')
    expect(done.text).not.toContain("Pay before")
    // a payment intent in a final state no longer asks to be paid
    const { secret_key_test: test } = await s.business()
    const intent = await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 100 } } })
    expect((await s.call("GET", pathOf(intent.body.payment_link))).text).toContain("Pay by mobile money")
    await s.call("POST", `/v1/payments/${intent.body.payment_intent_id}/cancel`, { key: test })
    const cancelled = (await s.call("GET", pathOf(intent.body.payment_link))).text
    expect(cancelled).toContain("This payment was cancelled")
    expect(cancelled).not.toContain("Pay before")
    // one that expired says so: nobody cancelled it
    const lapsing = await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 100 } } })
    await s.call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 31 * 60 } })
    const expired = (await s.call("GET", pathOf(lapsing.body.payment_link))).text
    expect(expired).toContain("This payment expired")
    expect(expired).toContain('data-status="cancelled">Expired<')
    expect(expired).not.toContain("Pay before")
  })

  it("tell a payer what is left to pay or was paid beyond it, reload while a payment is awaited, and lead back to the business", async () => {
    s = setup()
    const { secret_key_live: live, secret_key_test: test } = await s.business({ name: "Kairaba Coffee" })
    const pay = (id: string, amount: number) =>
      s?.call("POST", `/v1/test_helpers/minting/intents/${id}/pay`, {
        key: live,
        body: { amount, currency: "USDT", network: "TRC20" }
      })
    const request = await s.call("POST", "/v1/minting/intents", { key: live, body: { amount: 20 } })
    const page = async (link: string) => (await (s as NonNullable<typeof s>).call("GET", pathOf(link))).text
    const fresh = await page(request.body.link)
    expect(fresh).not.toContain("Left to pay")
    expect(fresh).toContain('<meta http-equiv="refresh" content="15">')
    await pay(request.body.id, 7.123456)
    const partly = await page(request.body.link)
    expect(partly).toContain("<dt>Left to pay</dt><dd><bdi>12.876544 USD</bdi></dd>")
    expect(partly).toContain('http-equiv="refresh"')
    expect(partly).toContain(
      "<title>Stablecoin payment to Kairaba Coffee: Pay with USDT or USDC, 20.00 USD (Partially paid)</title>"
    )
    await pay(request.body.id, 14)
    const over = await page(request.body.link)
    expect(over).toContain("<dt>Paid more than asked</dt><dd><bdi>1.123456 USD</bdi></dd>")
    expect(over).not.toContain("Left to pay")
    expect(over).not.toContain('http-equiv="refresh"')
    // expired after a part was paid: the page says where that money is
    const lapsing = await s.call("POST", "/v1/minting/intents", {
      key: live,
      body: { amount: 10, expires_at: new Date(Date.now() + 60_000).toISOString() }
    })
    await pay(lapsing.body.id, 2.5)
    await s.call("POST", "/v1/test_helpers/clock/advance", { key: live, body: { seconds: 120 } })
    const lapsed = await page(lapsing.body.link)
    expect(lapsed).toContain(
      "<dt>What you paid</dt><dd><bdi>Received by Kairaba Coffee: contact them about it</bdi></dd>"
    )
    expect(lapsed).not.toContain("Left to pay")

    // a payment intent leads back to the business: cancel_url while open and once it did not succeed, return_url once paid
    const intent = async () =>
      (
        await (s as NonNullable<typeof s>).call("POST", "/v1/payments", {
          key: test,
          body: {
            data: { amount: 100, return_url: "https://shop.example/ok?o=1&x=2", cancel_url: "https://shop.example/no" }
          }
        })
      ).body
    const open = await intent()
    const awaiting = await page(open.payment_link)
    expect(awaiting).toContain('<a href="https://shop.example/no" rel="noreferrer"><bdi>Leave without paying</bdi></a>')
    expect(awaiting).toContain('http-equiv="refresh"')
    await s.call("POST", `/v1/test_helpers/payments/${open.payment_intent_id}/succeed`, { key: test })
    const paid = await page(open.payment_link)
    expect(paid).toContain(
      '<a href="https://shop.example/ok?o=1&amp;x=2" rel="noreferrer"><bdi>Back to Kairaba Coffee</bdi></a>'
    )
    expect(paid).not.toContain("shop.example/no")
    expect(paid).not.toContain('http-equiv="refresh"')
    const failing = await intent()
    await s.call("POST", `/v1/test_helpers/payments/${failing.payment_intent_id}/fail`, { key: test })
    const failed = await page(failing.payment_link)
    expect(failed).toContain('<a href="https://shop.example/no" rel="noreferrer"><bdi>Back to Kairaba Coffee</bdi></a>')
    expect(failed).not.toContain("shop.example/ok")
    // without the URLs, no links
    const plain = await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 100 } } })
    expect(await page(plain.body.payment_link)).not.toContain('data-testid="links"')
  })

  it("an invoice's page: its number in the heading, amounts grouped; once paid, says so with the day, no due date", async () => {
    s = setup()
    const { secret_key_test: test } = await s.business()
    const created = await s.call("POST", "/v1/invoices", {
      key: test,
      body: {
        data: {
          customer: "c",
          line_items: [{ item: "Rice, 50 kg bag", quantity: 1000, unit_price: 1350.5 }],
          due_date: "2026-12-10"
        }
      }
    })
    const open = (await s.call("GET", pathOf(created.body.payment_link))).text
    expect(open).toContain('<h1 data-testid="heading"><bdi>Invoice 1</bdi></h1>')
    expect(open).toContain("1,350,500.00 GMD")
    expect(open).toContain("<dt>Due</dt><dd><bdi>10 Dec 2026</bdi></dd>")
    expect(open).toContain('<td class="n q">1,000</td>')
    // when it was issued, and the currency of the price columns
    expect(open).toMatch(/<dt>Issued<\/dt><dd><bdi>\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC<\/bdi><\/dd>/)
    expect(open).toContain('<th class="n">Unit price (GMD)</th><th class="n">Total (GMD)</th>')
    await s.call("POST", `/v1/test_helpers/invoices/${created.body.id}/customer_pay`, { key: test })
    const paid = (await s.call("GET", pathOf(created.body.payment_link))).text
    expect(paid).toContain('<h1 data-testid="heading"><bdi>Paid in full</bdi></h1>')
    expect(paid).toContain('data-status="paid">Paid<')
    expect(paid).toMatch(/<dt>Paid on<\/dt><dd><bdi>\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC<\/bdi><\/dd>/)
    expect(paid).toContain("<dt>Invoice number</dt><dd><bdi>1</bdi></dd>")
    expect(paid).not.toContain("<dt>Due</dt>")
  })

  it("open from a link a mail or chat app changed: a slash added at the end, the id in capitals", async () => {
    s = setup()
    const { secret_key_test: test } = await s.business()
    const link = await s.call("POST", "/v1/payment-links", { key: test, body: { data: { amount: 7, title: "Tea" } } })
    const path = pathOf(link.body.url)
    const id: string = link.body.id
    for (const changed of [`${path}/`, path.replace(id, id.toUpperCase()), `${path.replace(id, id.toUpperCase())}/`]) {
      const page = await s.call("GET", changed)
      expect(page.status, changed).toBe(200)
      expect(page.text, changed).toContain('<h1 data-testid="heading"><bdi>Tea</bdi></h1>')
    }
    // anything else after the id is still no page
    expectError(await s.call("GET", `${path}/x`), 404, "not_found")
  })

  it("answer a person over the rate limit with a page that reloads itself, an API client with the error object", async () => {
    s = setup({ rateLimit: { rps: 0.5, burst: 2 } })
    const { secret_key_test: test } = await s.business() // the address's first request
    const link = await s.call("POST", "/v1/payment-links", { key: test, body: { data: { amount: 7 } } })
    const html = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" }
    expect((await s.call("GET", pathOf(link.body.url), { headers: html })).status).toBe(200)
    const busy = await s.call("GET", pathOf(link.body.url), { headers: html })
    expect(busy.status).toBe(429)
    expect(busy.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(busy.headers.get("retry-after")).toBe("2")
    expect(busy.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(busy.text).toContain('<meta http-equiv="refresh" content="2">')
    expect(busy.text).toContain("Too many requests")
    expectError(await s.call("GET", pathOf(link.body.url)), 429, "rate_limit_exceeded")
    // not a page: the error object, whatever the Accept header says
    expectError(await s.call("GET", "/v1/openapi.json", { headers: html }), 429, "rate_limit_exceeded")
  })

  it("answer 404 not_found for a draft, an unknown id, or an id under another kind's path", async () => {
    s = setup()
    const { secret_key_test: test } = await s.business()
    const draft = await s.call("POST", "/v1/invoices/draft", {
      key: test,
      body: { data: { amount: 5, customer: "c" } }
    })
    const link = await s.call("POST", "/v1/payment-links", { key: test, body: { data: { amount: 1 } } })
    for (const path of [
      `/pay/invoices/${draft.body.id}`,
      "/pay/requests/00000000-0000-4000-8000-000000000000",
      `/pay/requests/${link.body.id}`,
      `/pay/${link.body.id}`,
      "/pay/%00",
      "/pay/invoices/a%00b"
    ]) {
      expectError(await s.call("GET", path), 404, "not_found")
    }
    // a browser following a mistyped link gets a page (no JSON to a person); an API client, the error object
    const unknown = "/pay/00000000-0000-4000-8000-000000000000"
    const browser = await s.call("GET", unknown, {
      headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" }
    })
    expect(browser.status).toBe(404)
    expect(browser.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(browser.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(browser.text).toContain("This payment page does not exist")
    for (const accept of ["*/*", "application/json", "application/json, text/html"]) {
      expectError(await s.call("GET", unknown, { headers: { accept } }), 404, "not_found")
    }
    // another method on a page's path: 404 with Allow, as for every known path
    const post = await s.call("POST", `/pay/links/${link.body.id}`)
    expectError(post, 404, "not_found")
    expect(post.headers.get("allow")).toBe("GET")
    // the page is there once the draft is published
    await s.call("POST", `/v1/invoices/${draft.body.id}/send`, { key: test })
    expect((await s.call("GET", `/pay/invoices/${draft.body.id}`)).status).toBe(200)
  })
})
