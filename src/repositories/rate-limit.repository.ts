import type { Queryable } from '../db';

/**
 * Adds one hit to the window and reads the window before it, in one statement: the upsert is
 * atomic, so instances sharing the database count jointly. Returns both counts.
 */
export async function incrementWindow(
  db: Queryable,
  key: string,
  windowStart: number,
  previousWindowStart: number,
  expiresAt: Date,
): Promise<{ current: number; previous: number }> {
  const { rows } = await db.raw(
    `WITH cur AS (
       INSERT INTO rate_limit_counters AS c (key, window_start, hits, expires_at)
       VALUES (?, ?, 1, ?)
       ON CONFLICT (key, window_start) DO UPDATE SET hits = c.hits + 1
       RETURNING hits
     )
     SELECT (SELECT hits FROM cur) AS current,
            COALESCE((SELECT hits FROM rate_limit_counters WHERE key = ? AND window_start = ?), 0) AS previous`,
    [key, windowStart, expiresAt, key, previousWindowStart],
  );
  return { current: Number(rows[0].current), previous: Number(rows[0].previous) };
}

export async function decrementWindow(db: Queryable, key: string, windowStart: number): Promise<void> {
  await db('rate_limit_counters')
    .where({ key, window_start: windowStart })
    .andWhere('hits', '>', 0)
    .decrement('hits', 1);
}

export async function deleteByKey(db: Queryable, key: string): Promise<void> {
  await db('rate_limit_counters').where({ key }).delete();
}
