import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import type { Services } from '../../services';
import { clientAuth } from './client-auth';
import type { RateLimits } from '../middleware/rate-limit';
import { requireFormBody } from '../middleware/form-body';
import { noStore } from '../middleware/no-store';
import { resolvePlatform } from '../middleware/resolve-platform';
import { param, parseOAuth } from '../request/params';

const RevokeBody = z.object({ token: param(8192), token_type_hint: z.string().max(64).optional() }).passthrough();

/**
 * POST /oauth/revoke (RFC 7009): 200 with an empty body for any token; credentials optional but
 * checked. Counted against the client when it authenticated, else against the source address:
 * the token's client is only known after the lookup that is the revocation itself.
 */
export function revokeRouter(s: Services, rateLimit: RateLimits): Router {
  const r = Router();
  const limit = rateLimit.perClient('revoke');
  const revoke: RequestHandler = async (req, res) => {
    const { token } = parseOAuth(RevokeBody, req.body);
    await s.tokens.revoke(res.locals.platform, token, res.locals.client);
    res.status(200).end();
  };
  r.post(
    '/oauth/revoke',
    noStore,
    requireFormBody,
    resolvePlatform(s),
    clientAuth(s, { allowPublic: true, optional: true }),
    limit.authenticated,
    revoke,
    limit.failed,
  );
  return r;
}
