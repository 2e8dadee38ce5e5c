import type { Queryable } from '../db';
import type { ClaimMapping, UpstreamKind, UpstreamProvider } from '../domain/upstream';

/** The stored provider: the domain's shape and the sealed client secret, which stays below the services. */
export interface UpstreamProviderRow extends UpstreamProvider {
  sealedClientSecret: string | null;
}

const toProvider = (r: any): UpstreamProviderRow => ({
  id: r.id,
  platformId: r.platform_id,
  slug: r.slug,
  kind: r.kind as UpstreamKind,
  displayName: r.display_name,
  issuer: r.issuer,
  apiBaseUrl: r.api_base_url ?? null,
  clientId: r.client_id,
  hasClientSecret: r.sealed_client_secret != null,
  sealedClientSecret: r.sealed_client_secret ?? null,
  scopes: String(r.scopes).split(' ').filter(Boolean),
  claimMapping: (r.claim_mapping ?? {}) as ClaimMapping,
  trustEmail: r.trust_email,
  trustMfa: r.trust_mfa,
  storeTokens: r.store_tokens,
  enabled: r.enabled,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The columns of a provider that an operator sets. */
export type UpstreamProviderFields = Omit<
  UpstreamProviderRow,
  'id' | 'platformId' | 'hasClientSecret' | 'createdAt' | 'updatedAt'
>;

const columnsOf = (f: Partial<UpstreamProviderFields>) => {
  const c: Record<string, unknown> = {};
  if (f.slug !== undefined) c.slug = f.slug;
  if (f.kind !== undefined) c.kind = f.kind;
  if (f.displayName !== undefined) c.display_name = f.displayName;
  if (f.issuer !== undefined) c.issuer = f.issuer;
  if (f.apiBaseUrl !== undefined) c.api_base_url = f.apiBaseUrl;
  if (f.clientId !== undefined) c.client_id = f.clientId;
  if (f.sealedClientSecret !== undefined) c.sealed_client_secret = f.sealedClientSecret;
  if (f.scopes !== undefined) c.scopes = f.scopes.join(' ');
  if (f.claimMapping !== undefined) c.claim_mapping = JSON.stringify(f.claimMapping);
  if (f.trustEmail !== undefined) c.trust_email = f.trustEmail;
  if (f.trustMfa !== undefined) c.trust_mfa = f.trustMfa;
  if (f.storeTokens !== undefined) c.store_tokens = f.storeTokens;
  if (f.enabled !== undefined) c.enabled = f.enabled;
  return c;
};

/** Inserts unless the slug is taken on the platform; undefined when it is. */
export async function insertUnlessSlugTaken(
  db: Queryable,
  id: string,
  platformId: string,
  f: UpstreamProviderFields,
  now: Date,
): Promise<UpstreamProviderRow | undefined> {
  const [row] = await db('upstream_providers')
    .insert({ id, platform_id: platformId, ...columnsOf(f), created_at: now, updated_at: now })
    .onConflict(['platform_id', 'slug'])
    .ignore()
    .returning('*');
  return row ? toProvider(row) : undefined;
}

/** Updates the given fields; undefined when there is no such provider. Throws on a taken slug (unique index). */
export async function update(
  db: Queryable,
  platformId: string,
  id: string,
  f: Partial<UpstreamProviderFields>,
  now: Date,
): Promise<UpstreamProviderRow | undefined> {
  const [row] = await db('upstream_providers')
    .where({ platform_id: platformId, id })
    .update({ ...columnsOf(f), updated_at: now })
    .returning('*');
  return row ? toProvider(row) : undefined;
}

export async function remove(db: Queryable, platformId: string, id: string): Promise<boolean> {
  return (await db('upstream_providers').where({ platform_id: platformId, id }).del()) > 0;
}

export async function findById(
  db: Queryable,
  platformId: string,
  id: string,
): Promise<UpstreamProviderRow | undefined> {
  const row = await db('upstream_providers').where({ platform_id: platformId, id }).first();
  return row ? toProvider(row) : undefined;
}

export async function findBySlug(
  db: Queryable,
  platformId: string,
  slug: string,
): Promise<UpstreamProviderRow | undefined> {
  const row = await db('upstream_providers').where({ platform_id: platformId, slug }).first();
  return row ? toProvider(row) : undefined;
}

/** The platform's providers in the order they were added (the order of the buttons). */
export async function listByPlatform(
  db: Queryable,
  platformId: string,
  opts: { enabledOnly?: boolean } = {},
): Promise<UpstreamProviderRow[]> {
  const q = db('upstream_providers').where({ platform_id: platformId });
  if (opts.enabledOnly) q.andWhere({ enabled: true });
  return (await q.orderBy([{ column: 'created_at' }, { column: 'id' }])).map(toProvider);
}
