import type { Queryable } from '../db';

/** An uploaded platform logo (apart from the platform row, which every request reads and caches). */
export interface PlatformLogo {
  contentType: string;
  bytes: Buffer;
  /** platforms.logo_version: the content hash in the logo's URL. */
  version: string;
}

export async function upsert(
  db: Queryable,
  platformId: string,
  logo: { contentType: string; bytes: Buffer; at: Date },
): Promise<void> {
  await db('platform_logos')
    .insert({ platform_id: platformId, content_type: logo.contentType, bytes: logo.bytes, updated_at: logo.at })
    .onConflict('platform_id')
    .merge(['content_type', 'bytes', 'updated_at']);
}

export async function remove(db: Queryable, platformId: string): Promise<void> {
  await db('platform_logos').where({ platform_id: platformId }).del();
}

/** The logo with the version the platform row names (both change in one transaction). */
export async function find(db: Queryable, platformId: string): Promise<PlatformLogo | undefined> {
  const row = await db('platform_logos')
    .join('platforms', 'platforms.id', 'platform_logos.platform_id')
    .where('platform_logos.platform_id', platformId)
    .whereNotNull('platforms.logo_version')
    .first('platform_logos.content_type', 'platform_logos.bytes', 'platforms.logo_version');
  return row && { contentType: row.content_type, bytes: Buffer.from(row.bytes), version: row.logo_version };
}
