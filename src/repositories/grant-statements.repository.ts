import { preparedQuery, type Db } from '../db';
import { userFromJson, type UserRow } from './user.repository';
import type { PreparedTokens } from '../domain/tokens';

// Each grant is ONE statement: lock, compare-and-swap and inserts in data-modifying CTEs, so a
// grant costs one round trip and one durable commit. The statement only performs the swap when
// every condition holds; the service re-reads the returned row to say which one failed.

export interface CodeExchangeRow {
  id: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  nonce: string | null;
  codeChallenge: string | null;
  authTime: Date;
  amr: string | null;
  acr: string | null;
  /** The browser sign-in the code was issued in (the ID token's sid); null for codes issued without one. */
  browserSessionId: string | null;
  expiresAt: Date;
  consumedAt: Date | null;
  exchanged: boolean;
  hasRefreshToken: boolean;
  user: UserRow | null;
}

export async function exchangeCode(
  db: Db,
  p: { platformId: string; codeHash: string; clientId: string; redirectUri: string; challenge: string | null; tokens: PreparedTokens },
): Promise<CodeExchangeRow | undefined> {
  const t = p.tokens;
  const rows = await preparedQuery(
    db,
    'latchkey_exchange_code',
    `WITH code AS (
       SELECT * FROM authorization_codes WHERE platform_id = $1 AND code_hash = $2 FOR UPDATE
     ), ok AS (
       SELECT * FROM code
       WHERE client_id = $3 AND consumed_at IS NULL AND expires_at > $4 AND redirect_uri = $5
         AND code_challenge IS NOT DISTINCT FROM $6
     ), consumed AS (
       UPDATE authorization_codes SET consumed_at = $4 WHERE id IN (SELECT id FROM ok) RETURNING id
     ), fam AS (
       INSERT INTO refresh_token_families (id, platform_id, client_id, user_id, code_id, scope, auth_time, browser_session_id, amr, acr)
       SELECT $7, platform_id, client_id, user_id, id, scope, auth_time, browser_session_id, amr, acr FROM ok
       WHERE 'offline_access' = ANY (string_to_array(scope, ' '))
       RETURNING id
     ), rt AS (
       INSERT INTO refresh_tokens (id, family_id, token_hash, expires_at) SELECT $8, id, $9, $10 FROM fam
     ), at AS (
       INSERT INTO access_tokens (jti_hash, platform_id, client_id, user_id, scope, family_id, code_id, expires_at, created_at)
       SELECT $11, platform_id, client_id, user_id, scope, (SELECT id FROM fam), id, $12, $4 FROM ok
     )
     SELECT code.id, code.client_id, code.redirect_uri, code.scope, code.nonce, code.code_challenge, code.auth_time, code.amr, code.acr,
            code.browser_session_id, code.expires_at, code.consumed_at, EXISTS (SELECT 1 FROM ok) AS exchanged,
            EXISTS (SELECT 1 FROM ok WHERE 'offline_access' = ANY (string_to_array(ok.scope, ' '))) AS has_refresh_token,
            (SELECT row_to_json(u.*) FROM users u WHERE u.id = code.user_id) AS user_json
     FROM code`,
    [p.platformId, p.codeHash, p.clientId, t.now, p.redirectUri, p.challenge, t.familyId, t.refreshId, t.refreshHash, t.refreshExpiresAt, t.jtiHash, t.accessExpiresAt],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    id: r.id,
    clientId: r.client_id,
    redirectUri: r.redirect_uri,
    scope: r.scope,
    nonce: r.nonce,
    codeChallenge: r.code_challenge,
    authTime: r.auth_time,
    amr: r.amr ?? null,
    acr: r.acr ?? null,
    browserSessionId: r.browser_session_id ?? null,
    expiresAt: r.expires_at,
    consumedAt: r.consumed_at,
    exchanged: r.exchanged,
    hasRefreshToken: r.has_refresh_token,
    user: r.user_json ? userFromJson(r.user_json) : null,
  };
}

export interface RefreshRotationRow {
  familyId: string;
  clientId: string;
  rotatedAt: Date | null;
  expiresAt: Date;
  familyRevokedAt: Date | null;
  authTime: Date;
  amr: string | null;
  acr: string | null;
  /** The family's browser sign-in (the ID token's sid); null for families without one. */
  browserSessionId: string | null;
  /** Every condition held and the successor is live: a token response is due. */
  rotated: boolean;
  /** The presented token was valid or inside its grace window, but its successor had already been rotated. */
  successorUsed: boolean;
  accessScope: string | null;
  user: UserRow | null;
}

/**
 * `requestedScopes` null keeps the family's scope; otherwise narrows to it (offline_access kept).
 * `tokens.refreshHash` must be derived from the presented token, so that a replay inside the grace
 * window names the same successor row: it is inserted once, and a replay only re-reads it.
 */
export async function rotateRefreshToken(
  db: Db,
  p: { platformId: string; tokenHash: string; clientId: string; graceStart: Date; requestedScopes: string[] | null; tokens: PreparedTokens },
): Promise<RefreshRotationRow | undefined> {
  const t = p.tokens;
  // The successor upsert: ON CONFLICT DO UPDATE (a no-op SET) locks the existing successor and
  // returns its newest version even when a concurrent rotation committed it after this statement's
  // snapshot, which a plain SELECT would not see. Lock order is always presented token, then
  // successor, so concurrent replays and a rotation of the successor cannot deadlock.
  const rows = await preparedQuery(
    db,
    'latchkey_rotate_refresh_token',
    `WITH cur AS (
       SELECT t.id, t.family_id, t.rotated_at, t.expires_at, f.client_id, f.user_id, f.scope, f.auth_time, f.amr, f.acr, f.browser_session_id, f.revoked_at AS family_revoked_at
       FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id
       WHERE t.token_hash = $1 AND f.platform_id = $2
       FOR UPDATE OF t
     ), ok AS (
       SELECT cur.*,
         CASE WHEN CAST($3 AS text) IS NULL THEN cur.scope
              ELSE (SELECT string_agg(s, ' ' ORDER BY n) FROM unnest(string_to_array(cur.scope, ' ')) WITH ORDINALITY AS x(s, n)
                    WHERE s = ANY (string_to_array(CAST($3 AS text), ' ')) OR s = 'offline_access') END AS access_scope
       FROM cur
       WHERE client_id = $4 AND family_revoked_at IS NULL AND expires_at > $5
         AND (rotated_at IS NULL OR rotated_at >= $6)
     ), swap AS (
       UPDATE refresh_tokens SET rotated_at = $5 WHERE id IN (SELECT id FROM ok) AND rotated_at IS NULL
     ), rt AS (
       INSERT INTO refresh_tokens AS r (id, family_id, token_hash, expires_at) SELECT $7, family_id, $8, $9 FROM ok
       ON CONFLICT (token_hash) DO UPDATE SET rotated_at = r.rotated_at WHERE r.family_id = EXCLUDED.family_id
       RETURNING r.family_id, r.rotated_at
     ), live AS (
       SELECT ok.* FROM ok JOIN rt ON rt.family_id = ok.family_id WHERE rt.rotated_at IS NULL
     ), at AS (
       INSERT INTO access_tokens (jti_hash, platform_id, client_id, user_id, scope, family_id, code_id, expires_at, created_at)
       SELECT $10, $2, client_id, user_id, access_scope, family_id, NULL, $11, $5 FROM live
     )
     SELECT cur.family_id, cur.client_id, cur.rotated_at, cur.expires_at, cur.family_revoked_at, cur.auth_time, cur.amr, cur.acr, cur.browser_session_id,
            EXISTS (SELECT 1 FROM live) AS rotated,
            EXISTS (SELECT 1 FROM ok) AND NOT EXISTS (SELECT 1 FROM live) AS successor_used,
            (SELECT access_scope FROM live) AS access_scope,
            (SELECT row_to_json(u.*) FROM users u WHERE u.id = cur.user_id) AS user_json
     FROM cur`,
    [p.tokenHash, p.platformId, p.requestedScopes ? p.requestedScopes.join(' ') : null, p.clientId, t.now, p.graceStart, t.refreshId, t.refreshHash, t.refreshExpiresAt, t.jtiHash, t.accessExpiresAt],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    familyId: r.family_id,
    clientId: r.client_id,
    rotatedAt: r.rotated_at,
    expiresAt: r.expires_at,
    familyRevokedAt: r.family_revoked_at,
    authTime: r.auth_time,
    amr: r.amr ?? null,
    acr: r.acr ?? null,
    browserSessionId: r.browser_session_id ?? null,
    rotated: r.rotated,
    successorUsed: r.successor_used,
    accessScope: r.access_scope,
    user: r.user_json ? userFromJson(r.user_json) : null,
  };
}
