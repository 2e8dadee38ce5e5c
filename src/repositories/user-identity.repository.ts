import type { Queryable } from '../db';
import type { UserIdentity } from '../domain/upstream';

export interface UserIdentityRow extends UserIdentity {
  sealedTokens: string | null;
}

const toIdentity = (r: any): UserIdentityRow => ({
  id: r.id,
  platformId: r.platform_id,
  userId: r.user_id,
  providerId: r.provider_id,
  subject: r.subject,
  email: r.email ?? null,
  sealedTokens: r.sealed_tokens ?? null,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

/**
 * Links the identity; undefined when this upstream subject is already linked (to anyone) or this
 * user already has an identity of this provider (both unique).
 */
export async function insertUnlessLinked(
  db: Queryable,
  i: Omit<UserIdentityRow, 'createdAt' | 'lastUsedAt'>,
  now: Date,
): Promise<UserIdentityRow | undefined> {
  const [row] = await db('user_identities')
    .insert({
      id: i.id,
      platform_id: i.platformId,
      user_id: i.userId,
      provider_id: i.providerId,
      subject: i.subject,
      email: i.email,
      sealed_tokens: i.sealedTokens,
      created_at: now,
      last_used_at: now,
    })
    .onConflict()
    .ignore()
    .returning('*');
  return row ? toIdentity(row) : undefined;
}

export async function findByProviderSubject(
  db: Queryable,
  providerId: string,
  subject: string,
): Promise<UserIdentityRow | undefined> {
  const row = await db('user_identities').where({ provider_id: providerId, subject }).first();
  return row ? toIdentity(row) : undefined;
}

export async function listByUser(db: Queryable, platformId: string, userId: string): Promise<UserIdentityRow[]> {
  return (await db('user_identities').where({ platform_id: platformId, user_id: userId }).orderBy('created_at')).map(
    toIdentity,
  );
}

/** A sign-in through it: the email it gave now and, when kept, its tokens. */
export async function touch(
  db: Queryable,
  id: string,
  f: { email: string | null; sealedTokens?: string | null },
  now: Date,
): Promise<void> {
  await db('user_identities')
    .where({ id })
    .update({
      email: f.email,
      last_used_at: now,
      ...(f.sealedTokens !== undefined ? { sealed_tokens: f.sealedTokens } : {}),
    });
}

export async function remove(db: Queryable, platformId: string, userId: string, id: string): Promise<boolean> {
  return (await db('user_identities').where({ platform_id: platformId, user_id: userId, id }).del()) > 0;
}

/** How many users are linked through the provider (they lose that way in when it goes). */
export async function countByProvider(db: Queryable, platformId: string, providerId: string): Promise<number> {
  const row = await db('user_identities')
    .where({ platform_id: platformId, provider_id: providerId })
    .count<{ n: string | number }[]>('* as n')
    .first();
  return Number(row?.n ?? 0);
}
