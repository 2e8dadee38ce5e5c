/**
 * One instance's view of the rate-limit counters (docs/decisions.md, "Ephemeral counters"): per key,
 * the current window and the one before it. Pure bookkeeping, no I/O: the counters service flushes
 * the deltas and stores what it reads back.
 */

/** One key's hits in one fixed window, as this instance knows them. */
export interface Tally {
  readonly windowStart: number;
  /** Every instance's hits as last read, this instance's flushed ones included. */
  shared: number;
  /** This instance's hits not yet written (negative after an unhit). */
  pending: number;
  /** This instance's hits being written by the flush in flight. */
  inFlight: number;
  /** Ordinal of this instance's last hit in the window, and of the last one `shared` covers. */
  counted: number;
  flushedThrough: number;
  /** When `shared` was last read (performance.now()); undefined: not yet in this window. */
  readAt?: number;
  /** The window before, once known; dropped when this tally becomes the previous one. */
  prior?: Tally;
}

export interface KeyTallies {
  readonly key: string;
  readonly windowMs: number;
  current: Tally;
}

export const newTally = (windowStart: number, shared = 0): Tally => ({
  windowStart,
  shared,
  pending: 0,
  inFlight: 0,
  counted: 0,
  flushedThrough: 0,
});

/** This instance's best count of a window: what was read plus what it has not written yet. */
export const tallyTotal = (t: Tally | undefined): number => (t ? Math.max(0, t.shared + t.inFlight + t.pending) : 0);

/** The counts the sliding window weighs: the current window's and the previous one's. */
export const countsOf = (k: KeyTallies) => ({
  current: tallyTotal(k.current),
  previous: tallyTotal(k.current.prior),
});

/** A flush's share of one key: the tallies it writes, what it writes, and up to which hit. */
export interface Taken {
  k: KeyTallies;
  cur: Tally;
  prior?: Tally;
  current: number;
  previous: number;
  through: number;
  priorThrough: number;
}

/** Moves the key's unwritten hits (both windows) in flight. */
export function takeForFlush(k: KeyTallies): Taken {
  const cur = k.current;
  const prior = cur.prior;
  const taken: Taken = {
    k,
    cur,
    prior,
    current: cur.pending,
    previous: prior?.pending ?? 0,
    through: cur.counted,
    priorThrough: prior?.counted ?? 0,
  };
  cur.inFlight += cur.pending;
  cur.pending = 0;
  if (prior) {
    prior.inFlight += prior.pending;
    prior.pending = 0;
  }
  return taken;
}

/** The flush wrote them: both windows now hold every instance's sums, as of `readAt`. */
export function settleFlush(t: Taken, sums: { current: number; previous: number }, readAt: number): void {
  t.cur.inFlight -= t.current;
  t.cur.shared = sums.current;
  t.cur.flushedThrough = t.through;
  t.cur.readAt = readAt;
  if (t.prior) {
    t.prior.inFlight -= t.previous;
    t.prior.shared = sums.previous;
    t.prior.flushedThrough = t.priorThrough;
  } else if (t.k.current === t.cur && !t.cur.prior) {
    t.cur.prior = newTally(t.cur.windowStart - t.k.windowMs, sums.previous);
  }
}

/** The flush failed: its hits are unwritten again. */
export function restoreAfterFailure(t: Taken): void {
  t.cur.inFlight -= t.current;
  t.cur.pending += t.current;
  if (t.prior) {
    t.prior.inFlight -= t.previous;
    t.prior.pending += t.previous;
  }
}

/**
 * The tallies of every key this instance counted lately, bounded: windows older than the previous
 * one are dropped as keys roll over, stale keys by `sweep`, and past `maxKeys` the oldest key with
 * nothing left to write makes room.
 */
export class TallyTable {
  private readonly byKey = new Map<string, KeyTallies>();

  constructor(private readonly maxKeys: number) {}

  get size(): number {
    return this.byKey.size;
  }

  /** The key's tallies, rolled over to the window starting at `windowStart` (a later one only). */
  at(key: string, windowStart: number, windowMs: number, isBusy: (k: KeyTallies) => boolean): KeyTallies {
    let k = this.byKey.get(key);
    if (!k) {
      if (this.byKey.size >= this.maxKeys) this.evictOne(isBusy);
      k = { key, windowMs, current: newTally(windowStart) };
      this.byKey.set(key, k);
    } else if (k.current.windowStart < windowStart) {
      const last = k.current;
      last.prior = undefined; // two windows back: no longer weighed
      k.current = newTally(windowStart);
      if (windowStart - last.windowStart === windowMs) k.current.prior = last;
    }
    return k;
  }

  get(key: string): KeyTallies | undefined {
    return this.byKey.get(key);
  }

  /** Drops keys whose current window is no longer weighed at `nowMs`, unless busy (hits to write). */
  sweep(nowMs: number, isBusy: (k: KeyTallies) => boolean): void {
    for (const k of this.byKey.values()) {
      if (k.current.windowStart + 2 * k.windowMs <= nowMs && !isBusy(k)) this.byKey.delete(k.key);
    }
  }

  /** Oldest first: a key with nothing to write loses only what the table can read again. */
  private evictOne(isBusy: (k: KeyTallies) => boolean) {
    let first: KeyTallies | undefined;
    for (const k of this.byKey.values()) {
      first ??= k;
      if (!isBusy(k)) {
        this.byKey.delete(k.key);
        return;
      }
    }
    if (first) this.byKey.delete(first.key); // all busy: the oldest key's unwritten hits are lost
  }
}
