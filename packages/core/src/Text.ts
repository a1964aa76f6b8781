/** Characters of `s` as the limits count them: Unicode code points (JSON Schema's `maxLength` counts the same way). */
export const characters = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}
