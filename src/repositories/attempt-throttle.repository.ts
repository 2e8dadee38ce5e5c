import type { Queryable } from '../db';

/** One throttle key's state: failures in the current window, consecutive locks, the lock in force. */
export interface ThrottleRow {
  key: string;
  failures: number;
  windowStartedAt: Date;
  locks: number;
  lockedUntil: Date | null;
  expiresAt: Date;
}

const toRow = (r: any): ThrottleRow => ({
  key: r.key,
  failures: r.failures,
  windowStartedAt: r.window_started_at,
  locks: r.locks,
  lockedUntil: r.locked_until,
  expiresAt: r.expires_at,
});

export async function findMany(db: Queryable, keys: string[]): Promise<ThrottleRow[]> {
  return (await db('attempt_throttles').whereIn('key', keys)).map(toRow);
}

/** Locks the keys' rows (created empty when missing) in key order, so concurrent writers never deadlock. */
export async function findManyForUpdate(db: Queryable, keys: string[], now: Date): Promise<Map<string, ThrottleRow>> {
  const sorted = [...new Set(keys)].sort();
  await db('attempt_throttles')
    .insert(sorted.map((key) => ({ key, failures: 0, window_started_at: now, locks: 0, expires_at: now })))
    .onConflict('key')
    .ignore();
  const rows = await db('attempt_throttles').whereIn('key', sorted).orderBy('key').forUpdate();
  return new Map(rows.map((r: any) => [r.key, toRow(r)]));
}

export async function update(db: Queryable, row: ThrottleRow): Promise<void> {
  await db('attempt_throttles').where({ key: row.key }).update({
    failures: row.failures,
    window_started_at: row.windowStartedAt,
    locks: row.locks,
    locked_until: row.lockedUntil,
    expires_at: row.expiresAt,
  });
}

export async function deleteKey(db: Queryable, key: string): Promise<void> {
  await db('attempt_throttles').where({ key }).delete();
}

/** Rows whose key starts with one of the prefixes and that have not yet expired, newest lock first. */
export async function findLiveByPrefixes(db: Queryable, prefixes: string[], now: Date): Promise<ThrottleRow[]> {
  const rows = await db('attempt_throttles')
    .where('expires_at', '>', now)
    .andWhere((q) => {
      // A prefix match: LIKE's own wildcards in the prefix are escaped.
      for (const prefix of prefixes) q.orWhere('key', 'like', `${prefix.replace(/[\\%_]/g, '\\$&')}%`);
    })
    .orderBy([{ column: 'locked_until', order: 'desc', nulls: 'last' }, { column: 'key' }])
    .limit(10_000);
  return rows.map(toRow);
}

export async function deleteKeys(db: Queryable, keys: string[]): Promise<void> {
  if (keys.length) await db('attempt_throttles').whereIn('key', keys).delete();
}
