/** What crash-child.ts does, shared with crash.test.ts (which must not import the child itself). */

export const CONVERSIONS = 40
/** 0.10 USD per transfer: each credits about 6.79 GMD of a 5,000 GMD conversion. */
export const AMOUNT = 100_000n
/** More than a child can apply before it is killed. */
export const MAX_TRANSFERS = 20_000
/** The hash of transfer `i` of `round`. */
export const hashOf = (round: string, i: number): string => `0x${round}f${i.toString(16)}`
