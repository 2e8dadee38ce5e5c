import type { Db } from '../../db';
import * as counters from '../../repositories/rate-limit.repository';
import type { CounterBackend } from './rate-limit-store';

/** Counters in the rate_limit_counters table; rows live two windows, then the purge job drops them. */
export function createPostgresCounters(db: Db): CounterBackend {
  return {
    hit: (key, windowStart, windowMs) =>
      counters.incrementWindow(db, key, windowStart, windowStart - windowMs, new Date(windowStart + 2 * windowMs)),
    unhit: (key, windowStart) => counters.decrementWindow(db, key, windowStart),
    forget: (key) => counters.deleteByKey(db, key),
  };
}
