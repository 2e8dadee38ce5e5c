import { OAuthError, invalidRequest } from '../../errors';
import type { Client } from '../../domain/client';
import type { Platform } from '../../domain/platform';
import { narrowScopes, parseScope, type Scope } from '../scopes';

/**
 * What a standard platform's request that names no scope asks for (RFC 6749 §3.3: a pre-defined
 * default): the client's registered scopes, openid included when registered. The one place a
 * request's default scope is decided, so that another default (a named resource's) joins it here.
 */
export function defaultScopeOf(client: Pick<Client, 'allowedScopes'>): string[] {
  return [...client.allowedScopes];
}

/**
 * The scopes an authorization request is granted, narrowed to the client's (spec scope rule 1).
 * Seed: the spec's rules, `scope` with openid required. Standard: `scope` may be omitted (or empty:
 * then defaultScopeOf) and may lack openid, an OAuth request without OpenID: no ID token, no
 * UserInfo (docs/decisions.md, "Agent-ready authorization"). Throws invalid_request, invalid_scope.
 */
export function scopesOfRequest(platform: Pick<Platform, 'signingProfile'>, client: Pick<Client, 'allowedScopes'>, scope: string | undefined): Scope[] {
  if (platform.signingProfile !== 'standard') {
    if (scope === undefined) throw invalidRequest('missing required parameter "scope"');
    const requested = parseScope(scope);
    if (!requested.includes('openid')) throw new OAuthError('invalid_scope', 'The scope must include openid');
    return narrowScopes(requested, client.allowedScopes);
  }
  const requested = parseScope(scope);
  const scopes = narrowScopes(requested.length ? requested : defaultScopeOf(client), client.allowedScopes);
  // Nothing left to grant: a token for nothing is no answer (RFC 6749 §3.3 lets the server refuse).
  if (scopes.length === 0) throw new OAuthError('invalid_scope', 'None of the requested scopes is allowed for this client');
  return scopes;
}
