import type { Queryable } from '../db';

/**
 * Records a client assertion's jti digest until `expiresAt`. False when the same jti of the same
 * client is recorded and not yet expired (a replay). One statement on the primary key: of two
 * concurrent uses, on any instances, exactly one records it. A row already past its expiry (not
 * purged yet) is taken over, since the assertion it stood for can no longer be used.
 */
export async function recordJti(
  db: Queryable,
  clientId: string,
  jtiHash: string,
  expiresAt: Date,
  now: Date,
): Promise<boolean> {
  const { rows } = await db.raw(
    `INSERT INTO client_assertion_jtis (client_id, jti_hash, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (client_id, jti_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at
       WHERE client_assertion_jtis.expires_at <= ?
     RETURNING 1`,
    [clientId, jtiHash, expiresAt, now],
  );
  return rows.length === 1;
}
