import type { Queryable } from '../db';

/** One key's hits of one instance not yet written: in its current window and in the one before. */
export interface CounterDelta {
  key: string;
  windowStart: number;
  windowMs: number;
  current: number;
  previous: number;
}

/** Every instance's hits of one key, this instance's deltas included. */
export interface CounterSums {
  current: number;
  previous: number;
}

/**
 * Adds the instance's deltas to its own rows (one per key, window and instance: no other instance
 * ever waits on them) and reads back what every instance counted in both windows of each key, in
 * one statement. The sums are read from the statement's snapshot, which does not see its own
 * writes, so the deltas are added to them. Rows expire two windows after their window starts.
 */
export async function addAndSum(db: Queryable, instanceId: string, deltas: CounterDelta[]): Promise<CounterSums[]> {
  if (deltas.length === 0) return [];
  const { rows } = await db.raw(
    `WITH input AS (
       SELECT * FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::int[], ?::int[])
         WITH ORDINALITY AS i(key, window_start, window_ms, current_delta, previous_delta, n)
     ), writes AS (
       SELECT key, window_start, current_delta AS delta, window_start + 2 * window_ms AS ends
         FROM input WHERE current_delta <> 0
       UNION ALL
       SELECT key, window_start - window_ms, previous_delta, window_start + window_ms
         FROM input WHERE previous_delta <> 0
     ), written AS (
       INSERT INTO rate_limit_counters AS c (key, window_start, instance_id, hits, expires_at)
       SELECT key, window_start, ?, delta, to_timestamp(ends / 1000.0) FROM writes
       ON CONFLICT (key, window_start, instance_id) DO UPDATE SET hits = c.hits + EXCLUDED.hits
     )
     SELECT i.current_delta + COALESCE((SELECT sum(c.hits) FROM rate_limit_counters c
              WHERE c.key = i.key AND c.window_start = i.window_start), 0) AS current,
            i.previous_delta + COALESCE((SELECT sum(c.hits) FROM rate_limit_counters c
              WHERE c.key = i.key AND c.window_start = i.window_start - i.window_ms), 0) AS previous
       FROM input i ORDER BY i.n`,
    [
      deltas.map((d) => d.key),
      deltas.map((d) => d.windowStart),
      deltas.map((d) => d.windowMs),
      deltas.map((d) => d.current),
      deltas.map((d) => d.previous),
      instanceId,
    ],
  );
  return (rows as Array<{ current: string; previous: string }>).map((r) => ({
    current: Number(r.current),
    previous: Number(r.previous),
  }));
}

/**
 * Takes the transaction-scoped advisory locks of the given slots (ascending, so two instances
 * never wait on each other in a cycle). A statement after this one in the same transaction sees
 * everything committed by whoever held them before.
 */
export async function lockSlots(trx: Queryable, namespace: number, slots: number[]): Promise<void> {
  const sorted = [...new Set(slots)].sort((a, b) => a - b);
  await trx.raw('SELECT pg_advisory_xact_lock(?, s) FROM unnest(?::int[]) AS s', [namespace, sorted]);
}
