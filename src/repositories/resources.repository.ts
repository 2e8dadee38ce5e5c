import type { Queryable } from '../db';
import type { Resource, ResourceScope } from '../domain/resource';
import type { SigningProfile } from '../domain/platform';

const toResource = (r: any): Resource => ({
  id: r.id,
  platformId: r.platform_id,
  uri: r.uri,
  name: r.name,
  scopes: (r.scopes ?? []) as ResourceScope[],
  defaultScopes: (r.default_scopes ?? []) as string[],
  accessTokenTtlSeconds: r.access_token_ttl_seconds ?? null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The columns of a resource that an operator sets. */
export type ResourceFields = Pick<Resource, 'uri' | 'name' | 'scopes' | 'defaultScopes' | 'accessTokenTtlSeconds'>;

const columnsOf = (f: ResourceFields) => ({
  uri: f.uri,
  name: f.name,
  scopes: JSON.stringify(f.scopes),
  default_scopes: JSON.stringify(f.defaultScopes),
  access_token_ttl_seconds: f.accessTokenTtlSeconds,
});

/** Inserts unless the URI is taken on the platform; undefined when it is. */
export async function insertUnlessUriTaken(
  db: Queryable,
  id: string,
  platformId: string,
  f: ResourceFields,
  now: Date,
): Promise<Resource | undefined> {
  const [row] = await db('resources')
    .insert({ id, platform_id: platformId, ...columnsOf(f), created_at: now, updated_at: now })
    .onConflict(['platform_id', 'uri'])
    .ignore()
    .returning('*');
  return row ? toResource(row) : undefined;
}

/** Replaces the settable fields; undefined when there is no such resource. Throws on a taken URI (unique index). */
export async function update(
  db: Queryable,
  platformId: string,
  id: string,
  f: ResourceFields,
  now: Date,
): Promise<Resource | undefined> {
  const [row] = await db('resources')
    .where({ platform_id: platformId, id })
    .update({ ...columnsOf(f), updated_at: now })
    .returning('*');
  return row ? toResource(row) : undefined;
}

export async function remove(db: Queryable, platformId: string, id: string): Promise<boolean> {
  return (await db('resources').where({ platform_id: platformId, id }).del()) > 0;
}

export async function findById(db: Queryable, platformId: string, id: string): Promise<Resource | undefined> {
  const row = await db('resources').where({ platform_id: platformId, id }).first();
  return row ? toResource(row) : undefined;
}

export async function findByUri(db: Queryable, platformId: string, uri: string): Promise<Resource | undefined> {
  const row = await db('resources').where({ platform_id: platformId, uri }).first();
  return row ? toResource(row) : undefined;
}

export async function countByPlatform(db: Queryable, platformId: string): Promise<number> {
  const [{ n }] = await db('resources').where({ platform_id: platformId }).count({ n: '*' });
  return Number(n);
}

/** The platform's resources in the order they were added. */
export async function listByPlatform(db: Queryable, platformId: string): Promise<Resource[]> {
  return (
    await db('resources')
      .where({ platform_id: platformId })
      .orderBy([{ column: 'created_at' }, { column: 'uri' }])
  ).map(toResource);
}

/**
 * The platform's signing profile, its row locked for the transaction: resource changes of one
 * platform queue behind each other, so the per-platform limit holds under concurrent creations.
 * undefined when there is no such platform.
 */
export async function lockPlatform(
  db: Queryable,
  platformId: string,
): Promise<{ signingProfile: SigningProfile } | undefined> {
  const row = await db('platforms').where({ id: platformId }).forUpdate().first('signing_profile');
  return row ? { signingProfile: row.signing_profile as SigningProfile } : undefined;
}
