/**
 * The rows of one kind that have a `due_at`, for `Tx.due`: which are due at a
 * time, oldest due first (then by id), without looking at the others.
 *
 * A binary min-heap on (due_at, id) with lazy deletion. `set` records a row's
 * new `due_at` under a fresh entry number and pushes an entry; the row's
 * previous entry, if any, stays in the heap but no longer matches the row's
 * current entry number (stale) and is skipped by reads, dropped when it
 * reaches the top, and all stale entries are dropped at once when they
 * outnumber the live ones. `due` walks the heap in order from its top without
 * removing anything (a second, small heap of positions to visit), so asking
 * when nothing is due costs one comparison, and asking for `limit` rows costs
 * about `limit` log `limit` steps plus the stale entries met on the way.
 *
 * The heap is three parallel arrays (due_at, id, entry number): no object per
 * entry for the garbage collector to trace.
 */
export class DueIndex {
  /** The entry number of each row's live entry (rows without a `due_at` are absent). */
  private readonly live = new Map<string, number>()
  private readonly at: Array<number> = []
  private readonly ids: Array<string> = []
  private readonly entries: Array<number> = []
  private nextEntry = 0
  private stale = 0

  /** Rows with a `due_at`. */
  get size(): number {
    return this.live.size
  }

  /** Records that row `id` is now due at `due_at` (null: not due at all). */
  set(id: string, due_at: number | null): void {
    if (this.live.has(id)) this.stale += 1
    if (due_at === null) {
      this.live.delete(id)
    } else {
      const entry = this.nextEntry++
      this.live.set(id, entry)
      this.push(due_at, id, entry)
    }
    if (this.stale > 1024 && this.stale > this.live.size) this.compact()
  }

  /**
   * The ids of at most `limit` rows due at `now` (`due_at <= now`), oldest due
   * first, then by id, leaving out those `skip` names.
   */
  due(now: number, limit: number, skip?: ReadonlySet<string>): Array<string> {
    const found: Array<string> = []
    if (limit <= 0) return found
    this.dropStaleTop()
    const at = this.at
    const ids = this.ids
    if (at.length === 0 || (at[0] as number) > now) return found
    // positions of the heap still to visit, themselves a min-heap on the same order
    const next: Array<number> = [0]
    while (next.length > 0) {
      const i = popPosition(next, this)
      if ((at[i] as number) > now) break
      const id = ids[i] as string
      if (this.live.get(id) === this.entries[i] && skip?.has(id) !== true) {
        found.push(id)
        if (found.length === limit) break
      }
      const left = 2 * i + 1
      if (left < at.length) pushPosition(next, left, this)
      if (left + 1 < at.length) pushPosition(next, left + 1, this)
    }
    return found
  }

  /** Whether the entry at `i` comes before the one at `j`: (due_at, id, entry number). */
  before(i: number, j: number): boolean {
    const a = this.at[i] as number
    const b = this.at[j] as number
    if (a !== b) return a < b
    const x = this.ids[i] as string
    const y = this.ids[j] as string
    if (x !== y) return x < y
    return (this.entries[i] as number) < (this.entries[j] as number)
  }

  private push(due_at: number, id: string, entry: number): void {
    this.at.push(due_at)
    this.ids.push(id)
    this.entries.push(entry)
    this.up(this.at.length - 1)
  }

  private isStale(i: number): boolean {
    return this.live.get(this.ids[i] as string) !== this.entries[i]
  }

  /** Pops stale entries off the top, so the top is a live row's (or the heap is empty). */
  private dropStaleTop(): void {
    while (this.at.length > 0 && this.isStale(0)) {
      this.removeTop()
      this.stale -= 1
    }
  }

  private removeTop(): void {
    const last = this.at.length - 1
    this.move(last, 0)
    this.at.pop()
    this.ids.pop()
    this.entries.pop()
    if (this.at.length > 1) this.down(0)
  }

  /** Keeps the live entries only, re-heaped (Floyd's bottom-up build). */
  private compact(): void {
    let kept = 0
    for (let i = 0; i < this.at.length; i++) {
      if (!this.isStale(i)) this.move(i, kept++)
    }
    this.at.length = kept
    this.ids.length = kept
    this.entries.length = kept
    this.stale = 0
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.down(i)
  }

  private move(from: number, to: number): void {
    this.at[to] = this.at[from] as number
    this.ids[to] = this.ids[from] as string
    this.entries[to] = this.entries[from] as number
  }

  private swap(i: number, j: number): void {
    const a = this.at[i] as number
    const id = this.ids[i] as string
    const e = this.entries[i] as number
    this.move(j, i)
    this.at[j] = a
    this.ids[j] = id
    this.entries[j] = e
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(i, parent)) return
      this.swap(i, parent)
      i = parent
    }
  }

  private down(i: number): void {
    const n = this.at.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) return
      const right = left + 1
      const child = right < n && this.before(right, left) ? right : left
      if (!this.before(child, i)) return
      this.swap(i, child)
      i = child
    }
  }
}

/** Adds heap position `p` to `next`, a min-heap of positions ordered by `index.before`. */
const pushPosition = (next: Array<number>, p: number, index: DueIndex): void => {
  next.push(p)
  let i = next.length - 1
  while (i > 0) {
    const parent = (i - 1) >> 1
    if (!index.before(next[i] as number, next[parent] as number)) return
    const t = next[i] as number
    next[i] = next[parent] as number
    next[parent] = t
    i = parent
  }
}

/** Removes and returns the first position of `next` (not empty). */
const popPosition = (next: Array<number>, index: DueIndex): number => {
  const first = next[0] as number
  const last = next.pop() as number
  if (next.length === 0) return first
  next[0] = last
  let i = 0
  const n = next.length
  for (;;) {
    const left = 2 * i + 1
    if (left >= n) break
    const right = left + 1
    const child = right < n && index.before(next[right] as number, next[left] as number) ? right : left
    if (!index.before(next[child] as number, next[i] as number)) break
    const t = next[i] as number
    next[i] = next[child] as number
    next[child] = t
    i = child
  }
  return first
}
