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
  /** How the user signed in: RFC 8176 values, space-separated, and the acr reached (issue 13); absent before. */
  amr?: string | null;
  acr?: string | null;
  expiresAt: Date;
  consumedAt: Date | null;
}


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
    amr: c.amr ?? null,
    acr: c.acr ?? null,
    expires_at: c.expiresAt,
  });
}
