import type { Knex } from 'knex';
import type { Queryable } from '../db';

const BATCH = 5000;

/**
 * Deletes the rows `where` selects, in batches. FOR UPDATE SKIP LOCKED: an instance purging at the
 * same time skips the rows another is deleting instead of waiting on them, so purges on every
 * instance at once never block or deadlock each other, and each batch is a short transaction.
 */
async function deleteInBatches(db: Queryable, table: string, where: (q: Knex.QueryBuilder) => void): Promise<number> {
  let total = 0;
  for (;;) {
    const batch = db(table).select(db.raw('ctid')).where(where).limit(BATCH).forUpdate().skipLocked().toSQL();
    const result = await db.raw(`DELETE FROM ?? WHERE ctid = ANY(ARRAY(${batch.sql}))`, [table, ...batch.bindings]);
    const deleted = result.rowCount ?? 0;
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

/** Deletes rows whose lifetime is over; safe on every instance at once (see deleteInBatches). */
export async function deleteExpired(db: Queryable, now: Date, keepRevokedFor: Date, mail: { sentBefore: Date; deadBefore: Date }, sessionsBefore: Date) {
  const codes = await deleteInBatches(db, 'authorization_codes', (q) => q.where('expires_at', '<', keepRevokedFor));
  const accessTokens = await deleteInBatches(db, 'access_tokens', (q) => q.where('expires_at', '<', now));
  const refreshTokens = await deleteInBatches(db, 'refresh_tokens', (q) => q.where('expires_at', '<', now));
  // A family with no live token left is over; revoked ones are kept a while for reuse detection.
  const families = await deleteInBatches(db, 'refresh_token_families', (q) =>
    q
      .whereNotExists(db('refresh_tokens').whereRaw('refresh_tokens.family_id = refresh_token_families.id'))
      .whereNotExists(db('access_tokens').whereRaw('access_tokens.family_id = refresh_token_families.id'))
      .andWhere('created_at', '<', keepRevokedFor),
  );
  // connect-pg-simple writes `expire` (timestamp without time zone) with to_timestamp(); compare alike.
  const sessions = await deleteInBatches(db, 'session', (q) => q.whereRaw('expire < to_timestamp(?)', [now.getTime() / 1000]));
  const counters = await deleteInBatches(db, 'rate_limit_counters', (q) => q.where('expires_at', '<', now));
  const throttles = await deleteInBatches(db, 'attempt_throttles', (q) => q.where('expires_at', '<', now));
  // Mailed links are kept a day past expiry, so an expired link still says "expired" rather than "unknown".
  const accountTokens = await deleteInBatches(db, 'account_tokens', (q) => q.where('expires_at', '<', keepRevokedFor));
  const mailOutbox = await deleteInBatches(db, 'mail_outbox', (q) =>
    q.where((w) => w.where('status', 'sent').andWhere('sent_at', '<', mail.sentBefore)).orWhere((w) => w.where('status', 'dead').andWhere('created_at', '<', mail.deadBefore)),
  );
  // A browser sign-in older than any browser session can be has no one left to sign out (DESIGN §16);
  // back-channel logouts are kept as long, for support questions ("was it sent?").
  const sessionClients = await deleteInBatches(db, 'session_clients', (q) => q.where('created_at', '<', sessionsBefore));
  const backchannelLogouts = await deleteInBatches(db, 'backchannel_logouts', (q) => q.whereIn('status', ['delivered', 'failed']).andWhere('created_at', '<', sessionsBefore));
  return { codes, accessTokens, refreshTokens, families, sessions, counters, throttles, accountTokens, mailOutbox, sessionClients, backchannelLogouts };
}

/** A real query on a real table: `select 1` alone passed while the app could not see its tables (DESIGN §13). */
export async function probe(db: Queryable): Promise<void> {
  await db.raw('select 1 from platforms limit 1');
}
