/**
 * Characters of `s` as the limits count them: Unicode code points (JSON
 * Schema's `maxLength` counts the same way). Counting stops past `stopAfter`,
 * so checking a limit costs at most that many steps whatever the input.
 */
export const characters = (s: string, stopAfter = Number.POSITIVE_INFINITY): number => {
  let n = 0
  for (let i = 0; i < s.length && n <= stopAfter; i++, n++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
  }
  return n
}

/** `s` cut to `max` UTF-16 units, with `…` when it was longer: for user input echoed in a message. */
export const clip = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max)}…`)

/**
 * A URL whose scheme runs or embeds content where a browser follows it
 * (`javascript:`, `vbscript:`, `data:`, `blob:`, `file:`): never a redirect
 * target, whatever else a field allows.
 */
export const activeScheme = /^\s*(?:javascript|vbscript|data|blob|file)\s*:/i

/** The message that refuses an `activeScheme` URL (after the field's name). */
export const activeSchemeIssue = "must not use a javascript:, vbscript:, data:, blob: or file: URL"
