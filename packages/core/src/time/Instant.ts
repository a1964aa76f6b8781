/**
 * Pure UTC calendar arithmetic on epoch milliseconds. The core reads no clock and
 * does not use the global `Date`: instants are numbers handed in by the caller.
 * Civil-date conversions follow Howard Hinnant's `days_from_civil` algorithms.
 */
export interface Civil {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  readonly second: number
  readonly millisecond: number
}

export const MINUTE_MS = 60_000
export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

/** Days since 1970-01-01 of a proleptic Gregorian date. */
export const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

export const civilFromDays = (days: number): { year: number; month: number; day: number } => {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

export const toCivil = (ms: number): Civil => {
  const days = Math.floor(ms / DAY_MS)
  const rest = ms - days * DAY_MS
  return {
    ...civilFromDays(days),
    hour: Math.floor(rest / HOUR_MS),
    minute: Math.floor((rest % HOUR_MS) / MINUTE_MS),
    second: Math.floor((rest % MINUTE_MS) / 1000),
    millisecond: rest % 1000
  }
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0")

/** `2026-11-21T09:05:00.000Z` */
export const toIso = (ms: number): string => {
  const c = toCivil(ms)
  return `${pad(c.year, 4)}-${pad(c.month)}-${pad(c.day)}T${pad(c.hour)}:${pad(c.minute)}:${pad(c.second)}.${pad(c.millisecond, 3)}Z`
}

/** `2026-11-21` */
export const toIsoDate = (ms: number): string => {
  const c = toCivil(ms)
  return `${pad(c.year, 4)}-${pad(c.month)}-${pad(c.day)}`
}

const daysInMonth = (year: number, month: number): number =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/

/**
 * A parsed ISO 8601 instant. `date_only` tells a calendar date (`YYYY-MM-DD`,
 * taken at 00:00 UTC) from a date-time. A date-time without `Z` or an offset is
 * ISO 8601 local time, and the service's local time is The Gambia's: GMT all
 * year (no daylight saving), so it reads as UTC.
 */
export interface ParsedIso {
  readonly ms: number
  readonly date_only: boolean
}

export const parseIso = (text: string): ParsedIso | undefined => {
  if (text.length > 40) return undefined
  const m = ISO.exec(text)
  if (m === null) return undefined
  const [, ys, mos, ds, hs, mis, ss = "0", frac = "0", zone] = m
  const year = Number(ys)
  const month = Number(mos)
  const day = Number(ds)
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  const base = daysFromCivil(year, month, day) * DAY_MS
  if (hs === undefined) return { ms: base, date_only: true }
  const hour = Number(hs)
  const minute = Number(mis)
  const second = Number(ss)
  if (hour > 23 || minute > 59 || second > 59) return undefined
  let offset = 0
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "")
    const oh = Number(digits.slice(0, 2))
    const om = Number(digits.slice(2))
    if (oh > 23 || om > 59) return undefined
    offset = (zone[0] === "-" ? -1 : 1) * (oh * HOUR_MS + om * MINUTE_MS)
  }
  const millis = Number(frac.padEnd(3, "0").slice(0, 3))
  return { ms: base + hour * HOUR_MS + minute * MINUTE_MS + second * 1000 + millis - offset, date_only: false }
}

/** Start of the next UTC day after `ms` (used for date-only due dates). */
export const nextUtcMidnight = (ms: number): number => (Math.floor(ms / DAY_MS) + 1) * DAY_MS
