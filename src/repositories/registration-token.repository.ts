import type { Queryable } from '../db';
import type { RegistrationToken } from '../domain/registration-token';

const toToken = (r: any): RegistrationToken => ({
  id: r.id,
  platformId: r.platform_id,
  maxUses: r.max_uses ?? null,
  uses: r.uses,
  expiresAt: r.expires_at ?? null,
  createdAt: r.created_at,
  revokedAt: r.revoked_at ?? null,
  createdBy: r.created_by ?? null,
});

export async function insert(
  db: Queryable,
  t: {
    id: string;
    platformId: string;
    tokenHash: string;
    maxUses: number | null;
    expiresAt: Date | null;
    createdAt: Date;
    createdBy: string | null;
  },
): Promise<RegistrationToken> {
  const [row] = await db('registration_tokens')
    .insert({
      id: t.id,
      platform_id: t.platformId,
      token_hash: t.tokenHash,
      max_uses: t.maxUses,
      expires_at: t.expiresAt,
      created_at: t.createdAt,
      created_by: t.createdBy,
    })
    .returning('*');
  return toToken(row);
}

/** A platform's tokens, newest first (keyset on the millisecond creation time, then id). */
export async function listPage(
  db: Queryable,
  platformId: string,
  page: { after?: { at: string; id: string }; limit: number },
): Promise<RegistrationToken[]> {
  const q = db('registration_tokens')
    .where({ platform_id: platformId })
    .orderByRaw("date_trunc('milliseconds', created_at) desc, id desc")
    .limit(page.limit);
  if (page.after)
    q.whereRaw("(date_trunc('milliseconds', created_at), id) < (?::timestamptz, ?)", [page.after.at, page.after.id]);
  return (await q).map(toToken);
}

export async function findById(db: Queryable, platformId: string, id: string): Promise<RegistrationToken | undefined> {
  const row = await db('registration_tokens').where({ platform_id: platformId, id }).first();
  return row && toToken(row);
}

/** The stored digest of a token, for the constant-time comparison. */
export async function findHash(db: Queryable, platformId: string, id: string): Promise<string | undefined> {
  const row = await db('registration_tokens').where({ platform_id: platformId, id }).first('token_hash');
  return row?.token_hash;
}

/**
 * Spends one use, in one statement: only while not revoked, not expired and under max_uses, so
 * concurrent registrations never spend more than max_uses. Returns false when none was left.
 */
export async function spendUse(db: Queryable, platformId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db('registration_tokens')
    .where({ platform_id: platformId, id })
    .whereNull('revoked_at')
    .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
    .andWhere((q) => q.whereNull('max_uses').orWhereRaw('uses < max_uses'))
    .update({ uses: db.raw('uses + 1') })
    .returning('id');
  return rows.length === 1;
}

/** Revokes it (a second revocation keeps the first time). */
export async function revoke(
  db: Queryable,
  platformId: string,
  id: string,
  now: Date,
): Promise<RegistrationToken | undefined> {
  const [row] = await db('registration_tokens')
    .where({ platform_id: platformId, id })
    .update({ revoked_at: db.raw('coalesce(revoked_at, ?)', [now]) })
    .returning('*');
  return row && toToken(row);
}
