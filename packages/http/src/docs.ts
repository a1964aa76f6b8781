import { createHash } from "node:crypto"

/**
 * The interactive documentation page served at `GET /docs`: one self-contained
 * HTML document (inline style and script, no CDN, no external request; its
 * Content-Security-Policy allows nothing else). It loads `/v1/openapi.json`
 * from the same origin and mount prefix, lists every operation with its
 * parameters and schemas, and has a try-it form per operation (bearer key,
 * path and query parameters, JSON body, Idempotency-Key) that sends the
 * request and shows the status and body.
 */

const style = `
:root { font-family: system-ui, sans-serif; color: #1b1b1b; background: #fafafa; }
body { margin: 0 auto; max-width: 1100px; padding: 1rem 1.5rem 4rem; }
header { position: sticky; top: 0; background: #fafafa; padding: .5rem 0; border-bottom: 1px solid #ddd; z-index: 1; }
h1 { font-size: 1.4rem; margin: .2rem 0; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .4rem; }
label { display: block; font-size: .85rem; margin: .4rem 0 .1rem; color: #444; }
input, textarea, select { font: inherit; font-size: .9rem; width: 100%; box-sizing: border-box; padding: .3rem; }
textarea { font-family: ui-monospace, monospace; min-height: 7rem; }
details.op { background: #fff; border: 1px solid #ddd; border-radius: 6px; margin: .4rem 0; }
details.op > summary { cursor: pointer; padding: .5rem .7rem; }
code { overflow-wrap: anywhere; word-break: break-all; }
details.op > div { padding: 0 .9rem .9rem; }
.method { display: inline-block; min-width: 3.5rem; font-weight: 700; font-family: ui-monospace, monospace; }
.GET { color: #0b6e2e; } .POST { color: #0b4f9e; } .PUT { color: #8a5a00; }
.badge { font-size: .75rem; background: #eee; border-radius: 4px; padding: 0 .3rem; margin-left: .4rem; }
pre { background: #f3f3f3; padding: .5rem; overflow: auto; max-height: 24rem; font-size: .8rem; }
button { font: inherit; padding: .35rem 1rem; margin-top: .6rem; cursor: pointer; }
.status { font-weight: 700; margin-top: .6rem; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.cols > div { min-width: 0; }
@media (max-width: 800px) { .cols { grid-template-columns: 1fr; } }
`

const script = `
"use strict";
const base = location.pathname.replace(/\\/docs\\/?$/, "");
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
};
const pretty = (v) => JSON.stringify(v, null, 2);
// the descriptions' \`code\` spans as code (as text nodes: nothing in a description is read as HTML)
const prose = (text) => (text || "").split("\`").map((part, i) => (i % 2 === 1 ? el("code", {}, part) : part));
const show = (schema, doc) => {
  if (!schema.$ref) return pretty(schema);
  const name = schema.$ref.split("/").pop();
  return name + " = " + pretty(doc.components.schemas[name]);
};
// a value the API accepts for a schema: its own examples, const, default or first enum member when it
// has one, a plausible value by type and format otherwise; objects get their required properties
const within = (schema, v) => {
  if (schema.exclusiveMinimum !== undefined && v <= schema.exclusiveMinimum) v = schema.exclusiveMinimum + 1;
  if (schema.minimum !== undefined && v < schema.minimum) v = schema.minimum;
  if (schema.maximum !== undefined && v > schema.maximum) v = schema.maximum;
  return v;
};
const sampleString = (schema) => {
  // case-insensitive literals are documented, not enumerated: "One of TRC20, ARC (case-insensitive)"
  const listed = /^One of ([^,()]+)[,(]/.exec(schema.description || "");
  if (listed) return listed[1].trim();
  switch (schema.format) {
    case "uri": return "https://example.com";
    case "email": return "customer@example.com";
    case "date-time": return new Date().toISOString();
    case "date": return new Date().toISOString().slice(0, 10);
    case "uuid": return "00000000-0000-4000-8000-000000000000";
  }
  const text = "example";
  return schema.minLength > text.length ? text.padEnd(schema.minLength, "x") : text.slice(0, schema.maxLength || text.length);
};
const example = (schema, doc, depth) => {
  if (!schema || depth > 8) return undefined;
  if (schema.$ref) return example(doc.components.schemas[schema.$ref.split("/").pop()], doc, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const choice = schema.oneOf || schema.anyOf;
  if (choice) {
    for (const member of choice) {
      if (member.type === "null") continue;
      const v = example(member, doc, depth + 1);
      if (v !== undefined) return v;
    }
    return choice.some((member) => member.type === "null") ? null : undefined;
  }
  switch (Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type) {
    case "object": {
      const out = {};
      for (const name of schema.required || []) {
        const v = example((schema.properties || {})[name], doc, depth + 1);
        out[name] = v === undefined ? null : v;
      }
      return out;
    }
    case "array": {
      const n = schema.minItems || 0;
      const item = n > 0 ? example(schema.items, doc, depth + 1) : undefined;
      return Array.from({ length: n }, () => item);
    }
    case "integer": return Math.ceil(within(schema, 1));
    case "number": return within(schema, 1);
    case "boolean": return false;
    case "string": return sampleString(schema);
    case "null": return null;
    default: return undefined;
  }
};
// bodies whose validity rests on rules a JSON Schema does not state (one of two fields, minimums that
// depend on the network or the rate), and the rate helper, whose example is the default rate, not 1 GMD per USD
const bodies = {
  createInvoice: { data: { amount: 100, customer_email: "customer@example.com", customer_name: "Awa Jallow" } },
  createDraftInvoice: { data: { amount: 100, customer_email: "customer@example.com", customer_name: "Awa Jallow" } },
  createConversion: { pay_amount: 25 },
  createPaymentRequest: { amount: 10 },
  setSandboxRate: { rate: 70 }
};
const prefill = (op, doc) => {
  if (Object.hasOwn(bodies, op.operationId)) return bodies[op.operationId];
  const v = example(op.requestBody.content["application/json"].schema, doc, 0);
  return v === undefined || v === null ? {} : v;
};
// the keys of the sandbox business created on this page: its live key is used for live-only operations
// while the key field holds its test key
let sandboxKeys = null;
const operation = (doc, path, method, op) => {
  const id = op.operationId;
  const inputs = {};
  const form = el("div", {});
  // every control has its label (for=id): ids are unique per operation
  const field = (name, testid, placeholder) => {
    const fieldId = "f-" + id + "-" + name.replace(/[^A-Za-z0-9_-]/g, "_");
    const input = el("input", { id: fieldId, "data-testid": testid, placeholder: placeholder || "" });
    inputs[name] = input;
    form.append(el("label", { for: fieldId }, name), input);
  };
  const params = op.parameters || [];
  for (const p of params) field(p.in + ":" + p.name, "param-" + id + "-" + p.name, p.in + (p.required ? ", required" : ""));
  let body = null;
  if (op.requestBody) {
    const bodyId = "f-" + id + "--body";
    body = el("textarea", { id: bodyId, "data-testid": "body-" + id, spellcheck: "false" }, pretty(prefill(op, doc)));
    form.append(el("label", { for: bodyId }, "JSON body"), body);
  }
  const send = el("button", { "data-testid": "send-" + id, type: "button" }, "Send");
  // announced by screen readers when it changes (the answer of a try-it)
  const status = el("div", { class: "status", "data-testid": "status-" + id, role: "status", "aria-live": "polite" });
  const output = el("pre", { "data-testid": "response-" + id });
  send.addEventListener("click", async () => {
    let url = base + path;
    const query = new URLSearchParams();
    const headers = {};
    for (const p of params) {
      const v = inputs[p.in + ":" + p.name].value;
      if (v === "" && p.in === "path") {
        // sent as it is, the path would ask for an object whose id is "{id}"
        status.textContent = "Fill in " + p.name + " first.";
        output.textContent = "";
        return;
      }
      if (v === "") continue;
      if (p.in === "path") url = url.replace("{" + p.name + "}", encodeURIComponent(v));
      else if (p.in === "query") query.set(p.name, v);
      else headers[p.name] = v;
    }
    if (query.size > 0) url += "?" + query;
    let key = document.getElementById("key").value.trim();
    // conversions and payment requests take a live key: the business created on this page has one
    const swapped = op["x-live-key-only"] && sandboxKeys !== null && key === sandboxKeys.test;
    if (swapped) key = sandboxKeys.live;
    if (key !== "") headers.Authorization = "Bearer " + key;
    const init = { method: method.toUpperCase(), headers };
    if (body !== null && body.value.trim() !== "") {
      headers["Content-Type"] = "application/json";
      init.body = body.value;
    }
    status.textContent = "…";
    output.textContent = "";
    try {
      const res = await fetch(url, init);
      const text = await res.text();
      status.textContent =
        res.status + " " + res.statusText + (swapped ? " (sent with the business's live key: this operation takes a live key)" : "");
      let shown = text;
      try {
        const parsed = JSON.parse(text);
        shown = pretty(parsed);
        const keyInput = document.getElementById("key");
        if (parsed && parsed.secret_key_test && parsed.secret_key_live) {
          if (keyInput.value === "") keyInput.value = parsed.secret_key_test;
          if (keyInput.value === parsed.secret_key_test) sandboxKeys = { test: parsed.secret_key_test, live: parsed.secret_key_live };
        }
      } catch {}
      output.textContent = shown;
    } catch (e) {
      status.textContent = "network error";
      output.textContent = String(e);
    }
  });
  const schemas = el("div", { class: "cols" });
  if (op.requestBody) {
    schemas.append(el("div", {}, el("h3", {}, "Request body"), el("pre", {}, show(op.requestBody.content["application/json"].schema, doc))));
  }
  const ok = Object.entries(op.responses).find(([code]) => code.startsWith("2"));
  if (ok) schemas.append(el("div", {}, el("h3", {}, "Response " + ok[0]), el("pre", {}, show(ok[1].content["application/json"].schema, doc))));
  const errors = Object.entries(op.responses).filter(([code]) => !code.startsWith("2")).map(([code, r]) => code + " " + r.description);
  const badges = [];
  if (op.security && op.security.length === 0) badges.push(el("span", { class: "badge" }, "no key"));
  if (op["x-live-key-only"]) badges.push(el("span", { class: "badge" }, "live key"));
  if (op["x-sandbox-only"]) badges.push(el("span", { class: "badge" }, "sandbox"));
  return el(
    "details",
    { class: "op", "data-testid": "op-" + id, id: "op-" + id },
    el("summary", {}, el("span", { class: "method " + method.toUpperCase() }, method.toUpperCase()), " ", el("code", {}, path), " — " + op.summary, ...badges),
    el("div", {}, el("p", {}, ...prose(op.description)), schemas, el("p", {}, "Errors: " + errors.join("; ")), el("h3", {}, "Try it"), form, send, status, output)
  );
};
const main = async () => {
  const root = document.getElementById("ops");
  root.textContent = "Loading…";
  let doc;
  try {
    const res = await fetch(base + "/v1/openapi.json");
    doc = await res.json();
  } catch (e) {
    root.textContent = "Could not load " + base + "/v1/openapi.json: " + e;
    return;
  }
  root.textContent = "";
  document.getElementById("title").textContent = doc.info.title + " " + doc.info.version;
  document.getElementById("intro").append(...prose(doc.info.description));
  if (!Object.hasOwn(doc.paths, "/v1/test_helpers/businesses")) {
    document.getElementById("key-label").textContent = "Secret key (Authorization: Bearer …).";
  }
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = (op.tags || ["Other"])[0];
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push(operation(doc, path, method, op));
    }
  }
  for (const [tag, ops] of byTag) root.append(el("h2", {}, tag), ...ops);
  const components = el("details", { class: "op" }, el("summary", {}, "Schemas (components)"));
  const list = el("div", {});
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    list.append(el("h3", { id: "schema-" + name }, name), el("pre", {}, pretty(schema)));
  }
  components.append(list);
  root.append(el("h2", {}, "Schemas"), components);
  root.setAttribute("data-ready", "true");
};
main();
`

const hash = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`

/** The page itself. */
export const docsHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>xaalis API</title>
<link rel="icon" href="data:,">
<style>${style}</style>
</head>
<body>
<header>
<h1 id="title">xaalis API</h1>
<label for="key" id="key-label">Secret key (Authorization: Bearer …). Create a sandbox business below to get one.</label>
<input id="key" data-testid="key" autocomplete="off" spellcheck="false" placeholder="sk_test_… or sk_live_…">
</header>
<p id="intro"></p>
<main id="ops" data-testid="ops"><noscript><p data-testid="noscript">This page needs JavaScript to list the operations and try them. Without it, read the API description: <a href="v1/openapi.json">v1/openapi.json</a> (OpenAPI 3.1, next to this page).</p></noscript></main>
<script>${script}</script>
</body>
</html>
`

/** Headers of the page: only its own inline style and script, and requests to its own origin. */
/**
 * The page as served at `/docs/`: its no-script link goes one folder up, to
 * the API description beside `/docs` (from `/docs/`, `v1/openapi.json` would
 * be `/docs/v1/openapi.json`).
 */
export const docsHtmlInFolder = docsHtml.replace('<a href="v1/openapi.json">', '<a href="../v1/openapi.json">')

export const docsHeaders: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-cache",
  "x-content-type-options": "nosniff",
  // a secret key is typed on this page: no Referer leaves it, no frame shows it (older browsers too)
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": [
    "default-src 'none'",
    `script-src ${hash(script)}`,
    `style-src ${hash(style)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}
