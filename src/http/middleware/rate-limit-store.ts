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
  /**
   * Adds one hit to `key` in the window starting at `windowStart` (epoch ms); returns both windows'
   * counts, at once when memory answers (no promise: a limited request then costs no turn of the
   * event loop), else once counted.
   */
  hit(
    key: string,
    windowStart: number,
    windowMs: number,
    isNear?: (counts: WindowCounts) => boolean,
  ): WindowCounts | Promise<WindowCounts>;
  /** Releases a connection of the store's own (Redis); the Postgres counters live with the app's pool. */
  close?(): void;
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

/** What a limiter says of one request: the counts it was given, against the limit. */
export interface LimitVerdict {
  limit: number;
  /** The sliding estimate, this request included. */
  totalHits: number;
  /** When the current fixed window rolls over, or, once the limit is exceeded, when the next request would be allowed (epoch ms). */
  resetAt: number;
}

/**
 * One limit (requests per window) over a shared backend: counts a hit of `key` and hands the
 * verdict to `then`, synchronously when the backend answers from memory. A backend that fails
 * passes `undefined` (fail open: the endpoint answers 503 itself when the database is down).
 */
export function windowLimiter(backend: CounterBackend, limit: number, windowMs: number, nowMs: () => number) {
  return (key: string, then: (verdict: LimitVerdict | undefined, err?: unknown) => void): void => {
    const now = nowMs();
    const windowStart = now - (now % windowMs);
    const elapsed = now - windowStart;
    const verdictOf = (counts: WindowCounts): LimitVerdict => {
      const totalHits = slidingEstimate(counts, elapsed, windowMs);
      const resetAt =
        totalHits > limit ? now + msUntilAllowed(counts, elapsed, windowMs, limit) : windowStart + windowMs;
      return { limit, totalHits, resetAt };
    };
    let counted: WindowCounts | Promise<WindowCounts>;
    try {
      counted = backend.hit(key, windowStart, windowMs, (c) => isNearLimit(c, elapsed, windowMs, limit));
    } catch (err) {
      then(undefined, err);
      return;
    }
    if (!(counted instanceof Promise)) then(verdictOf(counted));
    else
      counted.then(
        (counts) => then(verdictOf(counts)),
        (err: unknown) => then(undefined, err),
      );
  };
}
