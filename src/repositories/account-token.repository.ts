import type { Queryable } from '../db';

export type AccountTokenPurpose = 'verify_email' | 'reset_password';

export interface AccountTokenRow {
  id: string;
  platformId: string;
  userId: string;
  purpose: AccountTokenPurpose;
  email: string;
  expiresAt: Date;
  consumedAt: Date | null;
  createdAt: Date;
}

const toToken = (r: any): AccountTokenRow => ({
  id: r.id,
  platformId: r.platform_id,
  userId: r.user_id,
  purpose: r.purpose,
  email: r.email,
  expiresAt: r.expires_at,
  consumedAt: r.consumed_at,
  createdAt: r.created_at,
});

export async function insert(db: Queryable, tokenHash: string, t: Omit<AccountTokenRow, 'consumedAt'>): Promise<void> {
  await db('account_tokens').insert({
    id: t.id,
    token_hash: tokenHash,
    platform_id: t.platformId,
    user_id: t.userId,
    purpose: t.purpose,
    email: t.email,
    expires_at: t.expiresAt,
    created_at: t.createdAt,
  });
}

export async function findByHash(db: Queryable, platformId: string, purpose: AccountTokenPurpose, tokenHash: string) {
  const row = await db('account_tokens').where({ platform_id: platformId, purpose, token_hash: tokenHash }).first();
  return row ? toToken(row) : undefined;
}

/** Marks the token used unless it already was; undefined when another request consumed it first. */
export async function markConsumed(db: Queryable, id: string, at: Date): Promise<AccountTokenRow | undefined> {
  const [row] = await db('account_tokens')
    .where({ id })
    .whereNull('consumed_at')
    .update({ consumed_at: at })
    .returning('*');
  return row ? toToken(row) : undefined;
}

/** Ends every outstanding token of a user for one purpose (a newer link, or the password changed). */
export async function consumeAllForUser(
  db: Queryable,
  userId: string,
  purpose: AccountTokenPurpose,
  at: Date,
): Promise<void> {
  await db('account_tokens').where({ user_id: userId, purpose }).whereNull('consumed_at').update({ consumed_at: at });
}

/** Creation times of a user's recent tokens for a purpose, newest first (throttling). */
export async function recentCreationTimes(
  db: Queryable,
  userId: string,
  purpose: AccountTokenPurpose,
  since: Date,
): Promise<Date[]> {
  const rows = await db('account_tokens')
    .where({ user_id: userId, purpose })
    .andWhere('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .select('created_at');
  return rows.map((r: { created_at: Date }) => r.created_at);
}

export async function deleteExpired(db: Queryable, before: Date): Promise<number> {
  return db('account_tokens').where('expires_at', '<', before).delete();
}
