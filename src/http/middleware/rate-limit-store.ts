import type { ClientRateLimitInfo, Store } from 'express-rate-limit';

/** Hit counts of one key in the current fixed window and the one before it. */
export interface WindowCounts {
  current: number;
  previous: number;
}

/**
 * Shared fixed-window counters (Postgres or Redis), so that any number of instances on the same
 * backend count jointly. Redis counts every hit in one atomic step; the database's counters answer
 * a hit from memory while `isNear` says its counts are far from the limit, and count it exactly,
 * among every instance's hits, otherwise (docs/decisions.md, "Ephemeral counters").
 */
export interface CounterBackend {
  /** Adds one hit to `key` in the window starting at `windowStart` (epoch ms); returns both windows' counts. */
  hit(
    key: string,
    windowStart: number,
    windowMs: number,
    isNear?: (counts: WindowCounts) => boolean,
  ): Promise<WindowCounts>;
  /** Takes one hit back from the window starting at `windowStart`. */
  unhit(key: string, windowStart: number): Promise<void>;
  /** Forgets the current and previous windows of `key`. */
  forget(key: string, windowStart: number, windowMs: number): Promise<void>;
}

/**
 * A hit is counted exactly (in the database, after every earlier hit of every instance) once less
 * than half the limit, or fewer than this many requests, would remain: there another instance's
 * unseen hits could change what a client is told. Below that, memory answers.
 */
const EXACT_HEADROOM = 10;

/** Whether `counts` (this hit included) leave too little room to be answered from one instance's memory. */
export function isNearLimit(counts: WindowCounts, elapsedMs: number, windowMs: number, limit: number): boolean {
  return limit - slidingEstimate(counts, elapsedMs, windowMs) < Math.max(limit / 2, EXACT_HEADROOM);
}

/**
 * Sliding-window counter over two fixed windows: the previous window's hits are assumed spread
 * evenly, so they count by the share of it still inside the last `windowMs`. Rounded up, so the
 * estimate never lets through more than the fixed windows would.
 */
export function slidingEstimate(counts: WindowCounts, elapsedMs: number, windowMs: number): number {
  return Math.ceil((counts.previous * (windowMs - elapsedMs)) / windowMs) + counts.current;
}

/**
 * How long until one more request would be allowed, when no other hit arrives meanwhile: either
 * later in this window, once the previous window has faded enough, or in the next window, once
 * this one has (its hits then weigh as "previous").
 */
export function msUntilAllowed(counts: WindowCounts, elapsedMs: number, windowMs: number, limit: number): number {
  const room = limit - counts.current - 1; // what the previous window may still weigh in this one
  if (room >= 0 && counts.previous > 0) {
    // ceil(P·(W−e)/W) ≤ room  ⇔  e ≥ W − ⌊room·W/P⌋
    const elapsedNeeded = windowMs - Math.floor((room * windowMs) / counts.previous);
    if (elapsedNeeded < windowMs) return Math.max(0, elapsedNeeded - elapsedMs);
  }
  // Next window: ceil(C·(W−e)/W) ≤ limit − 1  ⇔  e ≥ W − ⌊(limit−1)·W/C⌋
  const nextElapsedNeeded = Math.max(0, windowMs - Math.floor(((limit - 1) * windowMs) / Math.max(counts.current, 1)));
  return windowMs - elapsedMs + nextElapsedNeeded;
}

/**
 * express-rate-limit Store for one limiter (one endpoint at one limit) over a shared backend.
 * totalHits is the sliding estimate; resetTime is when the current fixed window rolls over, or,
 * once the limit is exceeded, the moment the next request would be allowed (→ Retry-After).
 */
export class SlidingWindowStore implements Store {
  readonly localKeys = false;

  constructor(
    private readonly backend: CounterBackend,
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly nowMs: () => number,
    readonly prefix: string,
  ) {}

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const now = this.nowMs();
    const windowStart = now - (now % this.windowMs);
    const elapsed = now - windowStart;
    const counts = await this.backend.hit(key, windowStart, this.windowMs, (c) =>
      isNearLimit(c, elapsed, this.windowMs, this.limit),
    );
    const totalHits = slidingEstimate(counts, elapsed, this.windowMs);
    const resetAt =
      totalHits > this.limit
        ? now + msUntilAllowed(counts, elapsed, this.windowMs, this.limit)
        : windowStart + this.windowMs;
    return { totalHits, resetTime: new Date(resetAt) };
  }

  async decrement(key: string): Promise<void> {
    const now = this.nowMs();
    await this.backend.unhit(key, now - (now % this.windowMs));
  }

  async resetKey(key: string): Promise<void> {
    const now = this.nowMs();
    await this.backend.forget(key, now - (now % this.windowMs), this.windowMs);
  }
}
