import type { Queryable } from '../db';

export interface AdminTokenRow {
  id: string;
  name: string;
  platformId: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const toRow = (r: any): AdminTokenRow => ({
  id: r.id,
  name: r.name,
  platformId: r.platform_id,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export async function insert(
  db: Queryable,
  t: { id: string; name: string; platformId: string | null; tokenDigest: string },
): Promise<AdminTokenRow> {
  const [row] = await db('admin_tokens')
    .insert({ id: t.id, name: t.name, platform_id: t.platformId, token_digest: t.tokenDigest })
    .returning('*');
  return toRow(row);
}

/** A live token by its digest. */
export async function findLiveByDigest(db: Queryable, tokenDigest: string): Promise<AdminTokenRow | undefined> {
  const row = await db('admin_tokens').where({ token_digest: tokenDigest }).whereNull('revoked_at').first();
  return row && toRow(row);
}

export async function findById(db: Queryable, id: string): Promise<AdminTokenRow | undefined> {
  const row = await db('admin_tokens').where({ id }).first();
  return row && toRow(row);
}

export async function list(db: Queryable, platformId?: string): Promise<AdminTokenRow[]> {
  const q = db('admin_tokens').orderBy('created_at', 'desc');
  if (platformId) q.where({ platform_id: platformId });
  return (await q).map(toRow);
}

export async function revoke(db: Queryable, id: string, at: Date): Promise<boolean> {
  return (await db('admin_tokens').where({ id }).whereNull('revoked_at').update({ revoked_at: at })) > 0;
}

/** At most once a minute per token: a busy script must not turn every read into a write. */
export async function touch(db: Queryable, id: string, at: Date): Promise<void> {
  await db('admin_tokens')
    .where({ id })
    .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(at.getTime() - 60_000)))
    .update({ last_used_at: at });
}
