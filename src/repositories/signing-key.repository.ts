import type { Queryable } from '../db';

export interface SigningKeyRow {
  kid: string;
  platformId: string;
  sealedSecret: string;
  status: 'active' | 'retired';
  createdAt: Date;
  /** Rotated out: no longer signs (it still verifies until its tokens expire, unless withdrawn). */
  retiredAt: Date | null;
  /** Retired by an operator ahead of that: verifies nothing from then. */
  withdrawnAt: Date | null;
}

const toKey = (r: any): SigningKeyRow => ({
  kid: r.kid,
  platformId: r.platform_id,
  sealedSecret: r.sealed_secret,
  status: r.status,
  createdAt: r.created_at,
  retiredAt: r.retired_at,
  withdrawnAt: r.withdrawn_at ?? null,
});

/** Keys that still verify: the active one and those retired after `retiredAfter`. Active first. */
export async function listUsable(db: Queryable, platformId: string, retiredAfter: Date): Promise<SigningKeyRow[]> {
  const rows = await db('signing_keys')
    .where({ platform_id: platformId })
    .andWhere((q) => q.where({ status: 'active' }).orWhere((r) => r.where('retired_at', '>', retiredAfter).whereNull('withdrawn_at')))
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

/** Every key of a platform, newest first (keyset on created_at, kid; milliseconds as the cursor carries them). */
export async function listPage(db: Queryable, platformId: string, opts: { before?: { at: string; id: string }; limit: number }): Promise<SigningKeyRow[]> {
  const q = db('signing_keys').where({ platform_id: platformId }).orderByRaw("date_trunc('milliseconds', created_at) DESC, kid DESC").limit(opts.limit);
  if (opts.before) q.whereRaw("(date_trunc('milliseconds', created_at), kid) < (?::timestamptz, ?)", [opts.before.at, opts.before.id]);
  return (await q).map(toKey);
}

export async function findByKid(db: Queryable, platformId: string, kid: string): Promise<SigningKeyRow | undefined> {
  const row = await db('signing_keys').where({ platform_id: platformId, kid }).first();
  return row ? toKey(row) : undefined;
}

/** Ends a rotated-out key's grace: it verifies nothing from `at`. Only a retired, not yet withdrawn key changes. */
export async function withdraw(db: Queryable, platformId: string, kid: string, at: Date): Promise<boolean> {
  const n = await db('signing_keys').where({ platform_id: platformId, kid, status: 'retired' }).whereNull('withdrawn_at').update({ withdrawn_at: at });
  return n > 0;
}

export async function findActive(db: Queryable, platformId: string): Promise<SigningKeyRow | undefined> {
  const row = await db('signing_keys').where({ platform_id: platformId, status: 'active' }).first();
  return row ? toKey(row) : undefined;
}
