import type { Queryable } from '../../db';
import { newId } from '../../crypto/random';
import { isUuid } from '../../domain/ids';
import { invalidRequest, OAuthError } from '../../errors';
import {
  MAPPABLE_CLAIMS,
  microsoftIssuer,
  upstreamCallbackUrl,
  UPSTREAM_KINDS,
  UPSTREAM_PRESETS,
  UPSTREAM_SLUG,
  type ClaimMapping,
  type UpstreamKind,
  type UpstreamProvider,
} from '../../domain/upstream';
import * as providers from '../../repositories/upstream-provider.repository';
import type { UpstreamProviderFields, UpstreamProviderRow } from '../../repositories/upstream-provider.repository';
import type { Deps } from '../deps';

/** What an operator gives to add a provider (admin API, CLI, console); a preset fills the rest. */
export interface UpstreamProviderInput {
  kind: UpstreamKind;
  slug?: string;
  displayName?: string;
  /** oidc: required. google/github: overrides the preset (a stand-in, GitHub Enterprise Server). */
  issuer?: string;
  /** microsoft: a tenant id or domain (or common/organizations/consumers) when no issuer is given. */
  tenant?: string;
  /** github: the REST API base URL (GitHub Enterprise Server: https://HOST/api/v3). */
  apiBaseUrl?: string;
  clientId: string;
  /** null or absent: a public upstream client (PKCE only). Required for github. */
  clientSecret?: string | null;
  scopes?: string[];
  claimMapping?: ClaimMapping;
  trustEmail?: boolean;
  trustMfa?: boolean;
  storeTokens?: boolean;
  enabled?: boolean;
}

/** A change to a provider: any field but its kind. `clientSecret: null` removes the secret. */
export type UpstreamProviderPatch = Partial<Omit<UpstreamProviderInput, 'kind'>>;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** https, or http to a loopback host (development and tests); no query or fragment; no trailing slash kept. */
function checkProviderUrl(field: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidRequest(`${field}: must be an absolute URL`);
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  if (!secure) throw invalidRequest(`${field}: must use https (http only for a loopback host)`);
  if (url.search || url.hash || url.username || url.password)
    throw invalidRequest(`${field}: must have no query, fragment or credentials`);
  return value.replace(/\/+$/, '');
}

const text = (field: string, value: string, max: number) => {
  const v = value.trim();
  if (!v) throw invalidRequest(`${field}: must not be empty`);
  if (v.length > max) throw invalidRequest(`${field}: at most ${max} characters`);
  return v;
};

function checkScopes(kind: UpstreamKind, scopes: string[]): string[] {
  const list = [...new Set(scopes.map((s) => s.trim()).filter(Boolean))];
  if (list.length === 0) throw invalidRequest('scopes: at least one scope');
  if (list.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/.test(s)))
    throw invalidRequest('scopes: a scope has characters RFC 6749 §3.3 does not allow');
  if (kind !== 'github' && !list.includes('openid')) throw invalidRequest('scopes: must include openid');
  return list;
}

function checkClaimMapping(mapping: ClaimMapping): ClaimMapping {
  const out: ClaimMapping = {};
  for (const [claim, upstream] of Object.entries(mapping)) {
    if (!(MAPPABLE_CLAIMS as readonly string[]).includes(claim))
      throw invalidRequest(`claim_mapping: unknown claim "${claim}" (mappable: ${MAPPABLE_CLAIMS.join(', ')})`);
    if (typeof upstream !== 'string' || !/^[\w.:-]{1,100}$/.test(upstream))
      throw invalidRequest(`claim_mapping.${claim}: must be a claim name`);
    out[claim as keyof ClaimMapping] = upstream;
  }
  return out;
}

const slugTaken = (slug: string) =>
  new OAuthError('invalid_request', `slug: a provider "${slug}" already exists on this platform`, { status: 409 });
const unknownProvider = (id: string) => new OAuthError('not_found', `unknown upstream provider "${id}"`);

/**
 * A platform's upstream identity providers: validated once here for every door (admin
 * API, CLI, console); the client secret is sealed under MASTER_KEY and never leaves again.
 */
export function createUpstreamProviders(deps: Deps) {
  const seal = (secret: string | null | undefined) =>
    secret ? deps.sealer.seal(text('client_secret', secret, 500)) : null;

  function fieldsOf(input: UpstreamProviderInput): UpstreamProviderFields {
    if (!(UPSTREAM_KINDS as readonly string[]).includes(input.kind))
      throw invalidRequest(`kind: must be one of ${UPSTREAM_KINDS.join(', ')}`);
    const preset = input.kind === 'oidc' ? undefined : UPSTREAM_PRESETS[input.kind];
    const displayName = text('display_name', input.displayName ?? preset?.displayName ?? '', 60);
    const issuerGiven =
      input.issuer ??
      (input.kind === 'microsoft' && input.tenant
        ? microsoftIssuer(text('tenant', input.tenant, 100))
        : preset?.issuer);
    if (!issuerGiven) throw invalidRequest('issuer: required for an OpenID Connect provider');
    const slug = (
      input.slug ??
      (preset
        ? input.kind
        : displayName
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '-')
            .replace(/^-|-$/g, ''))
    ).trim();
    if (!UPSTREAM_SLUG.test(slug))
      throw invalidRequest('slug: lowercase letters, digits and dashes, 1–40, not starting or ending with a dash');
    if (input.kind === 'github' && !input.clientSecret) throw invalidRequest('client_secret: required for GitHub');
    return {
      slug,
      kind: input.kind,
      displayName,
      issuer: checkProviderUrl('issuer', issuerGiven),
      apiBaseUrl:
        input.kind === 'github' ? checkProviderUrl('api_base_url', input.apiBaseUrl ?? preset!.apiBaseUrl!) : null,
      clientId: text('client_id', input.clientId ?? '', 200),
      sealedClientSecret: seal(input.clientSecret),
      scopes: checkScopes(input.kind, input.scopes ?? preset?.scopes ?? ['openid', 'email', 'profile']),
      claimMapping: checkClaimMapping(input.claimMapping ?? {}),
      trustEmail: input.trustEmail ?? preset?.trustEmail ?? false,
      trustMfa: input.trustMfa ?? false,
      storeTokens: input.storeTokens ?? false,
      enabled: input.enabled ?? true,
    };
  }

  async function find(
    platformId: string,
    idOrSlug: string,
    q: Queryable = deps.db,
  ): Promise<UpstreamProviderRow | undefined> {
    return isUuid(idOrSlug)
      ? providers.findById(q, platformId, idOrSlug)
      : providers.findBySlug(q, platformId, idOrSlug);
  }

  /** Without the sealed secret: what the services above and the admin surfaces see. */
  const publicView = ({ sealedClientSecret: _s, ...p }: UpstreamProviderRow): UpstreamProvider => p;

  return {
    publicView,

    /** The platform's one callback URL, which the operator registers at every upstream. */
    callbackUrl(platformId: string): string {
      return upstreamCallbackUrl(deps.config.baseUrl, platformId);
    },

    async create(platformId: string, input: UpstreamProviderInput, q: Queryable = deps.db): Promise<UpstreamProvider> {
      const fields = fieldsOf(input);
      const row = await providers.insertUnlessSlugTaken(q, newId(), platformId, fields, deps.now());
      if (!row) throw slugTaken(fields.slug);
      return publicView(row);
    },

    /** Re-validates the whole provider with the change applied; the kind never changes. */
    async update(
      platformId: string,
      idOrSlug: string,
      patch: UpstreamProviderPatch,
      q: Queryable = deps.db,
    ): Promise<UpstreamProvider> {
      const current = await find(platformId, idOrSlug, q);
      if (!current) throw unknownProvider(idOrSlug);
      const keepsSecret = patch.clientSecret === undefined;
      const merged: UpstreamProviderInput = {
        kind: current.kind,
        slug: current.slug,
        displayName: current.displayName,
        issuer: current.issuer,
        apiBaseUrl: current.apiBaseUrl ?? undefined,
        clientId: current.clientId,
        clientSecret: keepsSecret ? (current.sealedClientSecret ? 'kept' : null) : patch.clientSecret,
        scopes: current.scopes,
        claimMapping: current.claimMapping,
        trustEmail: current.trustEmail,
        trustMfa: current.trustMfa,
        storeTokens: current.storeTokens,
        enabled: current.enabled,
        ...Object.fromEntries(Object.entries(patch).filter(([k, v]) => v !== undefined && k !== 'clientSecret')),
      };
      // A new tenant without a new issuer moves a Microsoft provider to that tenant's issuer.
      if (patch.tenant && patch.issuer === undefined && current.kind === 'microsoft') merged.issuer = undefined;
      const { sealedClientSecret, ...fields } = fieldsOf(merged);
      if (fields.slug !== current.slug && (await providers.findBySlug(q, platformId, fields.slug)))
        throw slugTaken(fields.slug);
      const row = await providers.update(
        q,
        platformId,
        current.id,
        keepsSecret ? fields : { ...fields, sealedClientSecret },
        deps.now(),
      );
      if (!row) throw unknownProvider(idOrSlug);
      return publicView(row);
    },

    async remove(platformId: string, idOrSlug: string, q: Queryable = deps.db): Promise<UpstreamProvider> {
      const current = await find(platformId, idOrSlug, q);
      if (!current || !(await providers.remove(q, platformId, current.id))) throw unknownProvider(idOrSlug);
      return publicView(current);
    },

    async list(platformId: string, q: Queryable = deps.db): Promise<UpstreamProvider[]> {
      return (await providers.listByPlatform(q, platformId)).map(publicView);
    },

    async get(platformId: string, idOrSlug: string, q: Queryable = deps.db): Promise<UpstreamProvider> {
      const row = await find(platformId, idOrSlug, q);
      if (!row) throw unknownProvider(idOrSlug);
      return publicView(row);
    },

    /** The "Continue with …" buttons: enabled providers in the order they were added. */
    async enabledFor(platformId: string): Promise<UpstreamProvider[]> {
      return (await providers.listByPlatform(deps.db, platformId, { enabledOnly: true })).map(publicView);
    },

    /** An enabled provider by slug with its client secret opened, for the calls to the upstream (./upstream-client.ts). */
    async forSignIn(
      platformId: string,
      slug: string,
    ): Promise<{ provider: UpstreamProvider; clientSecret: string | null } | undefined> {
      const row = UPSTREAM_SLUG.test(slug) ? await providers.findBySlug(deps.db, platformId, slug) : undefined;
      if (!row || !row.enabled) return undefined;
      return {
        provider: publicView(row),
        clientSecret: row.sealedClientSecret ? deps.sealer.unseal(row.sealedClientSecret).toString('utf8') : null,
      };
    },
  };
}

export type UpstreamProviders = ReturnType<typeof createUpstreamProviders>;
