import { preparedQuery, type Db } from '../db';
import type { AuditContext, AuditEventInput } from '../domain/audit';
import { auditInsert, auditValues } from './audit-event.repository';

// The grants that issue an access token and nothing else (client credentials, token exchange), each
// ONE statement like the others (grant-statements.repository.ts): the token row and its audit event
// are inserted together, so neither commits without the other, in one round trip.

export interface NewAccessToken {
  jtiHash: string;
  platformId: string;
  clientId: string;
  scope: string;
  expiresAt: Date;
  now: Date;
}

/** RFC 6749 §4.4: a client's own access token (no user, no family), with its audit event. */
export async function insertClientToken(
  db: Db,
  t: NewAccessToken,
  audit: { ctx: AuditContext; event: AuditEventInput },
): Promise<void> {
  await preparedQuery(
    db,
    'latchkey_client_credentials',
    `WITH at AS (
       INSERT INTO access_tokens (jti_hash, platform_id, client_id, user_id, scope, expires_at, created_at)
       VALUES ($1, $2, $3, NULL, $4, $5, $6) RETURNING 1
     ), ev AS (${auditInsert(7, 'at')})
     SELECT 1`,
    [t.jtiHash, t.platformId, t.clientId, t.scope, t.expiresAt, t.now, ...auditValues(audit, t.now)],
  );
}

/**
 * RFC 8693: an access token exchanged from a live subject token, inserted only while the subject
 * token is live (neither revoked nor expired, checked here again, not from a cache). It keeps the
 * subject's user, refresh family and code, so that whatever revokes those revokes it too, names the
 * subject token so that revoking that token does, and never outlives it. Returns its expiry, or
 * undefined when the subject token is no longer live (nothing inserted).
 */
export async function insertExchangedToken(
  db: Db,
  t: NewAccessToken & { subjectJtiHash: string },
  audit: { ctx: AuditContext; event: AuditEventInput },
): Promise<Date | undefined> {
  const rows = await preparedQuery(
    db,
    'latchkey_token_exchange',
    `WITH s AS (
       SELECT * FROM access_tokens
       WHERE jti_hash = $1 AND platform_id = $2 AND revoked_at IS NULL AND expires_at > $3
     ), at AS (
       INSERT INTO access_tokens (jti_hash, platform_id, client_id, user_id, scope, family_id, code_id, subject_jti_hash, expires_at, created_at)
       SELECT $4, platform_id, $5, user_id, $6, family_id, code_id, jti_hash, LEAST(CAST($7 AS timestamptz), expires_at), $3 FROM s
       RETURNING expires_at
     ), ev AS (${auditInsert(8, 'at')})
     SELECT expires_at FROM at`,
    [t.subjectJtiHash, t.platformId, t.now, t.jtiHash, t.clientId, t.scope, t.expiresAt, ...auditValues(audit, t.now)],
  );
  return rows[0]?.expires_at;
}
