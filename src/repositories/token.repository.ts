import type { Queryable } from '../db';
import { toUser } from './user.repository';
import { reviveTimestamps } from './json-row';
import { invalidateUsers } from '../db/invalidation';

export interface AccessTokenRecord {
  jtiHash: string;
  platformId: string;
  clientId: string;
  /** null: a client credentials token, the client's own (RFC 6749 §4.4). */
  userId: string | null;
  scope: string;
  familyId: string | null;
  codeId: string | null;
  expiresAt: Date;
  revokedAt: Date | null;
  createdAt: Date;
}

const toAccess = (r: any): AccessTokenRecord => ({
  jtiHash: r.jti_hash,
  platformId: r.platform_id,
  clientId: r.client_id,
  userId: r.user_id,
  scope: r.scope,
  familyId: r.family_id,
  codeId: r.code_id,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  createdAt: r.created_at,
});

/** Revokes an access token and every token exchanged from it, at any depth (RFC 8693 tokens name their subject token). */
export async function revokeAccessToken(db: Queryable, jtiHash: string, at: Date): Promise<void> {
  const { rows } = await db.raw(
    `WITH RECURSIVE tree AS (
       SELECT jti_hash FROM access_tokens WHERE jti_hash = ?
       UNION
       SELECT a.jti_hash FROM access_tokens a JOIN tree ON a.subject_jti_hash = tree.jti_hash
     )
     UPDATE access_tokens SET revoked_at = ? WHERE jti_hash IN (SELECT jti_hash FROM tree) AND revoked_at IS NULL
     RETURNING user_id`,
    [jtiHash, at],
  );
  invalidateUsers(rows.map((r: { user_id: string | null }) => r.user_id));
}

export interface RefreshTokenRecord {
  id: string;
  familyId: string;
  rotatedAt: Date | null;
  expiresAt: Date;
  createdAt: Date;
  family: {
    platformId: string;
    clientId: string;
    userId: string;
    scope: string;
    authTime: Date;
    browserSessionId: string | null;
    revokedAt: Date | null;
  };
}

const toRefresh = (r: any): RefreshTokenRecord => ({
  id: r.id,
  familyId: r.family_id,
  rotatedAt: r.rotated_at,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  family: {
    platformId: r.platform_id,
    clientId: r.client_id,
    userId: r.user_id,
    scope: r.scope,
    authTime: r.auth_time,
    browserSessionId: r.browser_session_id,
    revokedAt: r.revoked_at,
  },
});

function refreshWithFamily(db: Queryable) {
  return db('refresh_tokens as t')
    .join('refresh_token_families as f', 'f.id', 't.family_id')
    .select(
      't.id',
      't.family_id',
      't.rotated_at',
      't.expires_at',
      't.created_at',
      'f.platform_id',
      'f.client_id',
      'f.user_id',
      'f.scope',
      'f.auth_time',
      'f.browser_session_id',
      'f.revoked_at',
    );
}

export async function findRefreshToken(db: Queryable, platformId: string, tokenHash: string) {
  const row = await refreshWithFamily(db).where({ 't.token_hash': tokenHash, 'f.platform_id': platformId }).first();
  return row ? toRefresh(row) : undefined;
}

/** Revokes families and every access token issued from them. */
async function revokeFamiliesWhere(db: Queryable, at: Date, where: (q: any) => void): Promise<number> {
  const rows: { id: string; user_id: string }[] = await db('refresh_token_families')
    .where(where)
    .whereNull('revoked_at')
    .update({ revoked_at: at })
    .returning(['id', 'user_id']);
  const ids = rows.map((r) => r.id);
  if (ids.length)
    await db('access_tokens').whereIn('family_id', ids).whereNull('revoked_at').update({ revoked_at: at });
  invalidateUsers(rows.map((r) => r.user_id));
  return ids.length;
}

export const revokeFamily = (db: Queryable, familyId: string, at: Date) =>
  revokeFamiliesWhere(db, at, (q) => q.where({ id: familyId }));

/** RFC 6749 §4.1.2: a replayed code revokes everything its first exchange issued. */
export async function revokeByCode(db: Queryable, codeId: string, at: Date): Promise<void> {
  await revokeFamiliesWhere(db, at, (q) => q.where({ code_id: codeId }));
  const rows = await db('access_tokens')
    .where({ code_id: codeId })
    .whereNull('revoked_at')
    .update({ revoked_at: at })
    .returning('user_id');
  invalidateUsers(rows.map((r: { user_id: string }) => r.user_id));
}

/** Sign-out: refresh tokens issued through one browser session to one user. */
export const revokeByBrowserSession = (
  db: Queryable,
  platformId: string,
  userId: string,
  browserSessionId: string,
  at: Date,
) =>
  revokeFamiliesWhere(db, at, (q) =>
    q.where({ platform_id: platformId, user_id: userId, browser_session_id: browserSessionId }),
  );

export const revokeByUserAndClient = (db: Queryable, userId: string, clientId: string, at: Date) =>
  revokeFamiliesWhere(db, at, (q) => q.where({ user_id: userId, client_id: clientId }));

export const revokeByUser = (db: Queryable, userId: string, at: Date) =>
  revokeFamiliesWhere(db, at, (q) => q.where({ user_id: userId }));

/** Userinfo/introspection in one round trip: the token record with its user (null for a client credentials token). */
export async function findAccessTokenWithUser(db: Queryable, jtiHash: string) {
  const row = await db('access_tokens as a')
    .leftJoin('users as u', 'u.id', 'a.user_id')
    .where({ 'a.jti_hash': jtiHash })
    // A disabled user's tokens are accepted nowhere; a token without a user has no one to disable.
    .where((q) => q.whereNull('a.user_id').orWhereNull('u.disabled_at'))
    .select('u.*', db.raw('row_to_json(a.*) as access'))
    .first();
  if (!row) return undefined;
  const { access, ...user } = row;
  const token = toAccess(reviveTimestamps(access, ['expires_at', 'revoked_at', 'created_at']));
  return { token, user: token.userId === null ? null : toUser(user) };
}
