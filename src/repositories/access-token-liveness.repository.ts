import { preparedQuery, type Db, type Queryable } from '../db';
import type { TokenAnchorKind } from '../domain/access-token-id';
import { invalidateUsers } from '../db/invalidation';
import { toUser, type UserRow } from './user.repository';

// An access token has no row (docs/decisions.md, "Access tokens without a row"): it is live while
// the grant its jti names is, it is not on the denylist, and its user is enabled. One statement,
// one round trip, per kind of grant.

/** The grant's client and user, while it still issues live tokens. $1 platform, $2 the grant's id. */
const GRANT_OF: Record<TokenAnchorKind, string> = {
  family: `SELECT client_id, user_id FROM refresh_token_families
           WHERE id = CAST($2 AS uuid) AND platform_id = $1 AND revoked_at IS NULL`,
  code: `SELECT client_id, user_id FROM authorization_codes
         WHERE id = CAST($2 AS uuid) AND platform_id = $1 AND consumed_at IS NOT NULL AND tokens_revoked_at IS NULL`,
  device: `SELECT client_id, user_id FROM device_authorizations
           WHERE id = CAST($2 AS uuid) AND platform_id = $1 AND status = 'consumed' AND tokens_revoked_at IS NULL`,
  client: `SELECT id AS client_id, CAST(NULL AS uuid) AS user_id FROM clients WHERE id = CAST($2 AS uuid) AND platform_id = $1`,
  // A token issued with a row of its own: the row, and the family or code it came from.
  legacy: `SELECT a.client_id, a.user_id FROM access_tokens a
           WHERE a.jti_hash = $2 AND a.platform_id = $1 AND a.revoked_at IS NULL
             AND (a.family_id IS NULL OR EXISTS (SELECT 1 FROM refresh_token_families f WHERE f.id = a.family_id AND f.revoked_at IS NULL))
             AND (a.code_id IS NULL OR NOT EXISTS (SELECT 1 FROM authorization_codes c WHERE c.id = a.code_id AND c.tokens_revoked_at IS NOT NULL))`,
};

/**
 * The live token's client (the exchanging client, for an exchanged token) and its user's row (all
 * null for a token no user is behind). $1 platform, $2 the grant's id, $3 the jti's digest.
 */
export function liveTokenSql(kind: TokenAnchorKind, exchanged: boolean): string {
  return `SELECT ${exchanged ? 'x' : 'g'}.client_id AS token_client_id, g.user_id AS token_user_id, u.*
    FROM (${GRANT_OF[kind]}) g
    ${exchanged ? 'JOIN exchanged_access_tokens x ON x.jti_hash = $3 AND x.platform_id = $1' : ''}
    LEFT JOIN users u ON u.id = g.user_id
    WHERE NOT EXISTS (SELECT 1 FROM revoked_access_tokens r WHERE r.jti_hash = $3)
      AND (g.user_id IS NULL OR (u.id IS NOT NULL AND u.disabled_at IS NULL))`;
}

export interface LiveTokenQuery {
  platformId: string;
  anchor: { kind: TokenAnchorKind; id: string };
  exchanged: boolean;
  jtiHash: string;
}

/** The live token's client and user (null: no user is behind it), or undefined when it is not live. */
export async function findLiveToken(
  db: Db,
  q: LiveTokenQuery,
): Promise<{ clientId: string; user: UserRow | null } | undefined> {
  const rows = await preparedQuery(
    db,
    `latchkey_live_token_${q.anchor.kind}${q.exchanged ? '_exchanged' : ''}`,
    liveTokenSql(q.anchor.kind, q.exchanged),
    [q.platformId, q.anchor.id, q.jtiHash],
  );
  const r = rows[0];
  if (!r) return undefined;
  return { clientId: r.token_client_id, user: r.token_user_id === null ? null : toUser(r) };
}

/**
 * RFC 7009: the token, and every token exchanged from it at any depth (RFC 8693: they were only
 * ever as good as their subject), are denied until `expiresAt`, the token's own expiry (an
 * exchanged token never outlives its subject).
 */
export async function denyAccessToken(
  db: Queryable,
  t: { jtiHash: string; userId: string | null; expiresAt: Date },
): Promise<void> {
  await db.raw(
    `WITH RECURSIVE lineage AS (
       SELECT jti_hash, subject_jti_hash FROM exchanged_access_tokens
       UNION ALL
       SELECT jti_hash, subject_jti_hash FROM access_tokens WHERE subject_jti_hash IS NOT NULL
     ), tree AS (
       SELECT CAST(? AS text) AS jti_hash
       UNION
       SELECT l.jti_hash FROM lineage l JOIN tree ON l.subject_jti_hash = tree.jti_hash
     )
     INSERT INTO revoked_access_tokens (jti_hash, user_id, expires_at)
     SELECT jti_hash, ?, ? FROM tree
     ON CONFLICT (jti_hash) DO NOTHING`,
    [t.jtiHash, t.userId, t.expiresAt],
  );
  invalidateUsers([t.userId]);
}

/**
 * Ends the access tokens that live by the user's redeemed codes and device authorizations (and
 * those issued with a row, before tokens had none); those of refresh families end with the
 * families (token.repository.ts, revokeByUser). Exact, and for good: enabled again, the user's
 * earlier tokens stay dead.
 */
export async function revokeUserTokens(db: Queryable, userId: string, at: Date): Promise<void> {
  await db('authorization_codes')
    .where({ user_id: userId })
    .whereNotNull('consumed_at')
    .whereNull('tokens_revoked_at')
    .update({ tokens_revoked_at: at });
  await db('device_authorizations')
    .where({ user_id: userId, status: 'consumed' })
    .whereNull('tokens_revoked_at')
    .update({ tokens_revoked_at: at });
  await db('access_tokens').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: at });
  invalidateUsers([userId]);
}
