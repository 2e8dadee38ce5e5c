import type { Queryable } from '../db';

export interface SigningKeyRow {
  kid: string;
  platformId: string;
  sealedSecret: string;
  status: 'active' | 'retired';
  createdAt: Date;
  retiredAt: Date | null;
}

const toKey = (r: any): SigningKeyRow => ({
  kid: r.kid,
  platformId: r.platform_id,
  sealedSecret: r.sealed_secret,
  status: r.status,
  createdAt: r.created_at,
  retiredAt: r.retired_at,
});

/** Keys that still verify: the active one and those retired after `retiredAfter`. Active first. */
export async function listUsable(db: Queryable, platformId: string, retiredAfter: Date): Promise<SigningKeyRow[]> {
  const rows = await db('signing_keys')
    .where({ platform_id: platformId })
    .andWhere((q) => q.where({ status: 'active' }).orWhere('retired_at', '>', retiredAfter))
    .orderByRaw(`status = 'active' DESC, created_at DESC`);
  return rows.map(toKey);
}

export async function retireActive(db: Queryable, platformId: string, at: Date): Promise<void> {
  await db('signing_keys').where({ platform_id: platformId, status: 'active' }).update({ status: 'retired', retired_at: at });
}

export async function insertActive(db: Queryable, k: { kid: string; platformId: string; sealedSecret: string }): Promise<void> {
  await db('signing_keys').insert({ kid: k.kid, platform_id: k.platformId, sealed_secret: k.sealedSecret, status: 'active' });
}

export async function deleteRetiredBefore(db: Queryable, before: Date): Promise<number> {
  return db('signing_keys').where({ status: 'retired' }).andWhere('retired_at', '<', before).delete();
}

export async function findPlatformIdByKid(db: Queryable, kid: string): Promise<string | undefined> {
  const row = await db('signing_keys').where({ kid }).first('platform_id');
  return row?.platform_id;
}
