import { Router, type RequestHandler } from 'express';
import { presentJwks, presentPublicJwks } from '../../presenters/jwks.presenter';
import type { Services } from '../../services';
import { resolvePlatform } from '../middleware/resolve-platform';
import type { HttpDeps } from '../http-deps';
import { cacheableJson } from './cacheable-json';

/** GET /oauth/jwks?platform_guid=G — seed: key descriptors only; standard: public keys only. */
export function jwksRouter(s: Services, deps: HttpDeps, rateLimit: (name: string) => RequestHandler): Router {
  const r = Router();
  const sendCacheableJson = cacheableJson(deps.config.platformCacheSize);
  r.get('/oauth/jwks', rateLimit('jwks'), resolvePlatform(s), async (req, res) => {
    if (res.locals.platform.signingProfile === 'standard') {
      const published = await s.signingKeys.publishedKeys(res.locals.platform.id);
      const kids = published.map((k) => k.kid).join(',');
      return sendCacheableJson(req, res, `jwks-standard:${res.locals.platform.id}:${kids}`, () =>
        presentPublicJwks(published),
      );
    }
    const keys = await s.signingKeys.usableKeys(res.locals.platform.id);
    const kids = keys.map((k) => k.kid).join(',');
    sendCacheableJson(req, res, `jwks:${res.locals.platform.id}:${kids}`, () => presentJwks(keys));
  });
  return r;
}
