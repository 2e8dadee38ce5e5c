import type { Queryable } from '../db';

export interface AuthorizationCodeRow {
  id: string;
  platformId: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scope: string;
  nonce: string | null;
  codeChallenge: string | null;
  authTime: Date;
  browserSessionId: string | null;
  expiresAt: Date;
  consumedAt: Date | null;
}

const toCode = (r: any): AuthorizationCodeRow => ({
  id: r.id,
  platformId: r.platform_id,
  clientId: r.client_id,
  userId: r.user_id,
  redirectUri: r.redirect_uri,
  scope: r.scope,
  nonce: r.nonce,
  codeChallenge: r.code_challenge,
  authTime: r.auth_time,
  browserSessionId: r.browser_session_id,
  expiresAt: r.expires_at,
  consumedAt: r.consumed_at,
});

export async function insert(db: Queryable, codeHash: string, c: Omit<AuthorizationCodeRow, 'consumedAt'>): Promise<void> {
  await db('authorization_codes').insert({
    id: c.id,
    code_hash: codeHash,
    platform_id: c.platformId,
    client_id: c.clientId,
    user_id: c.userId,
    redirect_uri: c.redirectUri,
    scope: c.scope,
    nonce: c.nonce,
    code_challenge: c.codeChallenge,
    auth_time: c.authTime,
    browser_session_id: c.browserSessionId,
    expires_at: c.expiresAt,
  });
}

/** Locks the row: two concurrent exchanges of one code must not both succeed. */
export async function findByHashForUpdate(db: Queryable, platformId: string, codeHash: string) {
  const row = await db('authorization_codes').where({ platform_id: platformId, code_hash: codeHash }).forUpdate().first();
  return row ? toCode(row) : undefined;
}

export async function markConsumed(db: Queryable, id: string, at: Date): Promise<void> {
  await db('authorization_codes').where({ id }).update({ consumed_at: at });
}
