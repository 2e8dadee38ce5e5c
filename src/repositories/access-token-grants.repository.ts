import { preparedQuery, type Db } from '../db';
import type { AuditContext, AuditEventInput } from '../domain/audit';
import type { TokenAnchor } from '../domain/access-token-id';
import { auditInsert, auditValues, insert as insertAuditEvent } from './audit-event.repository';
import { liveTokenSql } from './access-token-liveness.repository';

// The grants that issue an access token and nothing else (client credentials, token exchange). The
// token itself is no row (docs/decisions.md, "Access tokens without a row"); what each writes is
// ONE statement like the other grants (grant-statements.repository.ts).

/** RFC 6749 §4.4: a client's own access token lives by the client; only its audit event is written. */
export async function recordClientToken(
  db: Db,
  audit: { ctx: AuditContext; event: AuditEventInput },
  now: Date,
): Promise<void> {
  await insertAuditEvent(db, audit.ctx, audit.event, now);
}

/**
 * RFC 8693: the lineage row of an access token exchanged from a live subject token, inserted only
 * while the subject token is live (checked here again, not from a cache), with its audit event. It
 * lives by the subject's grant, and by this row, which names the subject token (revoking that
 * revokes it) and the exchanging client (deleting that ends it). Returns false when the subject
 * token is no longer live (nothing inserted).
 */
export async function insertExchangedToken(
  db: Db,
  t: {
    platformId: string;
    clientId: string;
    jtiHash: string;
    expiresAt: Date;
    now: Date;
    subject: { anchor: TokenAnchor; exchanged: boolean; jtiHash: string };
  },
  audit: { ctx: AuditContext; event: AuditEventInput },
): Promise<boolean> {
  const s = t.subject;
  const rows = await preparedQuery(
    db,
    `latchkey_token_exchange_${s.anchor.kind}${s.exchanged ? '_exchanged' : ''}`,
    `WITH s AS (${liveTokenSql(s.anchor.kind, s.exchanged)}
     ), x AS (
       INSERT INTO exchanged_access_tokens (jti_hash, subject_jti_hash, platform_id, client_id, user_id, expires_at)
       SELECT $4, $3, $1, $5, token_user_id, $6 FROM s
       RETURNING 1
     ), ev AS (${auditInsert(7, 'x')})
     SELECT 1 FROM x`,
    [t.platformId, s.anchor.id, s.jtiHash, t.jtiHash, t.clientId, t.expiresAt, ...auditValues(audit, t.now)],
  );
  return rows.length > 0;
}
