import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { presentIntrospection } from '../../presenters/introspection.presenter';
import type { Services } from '../../services';
import { clientAuth } from './client-auth';
import type { RateLimits } from '../middleware/rate-limit';
import { requireFormBody } from '../middleware/form-body';
import { noStore } from '../middleware/no-store';
import { resolvePlatform } from '../middleware/resolve-platform';
import { param, parseOAuth } from '../request/params';

const IntrospectBody = z.object({ token: param(8192), token_type_hint: z.string().max(64).optional() }).passthrough();

/** POST /oauth/introspect (RFC 7662), for confidential clients of the platform. */
export function introspectRouter(s: Services, rateLimit: RateLimits): Router {
  const r = Router();
  const limit = rateLimit.perClient('introspect'); // counted against the client once it has authenticated
  const introspect: RequestHandler = async (req, res) => {
    const { token } = parseOAuth(IntrospectBody, req.body);
    res.json(presentIntrospection(await s.tokens.introspect(res.locals.platform, token, res.locals.client)));
  };
  r.post(
    '/oauth/introspect',
    noStore,
    requireFormBody,
    resolvePlatform(s),
    clientAuth(s, { allowPublic: false }),
    limit.authenticated,
    introspect,
    limit.failed,
  );
  return r;
}
