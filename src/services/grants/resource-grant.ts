import { RESOURCES_PER_REQUEST_MAX, defaultScopesOf, resourceUriProblem, type Resource } from '../../domain/resource';
import type { Platform } from '../../domain/platform';
import { OAuthError, invalidRequest, invalidTarget } from '../../errors';
import { parseScope } from '../scopes';
import type { Resources } from '../resources.service';

/**
 * What a grant with no authorization request behind it (client credentials, token exchange) is
 * issued for: the RFC 8707 resources it names, each registered on the platform, and the scopes
 * among theirs it asks for. Shared so that both grants refuse the same way.
 */

/**
 * The registered resources `uris` name, in order and without repeats. At least one is needed: a
 * token for no API is no answer (RFC 8707 §2: a missing resource is invalid_target). Throws
 * invalid_target, and invalid_request beyond RESOURCES_PER_REQUEST_MAX.
 */
export async function namedResources(
  resources: Resources,
  platform: Platform,
  uris: readonly string[] | undefined,
  parameter: string,
): Promise<Resource[]> {
  const unique = [...new Set(uris ?? [])];
  if (unique.length === 0)
    throw invalidTarget(`name the resource the access token is for with "${parameter}" (RFC 8707)`);
  if (unique.length > RESOURCES_PER_REQUEST_MAX)
    throw invalidRequest(`at most ${RESOURCES_PER_REQUEST_MAX} resources per request`);
  const found: Resource[] = [];
  for (const uri of unique) {
    const problem = resourceUriProblem(uri);
    if (problem) throw invalidTarget(`resource "${uri.slice(0, 200)}" ${problem}`);
    const resource = await resources.findByUri(platform.id, uri);
    if (!resource) throw invalidTarget(`resource "${uri.slice(0, 200)}" is not a resource of this platform`);
    found.push(resource);
  }
  return found;
}

/**
 * The scopes granted for `named`: those asked for, each one a scope of a named resource and, when
 * `ceiling` is given, one it holds (a token exchange never widens its subject token); without
 * `scope`, the resources' default scopes within the same bounds, as an authorization request naming
 * them gets. Unlike an authorization request (which drops what it cannot grant), a scope beyond
 * them is refused: no person chose it, so the client asked for something it cannot have (RFC 6749
 * §5.2). Ordered as the resources define them. Throws invalid_scope.
 */
export function resourceScopes(named: readonly Resource[], scope: string | undefined, ceiling?: readonly string[]) {
  const allowed = [...new Set(named.flatMap((r) => r.scopes.map((s) => s.name)))].filter(
    (s) => !ceiling || ceiling.includes(s),
  );
  const requested = parseScope(scope);
  const beyond = requested.find((s) => !allowed.includes(s));
  if (beyond !== undefined)
    throw new OAuthError(
      'invalid_scope',
      ceiling
        ? `scope "${beyond.slice(0, 128)}" is not held by the subject token or not defined by the resource`
        : `scope "${beyond.slice(0, 128)}" is not a scope of the requested resource`,
    );
  const wanted = requested.length ? requested : defaultScopesOf(named);
  const granted = allowed.filter((s) => wanted.includes(s));
  if (granted.length === 0)
    throw new OAuthError(
      'invalid_scope',
      ceiling
        ? 'the subject token holds none of the resource\'s default scopes: name the scopes with "scope"'
        : 'the resource defines no scope to grant',
    );
  return granted;
}

/** The access token's expiry: the shortest of the named resources' lifetimes (each one's, else the platform default). */
export function accessExpiryOf(named: readonly Resource[], now: Date, defaultTtlSeconds: number): Date {
  const ttl = Math.min(...named.map((r) => r.accessTokenTtlSeconds ?? defaultTtlSeconds));
  return new Date((Math.floor(now.getTime() / 1000) + ttl) * 1000);
}
