import { preparedQuery, type Db } from '../db';
import { userFromJson, type UserRow } from './user.repository';
import type { PreparedTokens } from '../domain/tokens';

/**
 * The access token's expiry: the earliest of its audience's (the registered URIs and expiries
 * given as arrays), else the default. Reads `audience` of the row it is selected from.
 */
export const ACCESS_EXPIRY = (fallback: string, uris: string, expiries: string) =>
  `COALESCE((SELECT min(x.e) FROM unnest(CAST(${uris} AS text[]), CAST(${expiries} AS timestamptz[])) AS x(u, e) WHERE x.u = ANY (audience)), ${fallback})`;

// Each grant is ONE statement: lock, compare-and-swap and inserts in data-modifying CTEs, so a
// grant costs one round trip and one durable commit. The statement only performs the swap when
// every condition holds; the service re-reads the returned row to say which one failed.

/** The code exchange: consumes the code and, with offline_access, starts a refresh-token family. */
export const EXCHANGE_CODE = {
  name: 'latchkey_exchange_code',
  text: `WITH code AS (
       SELECT c.*, COALESCE(CAST($12 AS text[]), c.resources) AS audience
       FROM authorization_codes c WHERE platform_id = $1 AND code_hash = $2 FOR UPDATE
     ), target AS (
       SELECT code.*, (audience <@ resources AND audience <@ CAST($13 AS text[])) AS target_ok FROM code
     ), ok AS (
       SELECT * FROM target
       WHERE client_id = $3 AND consumed_at IS NULL AND expires_at > $4 AND redirect_uri = $5
         AND code_challenge IS NOT DISTINCT FROM $6 AND target_ok
     ), consumed AS (
       UPDATE authorization_codes SET consumed_at = $4 WHERE id IN (SELECT id FROM ok) RETURNING id
     ), fam AS (
       INSERT INTO refresh_token_families (id, platform_id, client_id, user_id, code_id, scope, auth_time, browser_session_id, amr, acr, resources)
       SELECT $7, platform_id, client_id, user_id, id, scope, auth_time, browser_session_id, amr, acr, resources FROM ok
       WHERE 'offline_access' = ANY (string_to_array(scope, ' '))
       RETURNING id
     ), rt AS (
       INSERT INTO refresh_tokens (id, family_id, token_hash, expires_at) SELECT $8, id, $9, $10 FROM fam
     )
     SELECT target.id, target.client_id, target.redirect_uri, target.scope, target.nonce, target.code_challenge, target.auth_time, target.amr, target.acr,
            target.browser_session_id, target.expires_at, target.consumed_at, target.audience, target.target_ok,
            (SELECT ${ACCESS_EXPIRY('$11', '$13', '$14')} FROM ok) AS access_expires_at, EXISTS (SELECT 1 FROM ok) AS exchanged,
            EXISTS (SELECT 1 FROM ok WHERE 'offline_access' = ANY (string_to_array(ok.scope, ' '))) AS has_refresh_token,
            (SELECT row_to_json(u.*) FROM users u WHERE u.id = target.user_id) AS user_json
     FROM target`,
};

/**
 * The rotation. The family is found by its key (the scalar subquery), never by the join alone: a
 * plan made while the tables were small (a prepared statement keeps its generic plan for the
 * connection's life) would otherwise scan every family of the platform per rotation as the table
 * grows. The successor upsert: ON CONFLICT DO UPDATE (a no-op SET) locks the existing successor
 * and returns its newest version even when a concurrent rotation committed it after this
 * statement's snapshot, which a plain SELECT would not see. Lock order is always presented token,
 * then successor, so concurrent replays and a rotation of the successor cannot deadlock.
 */
export const ROTATE_REFRESH_TOKEN = {
  name: 'latchkey_rotate_refresh_token',
  text: `WITH cur AS (
       SELECT t.id, t.family_id, t.rotated_at, t.expires_at, f.client_id, f.user_id, f.scope, f.auth_time, f.amr, f.acr, f.browser_session_id, f.revoked_at AS family_revoked_at,
              COALESCE(CAST($11 AS text[]), f.resources) AS audience,
              (COALESCE(CAST($11 AS text[]), f.resources) <@ f.resources AND COALESCE(CAST($11 AS text[]), f.resources) <@ CAST($12 AS text[])) AS target_ok
       FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id
       WHERE t.token_hash = $1 AND f.platform_id = $2
         AND f.id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)
       FOR UPDATE OF t
     ), ok AS (
       SELECT cur.*,
         CASE WHEN CAST($3 AS text) IS NULL THEN cur.scope
              ELSE (SELECT string_agg(s, ' ' ORDER BY n) FROM unnest(string_to_array(cur.scope, ' ')) WITH ORDINALITY AS x(s, n)
                    WHERE s = ANY (string_to_array(CAST($3 AS text), ' ')) OR s = 'offline_access') END AS access_scope
       FROM cur
       WHERE client_id = $4 AND family_revoked_at IS NULL AND expires_at > $5
         AND (rotated_at IS NULL OR rotated_at >= $6) AND target_ok
     ), swap AS (
       UPDATE refresh_tokens SET rotated_at = $5 WHERE id IN (SELECT id FROM ok) AND rotated_at IS NULL
     ), rt AS (
       INSERT INTO refresh_tokens AS r (id, family_id, token_hash, expires_at) SELECT $7, family_id, $8, $9 FROM ok
       ON CONFLICT (token_hash) DO UPDATE SET rotated_at = r.rotated_at WHERE r.family_id = EXCLUDED.family_id
       RETURNING r.family_id, r.rotated_at
     ), live AS (
       SELECT ok.* FROM ok JOIN rt ON rt.family_id = ok.family_id WHERE rt.rotated_at IS NULL
     )
     SELECT cur.family_id, cur.client_id, cur.rotated_at, cur.expires_at, cur.family_revoked_at, cur.auth_time, cur.amr, cur.acr, cur.browser_session_id,
            cur.audience, cur.target_ok, (SELECT ${ACCESS_EXPIRY('$10', '$12', '$13')} FROM live) AS access_expires_at,
            EXISTS (SELECT 1 FROM live) AS rotated,
            EXISTS (SELECT 1 FROM ok) AND NOT EXISTS (SELECT 1 FROM live) AS successor_used,
            (SELECT access_scope FROM live) AS access_scope,
            (SELECT row_to_json(u.*) FROM users u WHERE u.id = cur.user_id) AS user_json
     FROM cur`,
};

/**
 * The RFC 8707 audience of a token request: the resources it names (null: all the grant named),
 * and the platform's registered resources with the expiry an access token for each would have.
 * An audience outside the grant, or naming a resource no longer registered, is no exchange
 * (`targetOk` false); the access token expires at the earliest of its audience's expiries, else
 * at `tokens.accessExpiresAt`.
 */
export interface TokenTarget {
  requested: string[] | null;
  registered: { uri: string; accessExpiresAt: Date }[];
}

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
  /** The access token's audience (the requested resources, else all the code named) and whether the grant and registry allow it. */
  audience: string[];
  targetOk: boolean;
  /** When the issued access token expires (null when none was issued). */
  accessExpiresAt: Date | null;
  exchanged: boolean;
  hasRefreshToken: boolean;
  user: UserRow | null;
}

export async function exchangeCode(
  db: Db,
  p: {
    platformId: string;
    codeHash: string;
    clientId: string;
    redirectUri: string;
    challenge: string | null;
    target: TokenTarget;
    tokens: PreparedTokens;
  },
): Promise<CodeExchangeRow | undefined> {
  const t = p.tokens;
  const g = p.target;
  const rows = await preparedQuery(db, EXCHANGE_CODE.name, EXCHANGE_CODE.text, [
    p.platformId,
    p.codeHash,
    p.clientId,
    t.now,
    p.redirectUri,
    p.challenge,
    t.familyId,
    t.refreshId,
    t.refreshHash,
    t.refreshExpiresAt,
    t.accessExpiresAt,
    g.requested,
    g.registered.map((r) => r.uri),
    g.registered.map((r) => r.accessExpiresAt),
  ]);
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
    audience: r.audience,
    targetOk: r.target_ok,
    accessExpiresAt: r.access_expires_at ?? null,
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
  /** The access token's audience (the requested resources, else all the family named) and whether the grant and registry allow it. */
  audience: string[];
  targetOk: boolean;
  /** When the issued access token expires (null when none was issued). */
  accessExpiresAt: Date | null;
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
  p: {
    platformId: string;
    tokenHash: string;
    clientId: string;
    graceStart: Date;
    requestedScopes: string[] | null;
    target: TokenTarget;
    tokens: PreparedTokens;
  },
): Promise<RefreshRotationRow | undefined> {
  const t = p.tokens;
  const g = p.target;
  const rows = await preparedQuery(db, ROTATE_REFRESH_TOKEN.name, ROTATE_REFRESH_TOKEN.text, [
    p.tokenHash,
    p.platformId,
    p.requestedScopes ? p.requestedScopes.join(' ') : null,
    p.clientId,
    t.now,
    p.graceStart,
    t.refreshId,
    t.refreshHash,
    t.refreshExpiresAt,
    t.accessExpiresAt,
    g.requested,
    g.registered.map((r) => r.uri),
    g.registered.map((r) => r.accessExpiresAt),
  ]);
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
    audience: r.audience,
    targetOk: r.target_ok,
    accessExpiresAt: r.access_expires_at ?? null,
    accessScope: r.access_scope,
    user: r.user_json ? userFromJson(r.user_json) : null,
  };
}
