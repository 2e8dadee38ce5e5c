import { Router, type RequestHandler } from 'express';
import { presentJwks } from '../../presenters/jwks.presenter';
import type { Services } from '../../services';
import { resolvePlatform } from '../middleware/resolve-platform';
import { sendCacheableJson } from '../cacheable-json';

/** GET /oauth/jwks?platform_guid=G — key descriptors only. */
export function jwksRouter(s: Services, rateLimit: (name: string) => RequestHandler): Router {
  const r = Router();
  r.get('/oauth/jwks', rateLimit('jwks'), resolvePlatform(s), async (req, res) => {
    const keys = await s.signingKeys.usableKeys(res.locals.platform.id);
    const kids = keys.map((k) => k.kid).join(',');
    sendCacheableJson(req, res, `jwks:${res.locals.platform.id}:${kids}`, () => presentJwks(keys));
  });
  return r;
}
