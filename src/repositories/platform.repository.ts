import type { Queryable } from '../db';

import type { Platform } from '../domain/platform';

export type { Platform };

const toPlatform = (r: any): Platform => ({ id: r.id, name: r.name, rateLimitOverrides: r.rate_limit_overrides ?? {}, createdAt: r.created_at });

export async function insert(db: Queryable, p: { id: string; name: string }): Promise<Platform> {
  const [row] = await db('platforms').insert({ id: p.id, name: p.name }).returning('*');
  return toPlatform(row);
}

export async function findById(db: Queryable, id: string): Promise<Platform | undefined> {
  const row = await db('platforms').where({ id }).first();
  return row && toPlatform(row);
}

export async function count(db: Queryable): Promise<number> {
  const row = await db('platforms').count<{ count: number }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

export async function updateRateLimitOverrides(db: Queryable, id: string, overrides: Record<string, number>): Promise<void> {
  await db('platforms').where({ id }).update({ rate_limit_overrides: JSON.stringify(overrides) });
}
