import { Router, type Request, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../../errors';
import type { Platform } from '../../domain/platform';
import { presentDiscovery } from '../../presenters/discovery.presenter';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import { resolvePlatform } from '../middleware/resolve-platform';
import { cacheableJson } from './cacheable-json';

/**
 * GET /.well-known/openid-configuration?platform_guid=G (the spec), and for a standard platform
 * the same document where a relying party derives it from the issuer alone:
 * {issuer}/.well-known/openid-configuration (OIDC Discovery §4) and the RFC 8414 §3.1 path.
 */
export function discoveryRouter(s: Services, deps: HttpDeps, rateLimit: (name: string) => RequestHandler): Router {
  const r = Router();
  const sendCacheableJson = cacheableJson(deps.config.platformCacheSize);
  const send = (req: Request, res: Response, platform: Platform) =>
    // The profile and both registration policies are in the key: switching one changes the document.
    sendCacheableJson(
      req,
      res,
      `discovery:${platform.id}:${platform.signingProfile}:${platform.registration}:${platform.clientMetadataDocuments !== 'off'}`,
      () => presentDiscovery(deps.config.baseUrl, platform),
    );

  r.get('/.well-known/openid-configuration', rateLimit('discovery'), resolvePlatform(s), (req, res) =>
    send(req, res, res.locals.platform),
  );

  // Only a standard platform's issuer has a path: for a seed platform or an unknown guid there is no document here.
  const byIssuerPath: RequestHandler = async (req, res) => {
    const platform = await s.platforms.findPlatform(String(req.params.platform_guid));
    if (platform?.signingProfile !== 'standard')
      throw new OAuthError('not_found', 'No OpenID Provider has this issuer');
    send(req, res, platform);
  };
  r.get('/platforms/:platform_guid/.well-known/openid-configuration', rateLimit('discovery'), byIssuerPath);
  r.get('/.well-known/oauth-authorization-server/platforms/:platform_guid', rateLimit('discovery'), byIssuerPath);
  return r;
}
