import type { Queryable } from '../db';

import type { Platform, RegistrationPolicy, SigningProfile } from '../domain/platform';

export type { Platform };

const toPlatform = (r: any): Platform => ({
  id: r.id,
  name: r.name,
  rateLimitOverrides: r.rate_limit_overrides ?? {},
  signingProfile: r.signing_profile ?? 'seed',
  branding: {
    logoUrl: r.logo_url ?? null,
    logoVersion: r.logo_version ?? null,
    accentColor: r.accent_color ?? null,
    supportEmail: r.support_email ?? null,
  },
  registration: r.registration ?? 'off',
  clientMetadataDocuments: r.client_metadata_documents ?? 'off',
  createdAt: r.created_at,
});

/** A platform with its two-step policy, for the admin surfaces. */
export type PlatformWithPolicy = Platform & { mfaPolicy: string };
const toPlatformWithPolicy = (r: any): PlatformWithPolicy => ({ ...toPlatform(r), mfaPolicy: r.mfa_policy });

export async function insert(
  db: Queryable,
  p: { id: string; name: string; signingProfile?: SigningProfile },
): Promise<Platform> {
  const [row] = await db('platforms')
    .insert({ id: p.id, name: p.name, signing_profile: p.signingProfile ?? 'seed' })
    .returning('*');
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

export async function updateRateLimitOverrides(
  db: Queryable,
  id: string,
  overrides: Record<string, number>,
): Promise<void> {
  await db('platforms')
    .where({ id })
    .update({ rate_limit_overrides: JSON.stringify(overrides) });
}

/** Oldest first (keyset on created_at, id); `onlyId` for a platform-scoped caller. */
export async function listPage(
  db: Queryable,
  opts: { after?: { at: string; id: string }; limit: number; onlyId?: string },
): Promise<PlatformWithPolicy[]> {
  // Milliseconds, as the cursor carries them: Postgres keeps microseconds, and a cursor cut to
  // milliseconds would repeat a row created in the same millisecond after it.
  const q = db('platforms').orderByRaw("date_trunc('milliseconds', created_at), id").limit(opts.limit);
  if (opts.onlyId) q.where({ id: opts.onlyId });
  if (opts.after)
    q.whereRaw("(date_trunc('milliseconds', created_at), id) > (?::timestamptz, ?)", [opts.after.at, opts.after.id]);
  return (await q).map(toPlatformWithPolicy);
}

export async function findWithPolicy(db: Queryable, id: string): Promise<PlatformWithPolicy | undefined> {
  const row = await db('platforms').where({ id }).first();
  return row && toPlatformWithPolicy(row);
}

export async function updateName(db: Queryable, id: string, name: string): Promise<void> {
  await db('platforms').where({ id }).update({ name });
}

export async function updateSigningProfile(db: Queryable, id: string, profile: SigningProfile): Promise<void> {
  await db('platforms').where({ id }).update({ signing_profile: profile });
}

/** The branding fields given (undefined: unchanged; null: cleared). */
export async function updateBranding(db: Queryable, id: string, b: Partial<Platform['branding']>): Promise<void> {
  const columns: Record<string, string | null> = {};
  if (b.logoUrl !== undefined) columns.logo_url = b.logoUrl;
  if (b.logoVersion !== undefined) columns.logo_version = b.logoVersion;
  if (b.accentColor !== undefined) columns.accent_color = b.accentColor;
  if (b.supportEmail !== undefined) columns.support_email = b.supportEmail;
  if (Object.keys(columns).length) await db('platforms').where({ id }).update(columns);
}

/** Who may register clients (RFC 7591) and which client ID metadata documents are fetched. */
export async function updateSelfRegistration(
  db: Queryable,
  id: string,
  policy: { registration?: RegistrationPolicy; clientMetadataDocuments?: string },
): Promise<void> {
  const columns: Record<string, string> = {};
  if (policy.registration !== undefined) columns.registration = policy.registration;
  if (policy.clientMetadataDocuments !== undefined) columns.client_metadata_documents = policy.clientMetadataDocuments;
  if (Object.keys(columns).length) await db('platforms').where({ id }).update(columns);
}
