import * as counters from '../repositories/rate-limit.repository';
import type { Deps } from './deps';

/**
 * The rate limiter's shared counters in the rate_limit_counters table (without REDIS_URL); rows
 * live two windows, then the purge job drops them. The HTTP wing's CounterBackend, by shape.
 */
export function createRateLimitCounters(deps: Deps) {
  const { db } = deps;
  return {
    hit: (key: string, windowStart: number, windowMs: number) =>
      counters.incrementWindow(db, key, windowStart, windowStart - windowMs, new Date(windowStart + 2 * windowMs)),
    unhit: (key: string, windowStart: number) => counters.decrementWindow(db, key, windowStart),
    forget: (key: string) => counters.deleteByKey(db, key),
  };
}
