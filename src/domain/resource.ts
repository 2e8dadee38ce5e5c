/**
 * A protected resource (an API, an MCP server) of a `standard` platform, named in requests by its
 * RFC 8707 resource indicator. Access tokens issued for it carry the indicator as `aud`, the
 * scopes it defines are shown on consent with their descriptions, and it may shorten or lengthen
 * its tokens' lifetime.
 */
export interface Resource {
  id: string;
  platformId: string;
  /** The resource indicator: an absolute URI without a fragment (RFC 8707 §2), unique per platform. */
  uri: string;
  name: string;
  /** The scopes the resource defines, in the order consent shows them. */
  scopes: ResourceScope[];
  /** What a request naming this resource and no `scope` gets (before the client's own limits); empty = every scope it defines. */
  defaultScopes: string[];
  /** Its access tokens' lifetime; null = the platform's default (ACCESS_TOKEN_TTL_SECONDS). */
  accessTokenTtlSeconds: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ResourceScope {
  name: string;
  /** Shown on the consent page beside the scope. */
  description: string;
}

/** A scope name a resource may define: RFC 6749 §3.3's scope-token characters, at most 128 of them. */
export const RESOURCE_SCOPE_NAME = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;

/** The longest and shortest access-token lifetime a resource may set, in seconds. */
export const RESOURCE_TOKEN_TTL_MIN = 60;
export const RESOURCE_TOKEN_TTL_MAX = 86_400;

/** How many scopes one resource may define, and how many resources one platform may have. */
export const RESOURCE_SCOPES_MAX = 50;
export const RESOURCES_PER_PLATFORM_MAX = 100;

/** How many resources one authorization or token request may name: enough for any real request, and a bound on its registry look-ups. */
export const RESOURCES_PER_REQUEST_MAX = 10;

/** The longest resource name and scope description (consent shows both). */
export const RESOURCE_NAME_MAX = 100;
export const RESOURCE_SCOPE_DESCRIPTION_MAX = 300;

/** Why `uri` cannot be a resource indicator (RFC 8707 §2: absolute, no fragment), or null when it can. */
export function resourceUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'must be at most 2000 characters';
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (uri.includes('#')) return 'must not contain a fragment';
  if (!/^[a-z][a-z0-9+.-]*:/i.test(uri) || parsed.protocol === 'javascript:' || parsed.protocol === 'data:')
    return 'must be an absolute URI';
  return null;
}

/** The scopes a request naming these resources and no `scope` asks for: each resource's defaults. */
export function defaultScopesOf(resources: readonly Resource[]): string[] {
  const out = new Set<string>();
  for (const r of resources)
    for (const s of r.defaultScopes.length ? r.defaultScopes : r.scopes.map((x) => x.name)) out.add(s);
  return [...out];
}
