import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import * as counters from '../repositories/rate-limit.repository';
import type { Deps } from './deps';
import {
  TallyTable,
  countsOf,
  restoreAfterFailure,
  settleFlush,
  takeForFlush,
  tallyTotal,
  type KeyTallies,
} from './rate-limit-tallies';

/** Hit counts of one key in the current fixed window and the one before it. */
export interface WindowCounts {
  current: number;
  previous: number;
}

/** How often this instance writes its hits and reads everyone else's, at most. */
const FLUSH_EVERY_MS = 200;
/** A hit is answered from memory only if the key's counts were read this recently. */
const FRESH_FOR_MS = 1000;
/** Keys held in memory; past this the oldest key with nothing to write is dropped. */
const MAX_KEYS = 100_000;
const SWEEP_EVERY_MS = 10_000;
/** Exact flushes serialise per slot of keys (advisory locks, namespace "RL"), not per key: bounded locks. */
const LOCK_NAMESPACE = 0x524c;
const LOCK_SLOTS = 64;

/** The defaults above; tests stretch the timings so that only their own steps flush. */
export interface RateLimitCounterOptions {
  flushEveryMs?: number;
  freshForMs?: number;
  maxKeys?: number;
}

/**
 * The rate limiter's counters without REDIS_URL (docs/decisions.md, "Ephemeral counters"): each
 * instance counts in memory and, at most every FLUSH_EVERY_MS, adds its new hits to its own rows of
 * the UNLOGGED rate_limit_counters table and reads every instance's sums back, all keys in one
 * statement. A hit far from its limit (as the caller's `isNear` judges) on a key read lately is
 * answered from memory; any other hit waits for a flush that holds the key's lock slot, so that
 * near a limit every instance's hits are counted one after another, exactly. The HTTP wing's
 * CounterBackend, by shape.
 */
export function createRateLimitCounters(deps: Deps, options: RateLimitCounterOptions = {}) {
  const { db, logger, metrics } = deps;
  // Where hits were answered, added to the metric at each flush: no metric work per request.
  const answered = { memory: 0, database: 0 };
  const publishAnswers = () => {
    for (const answer of ['memory', 'database'] as const) {
      if (answered[answer] > 0) metrics.rateLimitCounts.inc({ answer }, answered[answer]);
      answered[answer] = 0;
    }
  };
  const instanceId = randomUUID(); // per process start: a crashed instance's rows still count, as another's
  const flushEveryMs = options.flushEveryMs ?? FLUSH_EVERY_MS;
  const freshForMs = options.freshForMs ?? FRESH_FOR_MS;
  const tallies = new TallyTable(options.maxKeys ?? MAX_KEYS);
  const dirty = new Set<KeyTallies>(); // hits to write, or a hit waiting for a read
  let exact = new Set<KeyTallies>(); // keys the next flush locks
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastSweep = Number.NEGATIVE_INFINITY;

  const isBusy = (k: KeyTallies) => dirty.has(k) || k.current.inFlight !== 0 || (k.current.prior?.inFlight ?? 0) !== 0;

  /** One flush: every key with hits to write or a hit waiting; the waiting ones under their lock slots. */
  async function flushOnce(): Promise<void> {
    publishAnswers();
    const batch = [...dirty].map(takeForFlush);
    dirty.clear();
    const locked = [...exact].map((k) => slotOf(k.key));
    exact = new Set();
    const now = deps.now().getTime();
    if (now - lastSweep >= SWEEP_EVERY_MS) {
      lastSweep = now;
      tallies.sweep(now, isBusy);
    }
    if (batch.length === 0) return;
    const deltas = batch.map((t) => ({
      key: t.k.key,
      windowStart: t.cur.windowStart,
      windowMs: t.k.windowMs,
      current: t.current,
      previous: t.previous,
    }));
    const readAt = performance.now();
    const endTimer = metrics.rateLimitFlushSeconds.startTimer();
    try {
      const sums =
        locked.length === 0
          ? await counters.addAndSum(db, instanceId, deltas)
          : await db.transaction(async (trx) => {
              await counters.lockSlots(trx, LOCK_NAMESPACE, locked);
              return counters.addAndSum(trx, instanceId, deltas);
            });
      batch.forEach((t, i) => settleFlush(t, sums[i], readAt));
      endTimer();
    } catch (err) {
      for (const t of batch) {
        restoreAfterFailure(t);
        dirty.add(t.k);
      }
      throw err;
    }
  }

  /** A flush that writes every hit counted so far: the one starting now, or the next after the one in flight. */
  function flush(): Promise<void> {
    if (!running) {
      running = flushOnce().finally(() => {
        running = undefined;
      });
      return running;
    }
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return flush();
      });
    return next;
  }

  function schedule() {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (dirty.size > 0)
        flush().catch((err: unknown) =>
          logger.debug({ err: (err as Error).message }, 'rate-limit counters not written; retried with the next hit'),
        );
    }, flushEveryMs);
    timer.unref(); // never keeps the process alive
  }

  /**
   * Counts one hit of `key` in the window starting at `windowStart`; returns both windows' counts.
   * From memory when the key was read lately and `isNear` says these counts are far from the limit;
   * otherwise after a flush, with the hit's own place among every instance's hits.
   */
  function hit(
    key: string,
    windowStart: number,
    windowMs: number,
    isNear?: (counts: WindowCounts) => boolean,
  ): WindowCounts | Promise<WindowCounts> {
    const k = tallies.at(key, windowStart, windowMs, isBusy);
    const t = k.current;
    t.pending += 1;
    t.counted += 1;
    const ordinal = t.counted;
    dirty.add(k);
    schedule();
    const counts = countsOf(k);
    const fresh = t.readAt !== undefined && performance.now() - t.readAt <= freshForMs;
    if (fresh && isNear && !isNear(counts)) {
      answered.memory++;
      return counts;
    }
    answered.database++;
    return countExactly(k, ordinal);
  }

  /** The hit numbered `ordinal` in `k`'s current window, counted among every instance's hits. */
  async function countExactly(k: KeyTallies, ordinal: number): Promise<WindowCounts> {
    const t = k.current;
    for (let i = 0; i < 2 && t.flushedThrough < ordinal; i++) {
      exact.add(k);
      dirty.add(k);
      await flush();
    }
    if (t.flushedThrough < ordinal) return countsOf(k); // not written (the database failed twice): as counted
    return { current: Math.max(1, t.shared - (t.flushedThrough - ordinal)), previous: tallyTotal(t.prior) };
  }

  /** Writes every hit counted so far (at shutdown, and in tests). */
  async function flushNow(): Promise<void> {
    if (dirty.size > 0) await flush();
    else await running;
  }

  return { instanceId, hit, flush: flushNow };
}

/** FNV-1a: keys spread over the lock slots the same way on every instance. */
function slotOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % LOCK_SLOTS;
}
