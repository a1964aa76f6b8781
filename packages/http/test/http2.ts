import type { ClientHttp2Session } from "node:http2"

/** One HTTP/2 request on `session` (pseudo-headers included in `headers`): its status and body, read whole. */
export const h2Send = (
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body?: string
): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((resolve, reject) => {
    const stream = session.request(headers)
    let status = 0
    let text = ""
    stream.setEncoding("utf8")
    stream.on("response", (h) => {
      status = Number(h[":status"])
    })
    stream.on("data", (chunk: string) => {
      text += chunk
    })
    stream.on("end", () => resolve({ status, body: text }))
    stream.on("error", reject)
    stream.end(body)
  })
