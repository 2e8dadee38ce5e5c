import type { Knex } from 'knex';
import type { Queryable } from '../db';

const BATCH = 5000;

/**
 * Deletes the rows `where` selects, in batches. FOR UPDATE SKIP LOCKED: an instance purging at the
 * same time skips the rows another is deleting instead of waiting on them, so purges on every
 * instance at once never block or deadlock each other, and each batch is a short transaction.
 */
async function deleteInBatches(
  db: Queryable,
  table: string,
  where: (q: Knex.QueryBuilder) => void,
  options: { quiet?: boolean } = {},
): Promise<number> {
  let total = 0;
  for (;;) {
    const batch = db(table).select(db.raw('ctid')).where(where).limit(BATCH).forUpdate().skipLocked().toSQL();
    const remove = (q: Queryable) =>
      q.raw(`DELETE FROM ?? WHERE ctid = ANY(ARRAY(${batch.sql}))`, [table, ...batch.bindings]);
    const result = options.quiet ? await quietly(db, remove) : await remove(db);
    const deleted = result.rowCount ?? 0;
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

/**
 * quiet: the rows are over, so no cache can still serve a token that lives by them; their deletion
 * needs no invalidation (migration 20261129100000), which by the million would flood every instance.
 */
function quietly<T>(db: Queryable, work: (trx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw("SELECT set_config('latchkey.purging', 'on', true)");
    return work(trx);
  });
}

/**
 * Families without a token left, created before `createdBefore`. Walked once in key order, a
 * window of BATCH families at a time: a batch that searched from the start of the table would read
 * every family still in use again for each batch. Locked rows are skipped, as in deleteInBatches.
 */
async function deleteTokenlessFamilies(db: Queryable, createdBefore: Date): Promise<number> {
  let total = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = await quietly(db, (trx) =>
      trx.raw(
        `WITH win AS (
         SELECT id FROM refresh_token_families WHERE id > ? ORDER BY id LIMIT ${BATCH}
       ), doomed AS (
         SELECT f.ctid FROM refresh_token_families f JOIN win ON win.id = f.id
         WHERE f.created_at < ?
           AND NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = f.id)
           AND NOT EXISTS (SELECT 1 FROM access_tokens a WHERE a.family_id = f.id)
         FOR UPDATE OF f SKIP LOCKED
       ), gone AS (
         DELETE FROM refresh_token_families WHERE ctid = ANY(ARRAY(SELECT ctid FROM doomed)) RETURNING 1
       )
       SELECT (SELECT id FROM win ORDER BY id DESC LIMIT 1) AS last, (SELECT count(*) FROM win) AS scanned, (SELECT count(*) FROM gone) AS deleted`,
        [after, createdBefore],
      ),
    );
    total += Number(rows[0].deleted);
    if (Number(rows[0].scanned) < BATCH) return total;
    after = rows[0].last;
  }
}

/**
 * Deletes rows whose lifetime is over; safe on every instance at once (see deleteInBatches). A grant
 * an access token lives by (a code, a device authorization, a family through its refresh tokens) is
 * kept until every access token it could have issued has expired: issued before `tokensBefore`; a
 * refresh token, issued then, expires before `refreshBefore`.
 */
export async function deleteExpired(
  db: Queryable,
  now: Date,
  tokensBefore: Date,
  refreshBefore: Date,
  keepRevokedFor: Date,
  mail: { sentBefore: Date; deadBefore: Date },
  sessionsBefore: Date,
  unusedClientsBefore: Date,
) {
  const grantsBefore = tokensBefore < keepRevokedFor ? tokensBefore : keepRevokedFor;
  const codes = await deleteInBatches(db, 'authorization_codes', (q) => q.where('expires_at', '<', grantsBefore), {
    quiet: true,
  });
  // Tokens issued with a row of their own, before access tokens had none.
  const accessTokens = await deleteInBatches(db, 'access_tokens', (q) => q.where('expires_at', '<', now), {
    quiet: true,
  });
  const revokedAccessTokens = await deleteInBatches(
    db,
    'revoked_access_tokens',
    (q) => q.where('expires_at', '<', now),
    {
      quiet: true,
    },
  );
  const exchangedAccessTokens = await deleteInBatches(
    db,
    'exchanged_access_tokens',
    (q) => q.where('expires_at', '<', now),
    { quiet: true },
  );
  // The access token issued beside a refresh token may outlive it (a refresh lifetime set shorter).
  const refreshTokens = await deleteInBatches(db, 'refresh_tokens', (q) => q.where('expires_at', '<', refreshBefore));
  // A family with no live token left is over; revoked ones are kept a while for reuse detection.
  const families = await deleteTokenlessFamilies(db, keepRevokedFor);
  // connect-pg-simple writes `expire` (timestamp without time zone) with to_timestamp(); compare alike.
  const sessions = await deleteInBatches(db, 'session', (q) =>
    q.whereRaw('expire < to_timestamp(?)', [now.getTime() / 1000]),
  );
  const counters = await deleteInBatches(db, 'rate_limit_counters', (q) => q.where('expires_at', '<', now));
  const throttles = await deleteInBatches(db, 'attempt_throttles', (q) => q.where('expires_at', '<', now));
  // A private_key_jwt assertion's jti is kept only while the assertion could be replayed.
  const clientAssertionJtis = await deleteInBatches(db, 'client_assertion_jtis', (q) =>
    q.where('expires_at', '<', now),
  );
  // Mailed links are kept a day past expiry, so an expired link still says "expired" rather than "unknown".
  const accountTokens = await deleteInBatches(db, 'account_tokens', (q) => q.where('expires_at', '<', keepRevokedFor));
  // Device codes (RFC 8628) likewise: a device polling a day-old code still hears expired_token rather than invalid_grant.
  const deviceAuthorizations = await deleteInBatches(
    db,
    'device_authorizations',
    (q) => q.where('expires_at', '<', grantsBefore),
    { quiet: true },
  );
  const mailOutbox = await deleteInBatches(db, 'mail_outbox', (q) =>
    q
      .where((w) => w.where('status', 'sent').andWhere('sent_at', '<', mail.sentBefore))
      .orWhere((w) => w.where('status', 'dead').andWhere('created_at', '<', mail.deadBefore)),
  );
  // A browser sign-in older than any browser session can be has no one left to sign out;
  // back-channel logouts are kept as long, for support questions ("was it sent?").
  const sessionClients = await deleteInBatches(db, 'session_clients', (q) =>
    q.where('created_at', '<', sessionsBefore),
  );
  const backchannelLogouts = await deleteInBatches(db, 'backchannel_logouts', (q) =>
    q.whereIn('status', ['delivered', 'failed']).andWhere('created_at', '<', sessionsBefore),
  );
  // Self-registered clients (RFC 7591, or a metadata document's stored row) that never completed a
  // token request (their codes and consents cascade); a document's client comes back on its next use.
  const unusedRegisteredClients = await deleteInBatches(db, 'clients', (q) =>
    q
      .whereIn('registration_source', ['dynamic', 'metadata_document'])
      .whereNull('last_used_at')
      .andWhere('created_at', '<', unusedClientsBefore),
  );
  return {
    codes,
    accessTokens,
    revokedAccessTokens,
    exchangedAccessTokens,
    refreshTokens,
    families,
    sessions,
    counters,
    throttles,
    clientAssertionJtis,
    accountTokens,
    deviceAuthorizations,
    mailOutbox,
    sessionClients,
    backchannelLogouts,
    unusedRegisteredClients,
  };
}

/** A real query on a real table: `select 1` alone passed while the app could not see its tables. */
export async function probe(db: Queryable): Promise<void> {
  await db.raw('select 1 from platforms limit 1');
}
