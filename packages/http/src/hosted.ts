/**
 * The hosted pages behind the links the API hands out (`link` of a payment
 * request, `payment_link` of a payment intent or invoice, `url` of a payment
 * link): a plain HTML page of public facts, no script. Every text that came
 * from a caller (a link's title, an item's name, notes) is escaped.
 */
import { createHash } from "node:crypto"
import type { HostedPages } from "@xaalis/engine"

/** The hosted page paths, as the engine builds its links: `${base_url}/pay/…`. */
export const hostedRoutes = [
  { path: "/pay/requests/:id", kind: "payment_request" },
  { path: "/pay/links/:id", kind: "payment_link" },
  { path: "/pay/invoices/:id", kind: "invoice" },
  { path: "/pay/:id", kind: "payment_intent" }
] as const satisfies ReadonlyArray<{ readonly path: string; readonly kind: HostedPages.HostedKind }>

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }
/** Text for HTML content and attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => escapes[c] as string)

// long caller text wraps anywhere (never widens the page), the number columns and the network and coin
// of an address never wrap (only the address breaks: "TRC2/0" on a phone could be misread), and every
// caller text is isolated (<bdi>), so bidi controls in it cannot reorder the text around it; the blocks
// that hold caller text clip what they draw outside themselves (combining marks stacked on a letter
// cannot cover the merchant's line); on a phone each line item is its name on a line, then quantity ×
// unit price and the total, the total moving to a line of its own when they do not fit side by side
// (an amount is never cut or split); the amount asked never breaks inside its number, and shrinks on a
// narrow screen instead
const style = `body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;overflow-wrap:anywhere}
h1{font-size:1.4rem;margin:0 0 .25rem}.amount{font-size:clamp(1.25rem,7.5vw,2rem);font-weight:600;margin:.5rem 0;overflow-wrap:normal}
.num{white-space:nowrap}h1,dd,.by,.items td:first-child{overflow:hidden}
.status{display:inline-block;padding:.1rem .5rem;border-radius:1rem;background:#e3e8ff;font-size:.9rem}
.status[data-status=partially_paid],.status[data-status=processing]{background:#fff0c2}
.status[data-status=completed],.status[data-status=successful],.status[data-status=paid]{background:#d3f0d9}
.status[data-status=failed],.status[data-status=cancelled],.status[data-status=expired],.status[data-status=overdue],.status[data-status=inactive]{background:#fbd9dc}
.test{background:#fff3cd;border:1px solid #e0c36a;padding:.5rem .75rem;border-radius:.4rem;margin-bottom:1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{color:#555}dd{margin:0;white-space:pre-wrap}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{text-align:left;padding:.3rem;border-bottom:1px solid #ddd;vertical-align:top}
td.n,th.n{text-align:right}td.n{white-space:nowrap}code{word-break:break-all;font-size:.95rem}
.addresses th,.addresses td:not(:last-child){white-space:nowrap}.links a{color:#0b4fb3}
@media (max-width:32rem){.items tr:first-child{display:none}.items tr{display:flex;flex-wrap:wrap;column-gap:.4rem;border-bottom:1px solid #ddd;padding:.3rem 0}
.items td{border:0;padding:0}.items td:first-child{flex-basis:100%;text-align:left}.items td:last-child{margin-left:auto}.items td.q::after{content:" \\00d7"}}`

const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`

/** Headers of a hosted page: no script at all, only its own inline style; never cached (the status changes). */
export const hostedHeaders: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // frame-ancestors below; this for browsers that ignore it
  "x-frame-options": "DENY",
  "content-security-policy": [
    "default-src 'none'",
    `style-src ${hash(style)}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

const labels: Record<HostedPages.HostedKind, string> = {
  payment_request: "Stablecoin payment",
  payment_intent: "Payment",
  payment_link: "Payment link",
  invoice: "Invoice"
}

/** The line that names who is paid: a payment goes to the merchant, an invoice comes from it. */
const towards: Record<HostedPages.HostedKind, string> = {
  payment_request: "to",
  payment_intent: "to",
  payment_link: "to",
  invoice: "from"
}

/** Bidi controls (embeddings, overrides, isolates) removed: `<title>` cannot isolate them. */
const stripBidi = (text: string): string => text.replace(/[\u202a-\u202e\u2066-\u2069]/g, "")

/** The HTML of one hosted page. */
export const hostedHtml = (page: HostedPages.HostedPage): string => {
  const e = escapeHtml
  /** Caller text (a title, an item, notes, a merchant's name): escaped, and isolated so bidi controls stay inside it. */
  const t = (text: string) => `<bdi>${escapeHtml(text)}</bdi>`
  const facts = page.facts.map(([k, v]) => `<dt>${e(k)}</dt><dd>${t(v)}</dd>`).join("")
  const addresses =
    page.addresses.length === 0
      ? ""
      : `<h2>Send to one of these addresses</h2><table class="addresses" data-testid="addresses"><tr><th>Network</th><th>Coin</th><th>Address</th></tr>${page.addresses
          .map((a) => `<tr><td>${e(a.network)}</td><td>${e(a.coin)}</td><td><code>${e(a.address)}</code></td></tr>`)
          .join("")}</table>`
  const items =
    page.items.length === 0
      ? ""
      : `<table class="items" data-testid="items"><tr><th>Item</th><th class="n">Quantity</th><th class="n">Unit price (${e(page.amount.currency)})</th><th class="n">Total (${e(page.amount.currency)})</th></tr>${page.items
          .map(
            (i) =>
              `<tr><td>${t(i.item)}</td><td class="n q">${e(i.quantity)}</td><td class="n">${e(i.unit_price)}</td><td class="n">${e(i.total_price)}</td></tr>`
          )
          .join("")}</table>`
  const links =
    page.links.length === 0
      ? ""
      : `<p class="links" data-testid="links">${page.links
          .map((l) => `<a href="${e(l.href)}" rel="noreferrer">${t(l.label)}</a>`)
          .join(" ")}</p>`
  // tabs and history tell pages apart: who is paid, how much, and how it stands
  const who = page.merchant === "" ? "" : ` ${towards[page.kind]} ${stripBidi(page.merchant)}`
  const title = `${labels[page.kind]}${who}: ${stripBidi(page.heading)}, ${page.amount.value} ${page.amount.currency} (${page.status_text})`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${e(title)}</title>
${page.refresh_seconds === null ? "" : `<meta http-equiv="refresh" content="${page.refresh_seconds}">\n`}<style>${style}</style>
</head>
<body>
<main>
${page.test_mode ? '<p class="test" data-testid="test-mode">Test mode: nothing paid here is real.</p>\n' : ""}<p class="by" data-testid="by">${e(labels[page.kind])}${page.merchant === "" ? "" : ` ${towards[page.kind]} <strong data-testid="merchant">${t(page.merchant)}</strong>`}</p>
<h1 data-testid="heading">${t(page.heading)}</h1>
<p class="amount" data-testid="amount"><span class="num">${e(page.amount.value)}</span> ${e(page.amount.currency)}</p>
<p>Status: <span class="status" data-testid="status" data-status="${e(page.status)}">${e(page.status_text)}</span></p>
${facts === "" ? "" : `<dl>${facts}</dl>`}
${items}${addresses}${links}
</main>
</body>
</html>
`
}

/**
 * Whether an `Accept` header puts HTML before JSON: a browser's does (it
 * starts with `text/html`); curl's and fetch's defaults (any type) and an API
 * client's (`application/json`) do not.
 */
export const prefersHtml = (accept: string | null): boolean => {
  if (accept === null) return false
  const html = accept.indexOf("text/html")
  const json = accept.indexOf("application/json")
  return html !== -1 && (json === -1 || html < json)
}

/** A page with only a heading and a line (not found, busy): the hosted pages' head and style. */
const notice = (title: string, heading: string, line: string, refresh_seconds?: number): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
${refresh_seconds === undefined ? "" : `<meta http-equiv="refresh" content="${refresh_seconds}">\n`}<title>${title}</title>
<style>${style}</style>
</head>
<body>
<main>
<h1 data-testid="heading">${heading}</h1>
<p>${line}</p>
</main>
</body>
</html>
`

/** The page a browser gets for a payment link that leads nowhere (404). */
export const hostedNotFoundHtml = notice(
  "Payment page not found",
  "This payment page does not exist",
  "Check the link you were given, or ask the business that sent it for a new one."
)

/** The page a browser gets for a hosted page while its address is over the rate limit (429): it reloads when it may. */
export const hostedBusyHtml = (retry_after_seconds: number): string => {
  const seconds = Math.max(1, Math.ceil(retry_after_seconds))
  return notice(
    "Too many requests",
    "Too many requests",
    `This page will open again by itself in ${seconds} s.`,
    seconds
  )
}
