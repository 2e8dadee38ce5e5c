import type { Queryable } from '../db';

export type BackchannelLogoutStatus = 'pending' | 'sending' | 'delivered' | 'failed';

/** One logout token to POST to one client (OIDC Back-Channel Logout 1.0); the token itself is built when sent. */
export interface BackchannelLogoutRow {
  id: string;
  platformId: string;
  clientId: string;
  userId: string;
  /** Null: a sub-only logout token (the sign-in session is not known). */
  sid: string | null;
  status: BackchannelLogoutStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

const toRow = (r: any): BackchannelLogoutRow => ({
  id: r.id,
  platformId: r.platform_id,
  clientId: r.client_id,
  userId: r.user_id,
  sid: r.sid,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
  createdAt: r.created_at,
  deliveredAt: r.delivered_at,
});

// As in the mail outbox, times come from the database clock: leases and backoff are compared
// across instances, and the database is the one clock they all share.
const secondsFromNow = (db: Queryable, seconds: number) => db.raw(`now() + ? * interval '1 second'`, [seconds]);

export async function insertMany(
  db: Queryable,
  rows: Pick<BackchannelLogoutRow, 'id' | 'platformId' | 'clientId' | 'userId' | 'sid'>[],
): Promise<void> {
  if (rows.length === 0) return;
  await db('backchannel_logouts').insert(
    rows.map((r) => ({ id: r.id, platform_id: r.platformId, client_id: r.clientId, user_id: r.userId, sid: r.sid })),
  );
}

/**
 * Claims up to `limit` due deliveries, as the mail outbox does (mail-outbox.repository claimDue):
 * pending ones whose time has come and ones left 'sending' by a worker whose lease ran out.
 * FOR UPDATE SKIP LOCKED, so workers on every instance take different rows; each claim is an attempt.
 */
export async function claimDue(db: Queryable, limit: number, leaseSeconds: number): Promise<BackchannelLogoutRow[]> {
  const due = db('backchannel_logouts')
    .select('id')
    .whereIn('status', ['pending', 'sending'])
    .andWhere('next_attempt_at', '<=', db.fn.now())
    .orderBy('next_attempt_at')
    .limit(limit)
    .forUpdate()
    .skipLocked();
  const rows = await db('backchannel_logouts')
    .whereIn('id', due)
    .update({ status: 'sending', attempts: db.raw('attempts + 1'), next_attempt_at: secondsFromNow(db, leaseSeconds) })
    .returning('*');
  return rows.map(toRow);
}

/** Only the claim that is still current may record its outcome. */
export async function markDelivered(db: Queryable, id: string, attempt: number): Promise<boolean> {
  const n = await db('backchannel_logouts')
    .where({ id, status: 'sending', attempts: attempt })
    .update({ status: 'delivered', delivered_at: db.fn.now(), last_error: null });
  return n > 0;
}

/** A failed attempt: pending again after `retryInSeconds`, or failed for good. */
export async function markFailed(
  db: Queryable,
  id: string,
  attempt: number,
  f: { final: boolean; retryInSeconds: number; error: string },
): Promise<boolean> {
  const n = await db('backchannel_logouts')
    .where({ id, status: 'sending', attempts: attempt })
    .update({
      status: f.final ? 'failed' : 'pending',
      next_attempt_at: secondsFromNow(db, f.final ? 0 : f.retryInSeconds),
      last_error: f.error,
    });
  return n > 0;
}

export async function findById(db: Queryable, id: string): Promise<BackchannelLogoutRow | undefined> {
  const row = await db('backchannel_logouts').where({ id }).first();
  return row ? toRow(row) : undefined;
}

/** A client's deliveries, oldest first (operators, tests). */
export async function listByClient(db: Queryable, clientId: string): Promise<BackchannelLogoutRow[]> {
  return (await db('backchannel_logouts').where({ client_id: clientId }).orderBy('created_at').orderBy('id')).map(
    toRow,
  );
}

/** The clients among `clientIds` registered for back-channel logout, with whether they require a sid. */
export async function receivingClients(
  db: Queryable,
  platformId: string,
  clientIds: string[],
): Promise<Map<string, { sessionRequired: boolean }>> {
  if (clientIds.length === 0) return new Map();
  const rows: { id: string; backchannel_logout_session_required: boolean }[] = await db('clients')
    .where({ platform_id: platformId })
    .whereIn('id', clientIds)
    .whereNotNull('backchannel_logout_uri')
    .select('id', 'backchannel_logout_session_required');
  return new Map(rows.map((r) => [r.id, { sessionRequired: Boolean(r.backchannel_logout_session_required) }]));
}

/**
 * The clients holding a live refresh token of the user (a family not revoked with an unrotated,
 * unexpired token), each with the browser sessions those families came from (null: unknown).
 * Read before the sign-out revokes them; `browserSessionId` narrows to one browser's families.
 */
export async function liveRefreshClients(
  db: Queryable,
  platformId: string,
  userId: string,
  now: Date,
  browserSessionId?: string,
): Promise<{ clientId: string; browserSessionId: string | null }[]> {
  const q = db('refresh_token_families as f')
    .where({ 'f.platform_id': platformId, 'f.user_id': userId })
    .whereNull('f.revoked_at')
    .whereExists(
      db('refresh_tokens as t')
        .whereRaw('t.family_id = f.id')
        .whereNull('t.rotated_at')
        .andWhere('t.expires_at', '>', now),
    )
    .distinct('f.client_id', 'f.browser_session_id');
  if (browserSessionId !== undefined) q.andWhere('f.browser_session_id', browserSessionId);
  const rows: { client_id: string; browser_session_id: string | null }[] = await q;
  return rows.map((r) => ({ clientId: r.client_id, browserSessionId: r.browser_session_id }));
}
