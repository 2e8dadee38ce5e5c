import * as oc from 'openid-client';
import { decodeJwt } from 'jose';
import type { UpstreamProvider } from '../../domain/upstream';

/**
 * OpenID Connect upstreams (generic, Google, Microsoft) through openid-client: discovery, the code
 * grant with PKCE/state/nonce, and the ID token verified by openid-client (iss, aud, signature by
 * the discovered JWKS, nonce, exp, auth_time against max_age).
 */

export interface OidcUpstream {
  config: oc.Configuration;
  /** Microsoft's multi-tenant issuer, `https://login.microsoftonline.com/{tenantid}/v2.0`; null for any other issuer. */
  tenantTemplate: string | null;
}

interface Access {
  clientSecret: string | null;
  fetch: oc.CustomFetch;
  /** http to a loopback issuer outside production. */
  insecure: boolean;
}

const TEMPLATE_TENANTS = new Set(['common', 'organizations', 'consumers']);
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `…/{tenant}/v2.0` of a Microsoft provider whose discovery publishes another issuer than the one
 * asked for: common/organizations/consumers (a template, or consumers' own tenant id) and a tenant
 * named by its domain (its tenant id: Microsoft's issuers always name the id). null for a tenant id.
 */
function microsoftDiscovery(provider: UpstreamProvider): { origin: string; multiTenant: boolean } | null {
  if (provider.kind !== 'microsoft') return null;
  const url = new URL(provider.issuer);
  const [tenant, version, ...rest] = url.pathname.split('/').filter(Boolean);
  if (rest.length !== 0 || version !== 'v2.0' || !tenant || TENANT_ID.test(tenant)) return null;
  return { origin: url.origin, multiTenant: TEMPLATE_TENANTS.has(tenant.toLowerCase()) };
}

/** client_secret_basic with a secret; a public client (PKCE only) without. */
const clientAuth = (secret: string | null) => (secret ? oc.ClientSecretBasic(secret) : oc.None());

function configure(config: oc.Configuration, access: Access): oc.Configuration {
  config[oc.customFetch] = access.fetch;
  if (access.insecure) oc.allowInsecureRequests(config);
  return config;
}

/** As discoverOidc's: the ID token's signature verified by the JWKS. */
function configureOidc(config: oc.Configuration, access: Access): oc.Configuration {
  oc.enableNonRepudiationChecks(config);
  return configure(config, access);
}

export async function discoverOidc(provider: UpstreamProvider, access: Access): Promise<OidcUpstream> {
  const options: oc.DiscoveryRequestOptions = {
    [oc.customFetch]: access.fetch,
    // openid-client skips the ID token's signature when the token came straight from the token
    // endpoint over TLS (OIDC Core §3.1.3.7 allows it); verify it by the JWKS anyway.
    execute: [oc.enableNonRepudiationChecks, ...(access.insecure ? [oc.allowInsecureRequests] : [])],
  };
  const auth = clientAuth(access.clientSecret);
  const microsoft = microsoftDiscovery(provider);
  // openid-client checks the discovered issuer equals the one asked for …
  if (!microsoft)
    return {
      config: await oc.discovery(new URL(provider.issuer), provider.clientId, undefined, auth, options),
      tenantTemplate: null,
    };
  // … which a multi-tenant or domain-named Microsoft issuer never does: read the document by its URL and check it here.
  const { origin, multiTenant } = microsoft;
  const config = await oc.discovery(
    new URL(`${provider.issuer}/.well-known/openid-configuration`),
    provider.clientId,
    undefined,
    auth,
    options,
  );
  const issuer = config.serverMetadata().issuer;
  const template = `${origin}/{tenantid}/v2.0`;
  if (multiTenant && issuer === template) return { config, tenantTemplate: template };
  // `consumers` and a domain publish one real tenant, by its id: plain OIDC with that issuer.
  const tenantId = issuer.startsWith(`${origin}/`) ? issuer.slice(origin.length + 1).replace(/\/v2\.0$/, '') : '';
  if (TENANT_ID.test(tenantId) && issuer === `${origin}/${tenantId}/v2.0`) return { config, tenantTemplate: null };
  throw new Error(`discovered issuer ${issuer} is neither ${template} nor a tenant of ${origin}`);
}

/** The code grant; the ID token verified by openid-client. Returns the tokens and the configuration that verified them. */
export async function oidcCodeGrant(
  provider: UpstreamProvider,
  upstream: OidcUpstream,
  access: Access,
  currentUrl: URL,
  checks: oc.AuthorizationCodeGrantChecks,
): Promise<{ tokens: Awaited<ReturnType<typeof oc.authorizationCodeGrant>>; config: oc.Configuration }> {
  if (!upstream.tenantTemplate)
    return { tokens: await oc.authorizationCodeGrant(upstream.config, currentUrl, checks), config: upstream.config };
  return tenantTemplateGrant(provider, upstream.config, upstream.tenantTemplate, access, currentUrl, checks);
}

class TokenResponseCaptured extends Error {}

/**
 * Microsoft's multi-tenant issuer (docs/decisions.md): the ID token's `iss` must equal the template
 * with the token's own `tid`. openid-client takes the expected issuer from the configuration, fixed
 * before the token is seen, so the exchange runs in two passes over ONE token request:
 * 1. the code is exchanged and the token response kept as it came (openid-client is stopped there);
 * 2. openid-client verifies that response — replayed, no second request — with a configuration whose
 *    issuer is the template filled with the `tid` the ID token carries. Everything is verified in
 *    pass 2 (signature, aud, nonce, exp, and iss against that tid); the unverified `tid` only picks
 *    which issuer is expected, and a token whose iss names another tenant than its tid fails there.
 */
async function tenantTemplateGrant(
  provider: UpstreamProvider,
  base: oc.Configuration,
  template: string,
  access: Access,
  currentUrl: URL,
  checks: oc.AuthorizationCodeGrantChecks,
) {
  // serverMetadata() carries helper functions that cannot be cloned into a new Configuration.
  const server = JSON.parse(JSON.stringify(base.serverMetadata())) as oc.ServerMetadata;
  const tokenEndpoint = new URL(server.token_endpoint!).href;
  const isTokenCall = (url: string) => new URL(url).href === tokenEndpoint;

  let captured: { status: number; headers: Headers; body: string } | undefined;
  const exchanging = configureOidc(
    new oc.Configuration(server, provider.clientId, undefined, clientAuth(access.clientSecret)),
    access,
  );
  exchanging[oc.customFetch] = async (url, options) => {
    if (!isTokenCall(url)) return access.fetch(url, options);
    const res = await access.fetch(url, options);
    captured = { status: res.status, headers: res.headers, body: await res.text() };
    throw new TokenResponseCaptured();
  };
  try {
    await oc.authorizationCodeGrant(exchanging, currentUrl, checks);
  } catch (err) {
    if (!captured) throw err;
  }
  const answer = captured!;

  let tid: unknown;
  try {
    const idToken = (JSON.parse(answer.body) as { id_token?: unknown }).id_token;
    if (typeof idToken === 'string') tid = decodeJwt(idToken).tid;
  } catch {
    // not JSON or not a JWT: pass 2 reports the response as openid-client sees it
  }
  if (answer.status === 200 && (typeof tid !== 'string' || !/^[\w.-]{1,100}$/.test(tid)))
    throw new Error('ID token from a multi-tenant issuer without a usable tid');

  const issuer = typeof tid === 'string' ? template.replace('{tenantid}', tid) : template;
  const verifying = configureOidc(
    new oc.Configuration({ ...server, issuer }, provider.clientId, undefined, clientAuth(access.clientSecret)),
    access,
  );
  const jwks = oc.getJwksCache(base);
  if (jwks) oc.setJwksCache(verifying, jwks);
  verifying[oc.customFetch] = async (url, options) =>
    isTokenCall(url)
      ? new Response(answer.body, { status: answer.status, headers: answer.headers })
      : access.fetch(url, options);
  const tokens = await oc.authorizationCodeGrant(verifying, currentUrl, checks);
  const refreshed = oc.getJwksCache(verifying);
  if (refreshed) oc.setJwksCache(base, refreshed);
  return { tokens, config: verifying };
}

export { configure as configureUpstream, clientAuth };
