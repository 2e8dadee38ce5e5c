import type { RequestHandler } from 'express';
import { OAuthError, invalidRequest } from '../../errors';
import type { Services } from '../../services';
import { ISSUER_PATH_ENDPOINT } from '../surface';

/**
 * A standard platform's endpoints under its issuer (docs/decisions.md, "Agent-ready authorization"):
 * `/platforms/G/oauth/token?…` is served as `/oauth/token?…&platform_guid=G`, so every later step
 * (rate limits, session, CSRF, resolvePlatform, the POST-to-GET redirect) sees one form of the
 * request. A seed platform has no such path (its interface is the spec's): like an unknown one, 404.
 * A platform_guid of the client's own that names another platform is refused, never overridden.
 */
export function issuerPathEndpoints(s: Services): RequestHandler {
  return async (req, _res, next) => {
    const queryAt = req.url.indexOf('?');
    const path = queryAt === -1 ? req.url : req.url.slice(0, queryAt);
    const match = ISSUER_PATH_ENDPOINT.exec(path);
    if (!match) return next();
    const platform = await s.platforms.findPlatform(match[1]);
    if (platform?.signingProfile !== 'standard')
      throw new OAuthError('not_found', 'No OpenID Provider has this issuer');
    const query = queryAt === -1 ? '' : req.url.slice(queryAt + 1);
    const named = new URLSearchParams(query).getAll('platform_guid');
    if (named.some((guid) => guid !== platform.id))
      throw invalidRequest('platform_guid names another platform than the issuer of this endpoint');
    const carried = named.length
      ? query
      : [query, `platform_guid=${encodeURIComponent(platform.id)}`].filter(Boolean).join('&');
    req.url = `${match[2]}?${carried}`;
    next();
  };
}
