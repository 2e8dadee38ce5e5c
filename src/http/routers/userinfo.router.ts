import { Router, type RequestHandler } from 'express';
import { invalidRequest, invalidToken } from '../../errors';
import type { Services } from '../../services';
import { noStore } from '../middleware/no-store';
import { resolvePlatform } from '../middleware/resolve-platform';

/** RFC 6750 §2.1: the token comes in the Authorization header only. */
function bearerToken(header: string | undefined): string {
  if (!header) throw invalidToken('An access token is required in the Authorization header');
  const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(header.trim());
  if (!match) throw invalidToken('The Authorization header must be "Bearer <access token>"');
  return match[1];
}

/** GET and POST /oauth/userinfo: sub, human_guid and the claims of every granted scope. */
export function userinfoRouter(s: Services, rateLimit: (name: string) => RequestHandler): Router {
  const r = Router();
  const handler: RequestHandler = async (req, res) => {
    if (req.method === 'POST' && (req.body as Record<string, unknown> | undefined)?.access_token !== undefined) {
      throw invalidRequest('Send the access token in the Authorization header');
    }
    const token = bearerToken(req.headers.authorization);
    res.json(await s.tokens.userinfo(res.locals.platform?.id, token));
  };
  // platform_guid is optional here: the spec lists only the Authorization header for userinfo.
  const platform = resolvePlatform(s, { optional: true });
  r.get('/oauth/userinfo', noStore, rateLimit('userinfo'), platform, handler);
  r.post('/oauth/userinfo', noStore, rateLimit('userinfo'), platform, handler);
  return r;
}
