import type { z } from 'zod';
import type { AdminActor } from '../../domain/admin';
import { isUuid } from '../../domain/ids';
import { parseClientMetadataDocuments, type RateLimitedEndpoint } from '../../domain/platform';
import { invalidRequest } from '../../errors';
import * as platforms from '../../repositories/platform.repository';
import * as mfa from '../../repositories/mfa.repository';
import * as logos from '../../repositories/platform-logo.repository';
import { checkLogo } from '../platform-logo';
import { clearable } from '../../wire/admin/branding.schemas';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { Platforms } from '../platforms.service';
import type { SigningKeys } from '../signing-keys.service';
import { assertGlobal, assertPlatformAccess, unknownPlatform } from './access';
import { decodeCursor, toPage } from './cursor';
import type { PlatformCreate, PlatformUpdate } from '../../wire/admin/platforms.schemas';

/** Platforms as operators manage them (API, CLI, console); every change audited in its transaction. */
export function createPlatformsAdmin(deps: Deps, base: Platforms, audit: Audit, signingKeys: SigningKeys) {
  /** The platform, if the actor may see it; else not_found (whether or not it exists). */
  async function get(actor: AdminActor, id: string) {
    const platform = isUuid(id) ? await platforms.findWithPolicy(deps.db, id) : undefined;
    if (!platform) throw unknownPlatform(id);
    assertPlatformAccess(actor, platform.id);
    return platform;
  }

  return {
    get,

    async list(actor: AdminActor, page: { limit: number; cursor?: string }) {
      const rows = await platforms.listPage(deps.db, {
        after: decodeCursor(page.cursor),
        limit: page.limit + 1,
        onlyId: actor.platformId ?? undefined,
      });
      return toPage(rows, page.limit, (p) => ({ at: p.createdAt, id: p.id }));
    },

    async create(actor: AdminActor, input: z.infer<typeof PlatformCreate>) {
      assertGlobal(actor, 'creating a platform');
      const { platform, kid } = await deps.db.transaction(async (trx) => {
        const created = await base.createPlatform(input.name, trx, input.signing_profile ?? 'seed');
        const details: Record<string, unknown> = {
          name: created.platform.name,
          kid: created.kid,
          signing_profile: created.platform.signingProfile,
        };
        if (Object.keys(created.asymmetricKids).length) details.keys_created = created.asymmetricKids; // kids only
        await audit.record(trx, actor, { kind: 'platform.created', platformId: created.platform.id, details });
        return created;
      });
      return { platform: (await platforms.findWithPolicy(deps.db, platform.id))!, kid };
    },

    async update(actor: AdminActor, id: string, input: z.infer<typeof PlatformUpdate>) {
      const before = await get(actor, id);
      const selfRegistration = checkSelfRegistration(before, input);
      await deps.db.transaction(async (trx) => {
        if (input.name !== undefined) await platforms.updateName(trx, id, input.name);
        await platforms.updateSelfRegistration(trx, id, selfRegistration);
        if (input.mfa !== undefined) await mfa.updateMfaPolicy(trx, id, input.mfa);
        await platforms.updateBranding(trx, id, brandingOf(input));
        const details: Record<string, unknown> = changes(before, input);
        if (input.signing_profile !== undefined) {
          await platforms.updateSigningProfile(trx, id, input.signing_profile);
          // Switching to standard gives the platform the asymmetric keys it lacks; back to seed keeps them (unpublished, unused).
          const created = input.signing_profile === 'standard' ? await signingKeys.ensureAsymmetricKeys(trx, id) : {};
          if (Object.keys(created).length) details.keys_created = created;
        }
        await audit.record(trx, actor, { kind: 'platform.updated', platformId: id, details });
      });
      base.forget(id);
      signingKeys.forget(id);
      return get(actor, id);
    },

    /**
     * Stores an uploaded logo (checked by checkLogo: type by content, size) and points the platform
     * at it: logo_version is its content hash, so its URL changes with it and caches never serve
     * an old one. `declaredType`: the type the sender named (API Content-Type), which must match.
     */
    async setLogo(actor: AdminActor, id: string, bytes: Buffer, declaredType?: string) {
      const before = await get(actor, id);
      const { contentType, version } = checkLogo(bytes, declaredType);
      await deps.db.transaction(async (trx) => {
        await logos.upsert(trx, id, { contentType, bytes, at: deps.now() });
        await platforms.updateBranding(trx, id, { logoVersion: version });
        await audit.record(trx, actor, {
          kind: 'platform.updated',
          platformId: id,
          details: {
            logo: { from: before.branding.logoVersion, to: version, content_type: contentType, bytes: bytes.length },
          },
        });
      });
      base.forget(id);
      return get(actor, id);
    },

    /** Removes the uploaded logo (the pages fall back to logo_url, else the initial); nothing uploaded: unchanged, not audited. */
    async removeLogo(actor: AdminActor, id: string) {
      const before = await get(actor, id);
      if (!before.branding.logoVersion) return before;
      await deps.db.transaction(async (trx) => {
        await logos.remove(trx, id);
        await platforms.updateBranding(trx, id, { logoVersion: null });
        await audit.record(trx, actor, {
          kind: 'platform.updated',
          platformId: id,
          details: { logo: { from: before.branding.logoVersion, to: null } },
        });
      });
      base.forget(id);
      return get(actor, id);
    },

    /** Sets (a number) or removes (null) the override of one endpoint's limit. */
    async setRateLimit(actor: AdminActor, id: string, endpoint: RateLimitedEndpoint, perMinute: number | null) {
      const before = await get(actor, id);
      await deps.db.transaction(async (trx) => {
        await base.setRateLimit(id, endpoint, perMinute, trx);
        await audit.record(trx, actor, {
          kind: 'rate_limit.changed',
          platformId: id,
          details: { endpoint, from: before.rateLimitOverrides[endpoint] ?? null, to: perMinute },
        });
      });
      base.forget(id);
      return get(actor, id);
    },
  };
}

/**
 * The registration policy and metadata-document hosts given, in stored form. Both belong to
 * standard platforms: a seed platform keeps the spec's interface (no registration endpoint, no
 * fetched client_id), so anything but off is refused there, also when switching back to seed.
 * Throws invalid_request naming the field.
 */
function checkSelfRegistration(before: platforms.PlatformWithPolicy, input: z.infer<typeof PlatformUpdate>) {
  const documents =
    input.client_metadata_documents === undefined
      ? undefined
      : parseClientMetadataDocuments(input.client_metadata_documents);
  if (documents && !documents.ok) throw invalidRequest(`client_metadata_documents: ${documents.reason}`);
  const after = {
    signingProfile: input.signing_profile ?? before.signingProfile,
    registration: input.registration ?? before.registration,
    clientMetadataDocuments: documents?.value ?? before.clientMetadataDocuments,
  };
  if (after.signingProfile === 'seed') {
    const field =
      after.registration !== 'off'
        ? 'registration'
        : after.clientMetadataDocuments !== 'off'
          ? 'client_metadata_documents'
          : undefined;
    if (field)
      throw invalidRequest(
        `${field}: applies to standard platforms only (a seed platform keeps the spec's interface); it must be off on a seed platform`,
      );
  }
  return { registration: input.registration, clientMetadataDocuments: documents?.value };
}

/** What an update changed, as `{field: {from, to}}` (names and policies are not secrets). */
function changes(before: platforms.PlatformWithPolicy, input: z.infer<typeof PlatformUpdate>) {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  if (input.registration !== undefined && input.registration !== before.registration)
    out.registration = { from: before.registration, to: input.registration };
  const documents =
    input.client_metadata_documents === undefined
      ? undefined
      : parseClientMetadataDocuments(input.client_metadata_documents);
  if (documents?.ok && documents.value !== before.clientMetadataDocuments)
    out.client_metadata_documents = { from: before.clientMetadataDocuments, to: documents.value };
  if (input.name !== undefined && input.name !== before.name) out.name = { from: before.name, to: input.name };
  if (input.mfa !== undefined && input.mfa !== before.mfaPolicy) out.mfa = { from: before.mfaPolicy, to: input.mfa };
  if (input.signing_profile !== undefined && input.signing_profile !== before.signingProfile)
    out.signing_profile = { from: before.signingProfile, to: input.signing_profile };
  const branding = brandingOf(input);
  const wire = { logoUrl: 'logo_url', accentColor: 'accent_color', supportEmail: 'support_email' } as const;
  for (const [field, name] of Object.entries(wire) as Array<[keyof typeof wire, string]>) {
    const to = branding[field];
    if (to !== undefined && to !== before.branding[field]) out[name] = { from: before.branding[field], to };
  }
  return out;
}

/** The branding fields given, in stored form: '' → null (cleared), the colour in lower case. */
function brandingOf(input: z.infer<typeof PlatformUpdate>) {
  const accent = clearable(input.accent_color);
  return {
    logoUrl: clearable(input.logo_url),
    accentColor: accent ? accent.toLowerCase() : accent,
    supportEmail: clearable(input.support_email),
  };
}

export type PlatformsAdmin = ReturnType<typeof createPlatformsAdmin>;
