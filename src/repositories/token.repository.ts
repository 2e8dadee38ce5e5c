import type { Queryable } from '../db';
import { invalidateUsers } from '../db/invalidation';

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

/** Revokes families, and with them every access token they issued. */
async function revokeFamiliesWhere(db: Queryable, at: Date, where: (q: any) => void): Promise<number> {
  const rows: { id: string; user_id: string }[] = await db('refresh_token_families')
    .where(where)
    .whereNull('revoked_at')
    .update({ revoked_at: at })
    .returning(['id', 'user_id']);
  // Their access tokens live by the family (docs/decisions.md, "Access tokens without a row").
  invalidateUsers(rows.map((r) => r.user_id));
  return rows.length;
}

export const revokeFamily = (db: Queryable, familyId: string, at: Date) =>
  revokeFamiliesWhere(db, at, (q) => q.where({ id: familyId }));

/** RFC 6749 §4.1.2: a replayed code revokes everything its first exchange issued. */
export async function revokeByCode(db: Queryable, codeId: string, at: Date): Promise<void> {
  await revokeFamiliesWhere(db, at, (q) => q.where({ code_id: codeId }));
  const rows = await db('authorization_codes')
    .where({ id: codeId })
    .whereNull('tokens_revoked_at')
    .update({ tokens_revoked_at: at })
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
