import { randomUUID } from 'node:crypto';
import { buildTestApp } from '../helpers';
import { createRateLimitCounters } from '../../src/services/rate-limit-counters.service';
import { windowLimiter, type LimitVerdict } from '../../src/http/middleware/rate-limit-store';

// The counters without REDIS_URL (docs/decisions.md, "Ephemeral counters"), driven through the
// limiter itself. The clock is in 2100, so that no purge of another suite, whatever its
// clock, deletes these rows while a test reads them.
const W = 60_000;
let nowMs = 0;
/** Moves the clock to `ms` into a window of its own. */
const windowAt = (ms: number) => {
  const start = Date.parse('2100-01-01T00:00:00Z') + Math.floor(Math.random() * 1e6) * W;
  nowMs = start + ms;
  return start;
};
windowAt(0);

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, () => new Date(nowMs));
});
afterAll(() => t.close());

type Counters = ReturnType<typeof createRateLimitCounters>;
/** One instance's counters, flushed only when a hit waits for it or the test asks: no timing in play. */
const instance = () => createRateLimitCounters(t.services.deps, { flushEveryMs: 3_600_000, freshForMs: 3_600_000 });
const hit = (c: Counters, key: string, limit: number) =>
  new Promise<number>((resolve, reject) =>
    windowLimiter(
      c,
      limit,
      W,
      () => nowMs,
    )(key, (v: LimitVerdict | undefined, err) => (v ? resolve(v.totalHits) : reject(err as Error))),
  );
const rowsOf = (key: string) =>
  t.database.db('rate_limit_counters').where({ key }).select('window_start', 'instance_id', 'hits', 'expires_at');
const hitsOf = async (key: string, c: Counters) =>
  (await rowsOf(key)).filter((r) => r.instance_id === c.instanceId).reduce((n, r) => n + r.hits, 0);
/** The counters' metrics so far: hits answered from memory or the database, and flushes. */
const answers = async () => {
  const { rateLimitCounts, rateLimitFlushSeconds } = t.services.deps.metrics;
  const counts = (await rateLimitCounts.get()).values;
  const of = (answer: string) => counts.find((v) => v.labels.answer === answer)?.value ?? 0;
  const flushes = (await rateLimitFlushSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  return { memory: of('memory'), database: of('database'), flushes };
};
const upTo = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('rate-limit counters in the database', () => {
  it('keeps them in an UNLOGGED table: no WAL, so a commit waits for no flush, and a crash of Postgres empties it', async () => {
    const { rows } = await t.database.db.raw(
      "SELECT relpersistence FROM pg_class WHERE relname = 'rate_limit_counters' AND relkind = 'r'",
    );
    expect(rows).toEqual([{ relpersistence: 'u' }]);
  });

  it('answers a key far from its limit from memory: the instance row is written by the flush, not per hit', async () => {
    const start = windowAt(5_000);
    const c = instance();
    const key = `test:${randomUUID()}`;
    const before = await answers();
    expect(await hit(c, key, 1000)).toBe(1); // first in the window: counted in the database
    expect(await rowsOf(key)).toEqual([
      { window_start: start, instance_id: c.instanceId, hits: 1, expires_at: new Date(start + 2 * W) },
    ]);
    const counted: number[] = [];
    for (let i = 0; i < 49; i++) counted.push(await hit(c, key, 1000));
    expect(counted).toEqual(upTo(2, 50));
    expect(await hitsOf(key, c)).toBe(1); // none of the 49 touched the table
    await c.flush();
    expect(await hitsOf(key, c)).toBe(50);
    const after = await answers(); // the metrics say so too
    expect({ memory: after.memory - before.memory, database: after.database - before.database }).toEqual({
      memory: 49,
      database: 1,
    });
    expect(after.flushes - before.flushes).toBe(2); // the first hit's, and the one asked for
  });

  it('counts many concurrent hits of one key exactly, on one instance or two, near the limit', async () => {
    windowAt(10_000);
    const [a, b] = [instance(), instance()];
    const key = `test:${randomUUID()}`;
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => hit(i % 2 ? b : a, key, 20)));
    expect([...burst].sort((x, y) => x - y)).toEqual(upTo(1, 40)); // each hit its own place: 20 let through, 20 refused
    const next = await Promise.all(Array.from({ length: 10 }, () => hit(a, key, 20)));
    expect([...next].sort((x, y) => x - y)).toEqual(upTo(41, 50));

    // One instance, past half its limit: the hits that wait for the database still get one place each.
    const own = `test:${randomUUID()}`;
    const c = instance();
    for (let i = 0; i < 40; i++) await hit(c, own, 100);
    const near = await Promise.all(Array.from({ length: 30 }, () => hit(c, own, 100)));
    expect([...near].sort((x, y) => x - y)).toEqual(upTo(41, 70));
  });

  it('counts two instances jointly, each in a row of its own', async () => {
    const start = windowAt(20_000);
    const [a, b] = [instance(), instance()];
    const key = `test:${randomUUID()}`;
    const seen: number[] = [];
    for (let i = 0; i < 12; i++) seen.push(await hit(i % 2 ? b : a, key, 10));
    expect(seen).toEqual(upTo(1, 12)); // limit 10: every hit is near it, so every one is exact
    const rows = await rowsOf(key);
    expect(rows.map((r) => [r.window_start, r.instance_id, r.hits]).sort()).toEqual(
      [
        [start, a.instanceId, 6],
        [start, b.instanceId, 6],
      ].sort(),
    );
  });

  it('weighs the counts of a window as the previous one in the next, on every instance', async () => {
    windowAt(10_000);
    const a = instance();
    const key = `test:${randomUUID()}`;
    for (let i = 0; i < 30; i++) await hit(a, key, 100);
    await a.flush();
    nowMs += W + 20_000; // half-way through the next window
    expect(await hit(a, key, 100)).toBe(16); // ceil(30 × 1/2) + 1
    expect(await hit(instance(), key, 100)).toBe(17); // another instance reads the 30 from the table
  });
});
