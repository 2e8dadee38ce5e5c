import { z } from 'zod';
import { MAPPABLE_CLAIMS, UPSTREAM_KINDS, UPSTREAM_SLUG } from '../../domain/upstream';
import { isUuid } from '../../domain/ids';
import { PlatformParams, Timestamp, Uuid } from './common.schemas';
import { UserParams } from './users.schemas';

/*
 * Upstream identity providers as operators see them. The zod schemas check shapes
 * only; the content rules and their messages (URLs, slug, scopes, claim names, what a kind needs)
 * are the providers service's (src/services/federation/providers.service.ts), so every door refuses
 * a field with the same words.
 */

const Text = (max: number) => z.string().max(max, `must be at most ${max} characters`);
const Kind = z.enum(UPSTREAM_KINDS, { error: `must be one of ${UPSTREAM_KINDS.join(', ')}` });
const Url = Text(2000);

/** An unknown field is named (e.g. kind on an update), not just "unrecognized". */
const unknownFields = (what: string) => ({
  error: (issue: { code?: string; keys?: string[] }) =>
    issue.code === 'unrecognized_keys'
      ? `unknown ${issue.keys!.length > 1 ? 'fields' : 'field'} ${issue.keys!.map((k) => `"${k}"`).join(', ')}${what}`
      : undefined,
});

const fields = {
  slug: Text(40).meta({
    description:
      'In the sign-in URLs: lowercase letters, digits and dashes, 1–40; unique on the platform (409 if taken). Default: the kind (presets) or the name',
    example: 'google',
  }),
  display_name: Text(60).meta({
    description:
      'The button says "Continue with {display_name}". Default: the preset\'s name (Google, Microsoft, GitHub)',
    example: 'Google',
  }),
  issuer: Url.meta({
    description:
      'oidc: required, the issuer its discovery document is read from ({issuer}/.well-known/openid-configuration). google/microsoft: overrides the preset; github: the web base URL (GitHub Enterprise Server). https (http only to a loopback host), no query',
    example: 'https://idp.example.com',
  }),
  tenant: Text(100).meta({
    description:
      'microsoft only, input only: a tenant id or domain (or common, organizations, consumers) that sets the issuer to https://login.microsoftonline.com/{tenant}/v2.0',
  }),
  api_base_url: Url.meta({
    description:
      'github only: the REST API base URL (default https://api.github.com; GitHub Enterprise Server: https://HOST/api/v3)',
  }),
  client_id: Text(200).meta({ description: 'The client id Latchkey has at the upstream' }),
  client_secret: Text(500).nullable().meta({
    description:
      'Input only, never returned: sealed under MASTER_KEY. Required for github; null or absent: a public client at the upstream (PKCE only)',
  }),
  scopes: z
    .array(Text(200))
    .max(50, 'at most 50 scopes')
    .meta({
      description:
        "Asked of the upstream; must include openid except for github. Default: the preset's (openid email profile; github: read:user user:email)",
      example: ['openid', 'email', 'profile'],
    }),
  claim_mapping: z.record(z.string(), Text(100)).meta({
    description: `Local claim → the upstream's claim name, for upstreams that name them otherwise. Local claims: ${MAPPABLE_CLAIMS.join(', ')}`,
    example: { email: 'mail', given_name: 'first_name' },
  }),
  trust_email: z.boolean().meta({
    description:
      "A new user's email counts as verified when the upstream says it verified it (default: the preset's; google and github true, others false)",
  }),
  trust_mfa: z.boolean().meta({
    description:
      "The upstream's amr may satisfy the platform's MFA policy (default false: the local second factor is asked)",
  }),
  store_tokens: z
    .boolean()
    .meta({ description: "Keep the upstream's tokens, sealed, on the linked identity (default false: nothing kept)" }),
  enabled: z
    .boolean()
    .meta({ description: 'Shown as "Continue with …" on the sign-in and sign-up pages (default true)' }),
};

export const UpstreamProviderCreate = z
  .object(
    {
      kind: Kind.meta({
        description:
          'oidc (any OpenID Connect provider, by discovery), google, microsoft (OIDC presets) or github (OAuth 2.0 and its REST API)',
      }),
      slug: fields.slug.optional(),
      display_name: fields.display_name.optional(),
      issuer: fields.issuer.optional(),
      tenant: fields.tenant.optional(),
      api_base_url: fields.api_base_url.optional(),
      client_id: fields.client_id,
      client_secret: fields.client_secret.optional(),
      scopes: fields.scopes.optional(),
      claim_mapping: fields.claim_mapping.optional(),
      trust_email: fields.trust_email.optional(),
      trust_mfa: fields.trust_mfa.optional(),
      store_tokens: fields.store_tokens.optional(),
      enabled: fields.enabled.optional(),
    },
    unknownFields(''),
  )
  .strict()
  .meta({ id: 'UpstreamProviderCreate' });

export const UpstreamProviderUpdate = z
  .object(
    {
      slug: fields.slug.optional(),
      display_name: fields.display_name.optional(),
      issuer: fields.issuer.optional(),
      tenant: fields.tenant.optional(),
      api_base_url: fields.api_base_url.optional(),
      client_id: fields.client_id.optional(),
      client_secret: fields.client_secret
        .optional()
        .meta({ description: 'A new secret (input only); null removes it; absent keeps it' }),
      scopes: fields.scopes.optional().meta({ description: 'Replaces the list' }),
      claim_mapping: fields.claim_mapping.optional().meta({ description: 'Replaces the mapping ({} clears it)' }),
      trust_email: fields.trust_email.optional(),
      trust_mfa: fields.trust_mfa.optional(),
      store_tokens: fields.store_tokens.optional(),
      enabled: fields.enabled.optional(),
    },
    unknownFields(" (a provider's kind never changes: add another provider instead)"),
  )
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change')
  .meta({
    id: 'UpstreamProviderUpdate',
    description: 'Any field but the kind; the provider as changed is checked by the rules of creation',
  });

export const UpstreamProvider = z
  .object({
    id: Uuid,
    platform_guid: Uuid,
    kind: Kind,
    slug: z.string(),
    display_name: z.string(),
    issuer: z.string(),
    api_base_url: z.string().nullable().meta({ description: 'github: the REST API base URL; null for the others' }),
    client_id: z.string(),
    has_client_secret: z.boolean().meta({ description: 'A client secret is stored (sealed; never returned)' }),
    scopes: z.array(z.string()),
    claim_mapping: z.record(z.string(), z.string()),
    trust_email: z.boolean(),
    trust_mfa: z.boolean(),
    store_tokens: z.boolean(),
    enabled: z.boolean(),
    callback_url: z.string().meta({
      description:
        'The redirect URI to register at the upstream: {BASE_URL}/platforms/{platform_guid}/upstream/callback (the same for every provider of the platform)',
      example: 'https://id.example.com/platforms/0b6e…/upstream/callback',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({
    id: 'UpstreamProvider',
    description: 'An upstream identity provider of a platform; never its client secret',
  });

export const UpstreamProviders = z
  .object({ items: z.array(UpstreamProvider) })
  .meta({ id: 'UpstreamProviders', description: 'In the order they were added (the order of the buttons)' });

/** A provider by its id or its slug (both unique on the platform). */
const ProviderRef = z
  .string()
  .max(40, 'must be a provider id or slug')
  .refine((v) => isUuid(v) || UPSTREAM_SLUG.test(v), 'must be a provider id or slug')
  .meta({ description: "The provider's id, or its slug" });

export const UpstreamProviderParams = PlatformParams.extend({ provider_id: ProviderRef });

export const UserIdentityParams = UserParams.extend({
  identity_id: Uuid.meta({ description: "A linked identity's id" }),
});

export const UserIdentity = z
  .object({
    id: Uuid,
    provider_id: Uuid,
    provider_slug: z.string(),
    provider_name: z.string().meta({ description: "The provider's display name" }),
    provider_kind: Kind,
    subject: z.string().meta({ description: "The upstream's stable subject (OIDC sub; GitHub's numeric user id)" }),
    email: z.string().nullable().meta({ description: 'The email the upstream gave at the last sign-in through it' }),
    created_at: Timestamp.meta({ description: 'When it was linked' }),
    last_used_at: Timestamp.meta({ description: 'The last sign-in through it' }),
  })
  .meta({ id: 'UserIdentity', description: 'An upstream account linked to the user: they sign in through it' });

export const UserIdentities = z
  .object({ items: z.array(UserIdentity) })
  .meta({ id: 'UserIdentities', description: 'Oldest link first' });
