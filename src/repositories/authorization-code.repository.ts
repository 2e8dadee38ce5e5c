import { preparedQuery, type Db } from '../db';

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
  /** How the user signed in: RFC 8176 values, space-separated, and the acr reached; absent before. */
  amr?: string | null;
  acr?: string | null;
  /** The RFC 8707 resource indicators the request named; empty when it named none. */
  resources: string[];
  expiresAt: Date;
  consumedAt: Date | null;
}

/**
 * Issues a code and records, in the same statement, that this browser sign-in reached the client
 * (session_clients, idempotent): one round trip and one durable commit instead of two.
 */
export async function insertJoiningSession(
  db: Db,
  codeHash: string,
  c: Omit<AuthorizationCodeRow, 'consumedAt' | 'browserSessionId'> & { browserSessionId: string },
  sid: string,
  at: Date,
): Promise<void> {
  await preparedQuery(
    db,
    'latchkey_issue_code',
    `WITH joined AS (
       INSERT INTO session_clients (platform_id, user_id, browser_session_id, client_id, sid, created_at) VALUES ($2, $4, $10, $3, $15, $16)
       ON CONFLICT (browser_session_id, user_id, client_id) DO NOTHING
     )
     INSERT INTO authorization_codes (id, code_hash, platform_id, client_id, user_id, redirect_uri, scope, nonce, code_challenge, auth_time, browser_session_id, amr, acr, expires_at, resources)
     VALUES ($1, $14, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $17)`,
    [
      c.id,
      c.platformId,
      c.clientId,
      c.userId,
      c.redirectUri,
      c.scope,
      c.nonce,
      c.codeChallenge,
      c.authTime,
      c.browserSessionId,
      c.amr ?? null,
      c.acr ?? null,
      c.expiresAt,
      codeHash,
      sid,
      at,
      c.resources,
    ],
  );
}
