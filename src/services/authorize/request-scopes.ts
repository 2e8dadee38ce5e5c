import { OAuthError, invalidRequest } from '../../errors';
import type { Client } from '../../domain/client';
import type { Platform } from '../../domain/platform';
import { defaultScopesOf, type Resource } from '../../domain/resource';
import type { ResourceGrant } from '../../domain/authorization-request';
import { narrowScopes, parseScope } from '../scopes';

/**
 * What a standard platform's request that names no scope asks for (RFC 6749 §3.3: a pre-defined
 * default): with RFC 8707 resources named, their default scopes only (a client naming an API and no
 * scope wants the API, not an ID token); otherwise the client's registered scopes, openid included
 * when registered. The one place a request's default scope is decided.
 */
export function defaultScopeOf(client: Pick<Client, 'allowedScopes'>, resources: readonly Resource[] = []): string[] {
  return resources.length ? defaultScopesOf(resources) : [...client.allowedScopes];
}

/** The scopes a request is granted: the spec's (narrowed to the client's), then each named resource's. */
export interface RequestScopes {
  scopes: string[];
  /** Per named resource, in the order named: its granted scopes, in the order it defines them. */
  resources: ResourceGrant[];
}

/**
 * The scopes an authorization request is granted, narrowed to the client's (spec scope rule 1).
 * Seed: the spec's rules, `scope` with openid required. Standard: `scope` may be omitted (or empty:
 * then defaultScopeOf) and may lack openid, an OAuth request without OpenID: no ID token, no
 * UserInfo (docs/decisions.md, "Agent-ready authorization"). A named resource's scopes are granted
 * to any client that names it (a client registers only OpenID Connect scopes); a resource scope
 * without its resource named is dropped like any unknown scope. Throws invalid_request, invalid_scope.
 */
export function scopesOfRequest(
  platform: Pick<Platform, 'signingProfile'>,
  client: Pick<Client, 'allowedScopes'>,
  scope: string | undefined,
  named: readonly Resource[] = [],
): RequestScopes {
  if (platform.signingProfile !== 'standard') {
    if (scope === undefined) throw invalidRequest('missing required parameter "scope"');
    const requested = parseScope(scope);
    if (!requested.includes('openid')) throw new OAuthError('invalid_scope', 'The scope must include openid');
    return { scopes: narrowScopes(requested, client.allowedScopes), resources: [] };
  }
  const given = parseScope(scope);
  const requested = given.length ? given : defaultScopeOf(client, named);
  const resources = named.map((r) => ({
    uri: r.uri,
    scopes: r.scopes.map((s) => s.name).filter((s) => requested.includes(s)),
  }));
  const scopes = [
    ...new Set([...narrowScopes(requested, client.allowedScopes), ...resources.flatMap((r) => r.scopes)]),
  ];
  // Nothing left to grant: a token for nothing is no answer (RFC 6749 §3.3 lets the server refuse).
  if (scopes.length === 0)
    throw new OAuthError('invalid_scope', 'None of the requested scopes is allowed for this client');
  return { scopes, resources };
}
