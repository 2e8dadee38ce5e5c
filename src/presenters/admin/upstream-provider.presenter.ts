import type { z } from 'zod';
import type {
  UpstreamProvider as ProviderShape,
  UserIdentity as IdentityShape,
} from '../../wire/admin/upstream-providers.schemas';
import type { IdentityWithProvider } from '../../services/admin/user-identities.admin';
import type { UpstreamProvider } from '../../domain/upstream';

/**
 * An upstream provider as the admin surfaces show it: never its client secret (only whether one is
 * set), and the callback URL the operator registers at the upstream.
 */
export function presentUpstreamProvider(p: UpstreamProvider, callbackUrl: string): z.infer<typeof ProviderShape> {
  return {
    id: p.id,
    platform_guid: p.platformId,
    kind: p.kind,
    slug: p.slug,
    display_name: p.displayName,
    issuer: p.issuer,
    api_base_url: p.apiBaseUrl,
    client_id: p.clientId,
    has_client_secret: p.hasClientSecret,
    scopes: p.scopes,
    claim_mapping: { ...p.claimMapping } as Record<string, string>,
    trust_email: p.trustEmail,
    trust_mfa: p.trustMfa,
    store_tokens: p.storeTokens,
    enabled: p.enabled,
    callback_url: callbackUrl,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

/** A user's linked identity with the provider's slug and name (never the upstream's tokens). */
export function presentUserIdentity({ identity: i, provider: p }: IdentityWithProvider): z.infer<typeof IdentityShape> {
  return {
    id: i.id,
    provider_id: p.id,
    provider_slug: p.slug,
    provider_name: p.displayName,
    provider_kind: p.kind,
    subject: i.subject,
    email: i.email,
    created_at: i.createdAt.toISOString(),
    last_used_at: i.lastUsedAt.toISOString(),
  };
}
