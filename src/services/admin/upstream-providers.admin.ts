import type { z } from 'zod';
import type { AdminActor } from '../../domain/admin';
import type { UpstreamKind, UpstreamProvider } from '../../domain/upstream';
import { invalidRequest } from '../../errors';
import * as identities from '../../repositories/user-identity.repository';
import type { Deps } from '../deps';
import type { Audit } from '../audit.service';
import type { UpstreamProviderInput, UpstreamProviderPatch, UpstreamProviders } from '../federation/providers.service';
import type { PlatformsAdmin } from './platforms.admin';
import type { UpstreamProviderCreate, UpstreamProviderUpdate } from '../../wire/admin/upstream-providers.schemas';

type CreateBody = z.infer<typeof UpstreamProviderCreate>;
type UpdateBody = z.infer<typeof UpstreamProviderUpdate>;

/** Fields that belong to one kind only: refused on the others rather than silently dropped. */
function checkKindFields(kind: UpstreamKind, body: { tenant?: string; api_base_url?: string }) {
  if (body.tenant !== undefined && kind !== 'microsoft')
    throw invalidRequest('tenant: only for a Microsoft provider (kind microsoft); give issuer instead');
  if (body.api_base_url !== undefined && kind !== 'github')
    throw invalidRequest('api_base_url: only for a GitHub provider (kind github)');
}

/** The wire's snake_case fields as the providers service's input (undefined: not given). */
function toPatch(body: UpdateBody): UpstreamProviderPatch {
  return {
    slug: body.slug,
    displayName: body.display_name,
    issuer: body.issuer,
    tenant: body.tenant,
    apiBaseUrl: body.api_base_url,
    clientId: body.client_id,
    clientSecret: body.client_secret,
    scopes: body.scopes,
    claimMapping: body.claim_mapping,
    trustEmail: body.trust_email,
    trustMfa: body.trust_mfa,
    storeTokens: body.store_tokens,
    enabled: body.enabled,
  };
}

const toInput = (body: CreateBody): UpstreamProviderInput => ({
  ...toPatch(body),
  kind: body.kind,
  clientId: body.client_id,
});

/** What an operator set, in wire names, for the audit log: everything but the secret (only whether there is one). */
function settings(p: UpstreamProvider) {
  return {
    slug: p.slug,
    kind: p.kind,
    display_name: p.displayName,
    issuer: p.issuer,
    api_base_url: p.apiBaseUrl,
    client_id: p.clientId,
    has_client_secret: p.hasClientSecret,
    scopes: p.scopes,
    claim_mapping: p.claimMapping,
    trust_email: p.trustEmail,
    trust_mfa: p.trustMfa,
    store_tokens: p.storeTokens,
    enabled: p.enabled,
  };
}

/** What an update changed, as `{field: {from, to}}` (never the secret itself). */
function changes(before: UpstreamProvider, after: UpstreamProvider) {
  const [from, to] = [settings(before), settings(after)];
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of Object.keys(to) as Array<keyof typeof to>) {
    if (JSON.stringify(from[field]) !== JSON.stringify(to[field])) out[field] = { from: from[field], to: to[field] };
  }
  return out;
}

/**
 * A platform's upstream identity providers as operators manage them (admin API, CLI, console), over
 * the providers service (its validation, the sealed secret). Scope first (another platform is
 * unknown), each change audited in its transaction; the client secret goes in and never comes out.
 */
export function createUpstreamProvidersAdmin(
  deps: Deps,
  providers: UpstreamProviders,
  platformsAdmin: PlatformsAdmin,
  audit: Audit,
) {
  /** By id or slug. */
  async function get(actor: AdminActor, platformId: string, idOrSlug: string): Promise<UpstreamProvider> {
    await platformsAdmin.get(actor, platformId);
    return providers.get(platformId, idOrSlug);
  }

  return {
    get,

    /** In the order they were added (the order of the buttons); a platform has a handful. */
    async list(actor: AdminActor, platformId: string): Promise<UpstreamProvider[]> {
      await platformsAdmin.get(actor, platformId);
      return providers.list(platformId);
    },

    async create(actor: AdminActor, platformId: string, body: CreateBody): Promise<UpstreamProvider> {
      await platformsAdmin.get(actor, platformId);
      checkKindFields(body.kind, body);
      return deps.db.transaction(async (trx) => {
        const created = await providers.create(platformId, toInput(body), trx);
        await audit.record(trx, actor, {
          kind: 'upstream_provider.created',
          platformId,
          details: { provider_id: created.id, ...settings(created), client_secret_set: created.hasClientSecret },
        });
        return created;
      });
    },

    /** Any field but the kind; the provider as changed passes the rules of creation. `client_secret: null` removes it. */
    async update(actor: AdminActor, platformId: string, idOrSlug: string, body: UpdateBody): Promise<UpstreamProvider> {
      await platformsAdmin.get(actor, platformId);
      return deps.db.transaction(async (trx) => {
        const before = await providers.get(platformId, idOrSlug, trx);
        checkKindFields(before.kind, body);
        const after = await providers.update(platformId, before.id, toPatch(body), trx);
        const details: Record<string, unknown> = {
          provider_id: before.id,
          provider: after.slug,
          ...changes(before, after),
        };
        // A new secret leaves no trace in the settings when one was already set: say that it changed.
        if (body.client_secret !== undefined) details.client_secret_set = body.client_secret !== null;
        await audit.record(trx, actor, { kind: 'upstream_provider.updated', platformId, details });
        return after;
      });
    },

    /**
     * Removes the provider and, with it (foreign key), every identity linked through it: those users
     * sign in with their password or passkey, or through another provider, or reset their password.
     */
    async remove(
      actor: AdminActor,
      platformId: string,
      idOrSlug: string,
    ): Promise<{ provider: UpstreamProvider; identitiesUnlinked: number }> {
      await platformsAdmin.get(actor, platformId);
      return deps.db.transaction(async (trx) => {
        const current = await providers.get(platformId, idOrSlug, trx);
        const linked = await identities.countByProvider(trx, platformId, current.id);
        const provider = await providers.remove(platformId, current.id, trx);
        await audit.record(trx, actor, {
          kind: 'upstream_provider.deleted',
          platformId,
          details: {
            provider_id: provider.id,
            slug: provider.slug,
            kind: provider.kind,
            display_name: provider.displayName,
            identities_unlinked: linked,
          },
        });
        return { provider, identitiesUnlinked: linked };
      });
    },

    /** How many users are linked through the provider (the console says so before removing it). */
    async linkedCount(actor: AdminActor, platformId: string, idOrSlug: string): Promise<number> {
      const provider = await get(actor, platformId, idOrSlug);
      return identities.countByProvider(deps.db, platformId, provider.id);
    },
  };
}

export type UpstreamProvidersAdmin = ReturnType<typeof createUpstreamProvidersAdmin>;
