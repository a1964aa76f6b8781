/**
 * Retry schedule of webhook deliveries (decisions §8): exponential backoff on
 * non-2xx, time-out or network error, for at least 3 days, then `failed`.
 *
 * Pure and deterministic. There is deliberately no jitter: jitter exists to
 * spread a thundering herd of clients retrying in lock-step, but here a single
 * dispatcher drains rows in `due_at` order, in bounded batches, and rows are
 * already spread by their creation time (each row's schedule starts at its own
 * `first_attempt_due`). Determinism lets the sandbox clock and the tests predict
 * every attempt time exactly.
 *
 * Schedule for a receiver that always fails (seconds after the first attempt):
 * 0, 30, 90, 210, 450, 930, 1890, 3810, 7650, 15330, 30690 (~8.5 h), then every
 * 6 h up to 246690 (~68.5 h), then one last attempt exactly at the 3-day horizon
 * (259200): 22 attempts in all, after which the row is `failed`.
 */

/** Delay after the first failed attempt. */
export const base_delay_ms = 30_000
/** The delay stops doubling at this value. */
export const delay_max_ms = 6 * 60 * 60 * 1000
/** How long after `first_attempt_due` a row keeps being retried. */
export const horizon_ms = 3 * 24 * 60 * 60 * 1000

/**
 * Delay before the next attempt, given the number of attempts made so far
 * (including the one that just failed): 30 s × 2^(attempts − 1), capped at 6 h.
 * `attempts < 1` is treated as 1.
 */
export const nextAttemptDelay = (attempts: number): number => {
  const n = Math.max(1, Math.floor(attempts))
  // 2^(n-1) overflows to Infinity for huge n; the cap makes that harmless.
  return Math.min(delay_max_ms, base_delay_ms * 2 ** (n - 1))
}

/**
 * When the next attempt of a row is due, `row` being the row after a failed
 * attempt at `now` (`attempts` already counts that attempt).
 *
 * - normally `now + nextAttemptDelay(attempts)`;
 * - if that would fall after `first_attempt_due + horizon_ms` while the horizon
 *   has not been reached yet, the horizon itself: one last attempt exactly at
 *   3 days, so that retries really last "at least 3 days" (§8) instead of
 *   stopping up to 6 h short of it;
 * - `null` once an attempt at or after the horizon has failed: the row is given
 *   up (`failed`) and waits for a manual resend.
 */
export const nextDue = (
  row: { readonly attempts: number; readonly first_attempt_due: number },
  now: number
): number | null => {
  const horizon = row.first_attempt_due + horizon_ms
  if (now >= horizon) return null
  return Math.min(now + nextAttemptDelay(row.attempts), horizon)
}
