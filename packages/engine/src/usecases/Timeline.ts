import type { Conversion } from "@xaalis/core"
import { Effect } from "effect"
import { type Doc, type DuplicateKey, StoreError, type Tx, type VersionConflict } from "../ports/Store.ts"
import { newDoc, revise } from "./common.ts"

/**
 * How a conversion's timeline is stored, so that a transfer costs the same
 * whether it is the first or the ten-thousandth to one address.
 *
 * The conversion machine (`@xaalis/core`) works on the whole state: every
 * timeline entry and the key of every transfer applied. Kept whole in the
 * conversion's row, each transfer would rewrite all of it (an audit sent 3,000
 * dust transfers to one conversion on the embedded store: the row reached
 * 594 KB and the rate fell from 468 to 67 transfers/s), and a flood of dust to
 * one deposit address, cheap on some chains, would slow every transfer behind
 * it. So the row keeps only its latest `open_timeline_max` entries; when a step
 * leaves more, all but the last move, with the transfer keys, into a sealed row
 * of kind `timeline` (id `<conversion id>/<n>`), written once in the same unit
 * of work and never changed. The row counts its sealed rows in `sealed`.
 *
 * What the machine still reads of the state is in the row: the last entry (the
 * time an expiry is stamped at) and the money fields. A transfer's "applied
 * once" rests on its identity row, inserted first in the same unit (see
 * `Transfers.applyChainTransfer`), not on the keys in the state.
 */
export const open_timeline_max = 32

/**
 * A conversion as its row holds it: the latest entries, how many sealed rows
 * hold the older ones, and `canonical_keys` (see `Transfers`: set on every row
 * this version creates).
 */
export type StoredConversion = Conversion.Conversion & {
  readonly sealed?: number
  readonly canonical_keys?: true
}

/** A sealed part of a conversion's timeline, oldest first, and the keys of the transfers it records. */
export interface SealedTimeline {
  readonly timeline: ReadonlyArray<Conversion.TimelineEntry>
  readonly applied_transfers: ReadonlyArray<string>
}

/** The id of a conversion's `n`th sealed timeline row. */
export const sealedId = (conversion_id: string, n: number) => `${conversion_id}/${n}`

/**
 * What a step's new state writes: the row's data, and the sealed row to insert
 * when the timeline grew past `max` entries (undefined otherwise). The last
 * entry always stays in the row. `max` is `open_timeline_max` but in tests.
 */
export const split = (
  doc: Doc,
  state: Conversion.Conversion,
  now: number,
  max = open_timeline_max
): { readonly head: StoredConversion; readonly sealed: Doc<SealedTimeline> | undefined } => {
  const timeline = state.timeline
  if (timeline.length <= max) return { head: state, sealed: undefined }
  const n = (state as StoredConversion).sealed ?? 0
  const keep = timeline.length - 1
  const sealed = newDoc<SealedTimeline>({
    kind: "timeline",
    id: sealedId(doc.id, n),
    scope: doc.business_id === null ? null : { business_id: doc.business_id, mode: doc.mode ?? "live" },
    now,
    data: { timeline: timeline.slice(0, keep), applied_transfers: state.applied_transfers }
  })
  return { head: { ...state, timeline: timeline.slice(keep), applied_transfers: [], sealed: n + 1 }, sealed }
}

/**
 * The whole conversion of a stored row: its sealed timeline rows, oldest
 * first, then its own entries. A row with none is returned as it is (no read).
 */
export const whole = (
  tx: Tx,
  doc: Doc<StoredConversion>
): Effect.Effect<Conversion.Conversion, StoreError | VersionConflict> => {
  const n = doc.data.sealed ?? 0
  if (n === 0) return Effect.succeed(doc.data)
  return Effect.map(
    Effect.forEach(
      Array.from({ length: n }, (_, i) => sealedId(doc.id, i)),
      (id) =>
        Effect.flatMap(tx.get("timeline", id), (row) =>
          row === undefined
            ? Effect.fail(new StoreError({ message: `The sealed timeline row ${id} is missing.` }))
            : Effect.succeed(row.data as SealedTimeline)
        )
    ),
    (parts) => {
      const { sealed: _, ...head } = doc.data
      return {
        ...head,
        timeline: [...parts.flatMap((p) => p.timeline), ...head.timeline],
        applied_transfers: [...parts.flatMap((p) => p.applied_transfers), ...head.applied_transfers]
      }
    }
  )
}

/**
 * Replaces a conversion's row with `state` (the version after `doc`'s) and
 * inserts the sealed row the split made, if any, in the caller's unit of work.
 * The row is written first: a unit that lost a race for it stops there with
 * `VersionConflict`, before its sealed row could meet the winner's.
 */
export const write = (
  tx: Tx,
  doc: Doc<Conversion.Conversion>,
  state: Conversion.Conversion,
  due_at: number | null,
  now: number,
  max = open_timeline_max
): Effect.Effect<void, StoreError | VersionConflict | DuplicateKey> => {
  const { head, sealed } = split(doc, state, now, max)
  const update = tx.update(revise(doc, head, due_at))
  return sealed === undefined ? update : Effect.andThen(update, tx.insert(sealed))
}

/** The conversion row `id` with its whole state as `data` (see `whole`), or undefined. For audits and tests. */
export const getWhole = (
  tx: Tx,
  id: string
): Effect.Effect<Doc<Conversion.Conversion> | undefined, StoreError | VersionConflict> =>
  Effect.flatMap(tx.get("conversion", id), (doc) =>
    doc === undefined
      ? Effect.succeed(undefined)
      : Effect.map(whole(tx, doc as Doc<StoredConversion>), (data) => ({ ...doc, data }))
  )
