import { Router } from 'express';
import { presentDiscovery } from '../../presenters/discovery.presenter';
import type { Services } from '../../services';
import { resolvePlatform } from '../middleware/resolve-platform';
import { sendCacheableJson } from '../cacheable-json';

/** GET /.well-known/openid-configuration?platform_guid=G */
export function discoveryRouter(s: Services, rateLimit: (name: string) => import('express').RequestHandler): Router {
  const r = Router();
  r.get('/.well-known/openid-configuration', rateLimit('discovery'), resolvePlatform(s), (req, res) => {
    const platform = res.locals.platform;
    sendCacheableJson(req, res, `discovery:${platform.id}`, () => presentDiscovery(s.deps.config.baseUrl, platform.id));
  });
  return r;
}
