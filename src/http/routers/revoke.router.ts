import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import type { Services } from '../../services';
import { clientAuth } from '../middleware/client-auth';
import { requireFormBody } from '../middleware/form-body';
import { noStore } from '../middleware/no-store';
import { resolvePlatform } from '../middleware/resolve-platform';
import { param, parseOAuth } from '../params';

const RevokeBody = z.object({ token: param(8192), token_type_hint: z.string().max(64).optional() }).passthrough();

/** POST /oauth/revoke (RFC 7009): 200 with an empty body for any token; credentials optional but checked. */
export function revokeRouter(s: Services, rateLimit: (name: string) => RequestHandler): Router {
  const r = Router();
  r.post('/oauth/revoke', noStore, rateLimit('revoke'), requireFormBody, resolvePlatform(s), clientAuth(s, { allowPublic: true, optional: true }), async (req, res) => {
    const { token } = parseOAuth(RevokeBody, req.body);
    await s.tokens.revoke(res.locals.platform, token, res.locals.client);
    res.status(200).end();
  });
  return r;
}
