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
