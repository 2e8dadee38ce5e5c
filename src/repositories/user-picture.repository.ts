import type { Queryable } from '../db';

export interface UserPicture {
  userId: string;
  platformId: string;
  contentType: string;
  bytes: Buffer;
  version: string;
  updatedAt: Date;
}

export async function upsert(db: Queryable, p: Omit<UserPicture, 'updatedAt'>, at: Date): Promise<void> {
  await db('user_pictures')
    .insert({
      user_id: p.userId,
      platform_id: p.platformId,
      content_type: p.contentType,
      bytes: p.bytes,
      version: p.version,
      updated_at: at,
    })
    .onConflict('user_id')
    .merge(['content_type', 'bytes', 'version', 'updated_at']);
}

export async function find(db: Queryable, platformId: string, userId: string): Promise<UserPicture | undefined> {
  const r = await db('user_pictures').where({ platform_id: platformId, user_id: userId }).first();
  return (
    r && {
      userId: r.user_id,
      platformId: r.platform_id,
      contentType: r.content_type,
      bytes: r.bytes,
      version: r.version,
      updatedAt: r.updated_at,
    }
  );
}

export async function remove(db: Queryable, platformId: string, userId: string): Promise<void> {
  await db('user_pictures').where({ platform_id: platformId, user_id: userId }).delete();
}
