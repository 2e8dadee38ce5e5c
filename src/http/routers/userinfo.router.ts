import { Router, type RequestHandler } from 'express';
import { invalidRequest, invalidToken } from '../../errors';
import type { Services } from '../../services';
import type { LiveAccessToken } from '../../services/access-token-cache';
import { presentUserinfo } from '../../presenters/claims.presenter';
import { parseScope } from '../../services/scopes';
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
  // The body of a cached live token is serialised once: the cache drops the object on any change.
  const bodies = new WeakMap<LiveAccessToken, string>();
  const handler: RequestHandler = async (req, res) => {
    if (req.method === 'POST' && (req.body as Record<string, unknown> | undefined)?.access_token !== undefined) {
      throw invalidRequest('Send the access token in the Authorization header');
    }
    const live = await s.tokens.authenticateAccessToken(res.locals.platform?.id, bearerToken(req.headers.authorization));
    let body = bodies.get(live);
    if (body === undefined) {
      body = JSON.stringify(presentUserinfo(live.user, parseScope(live.token.scope), s.deps.config.baseUrl));
      bodies.set(live, body);
    }
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }).end(body);
  };
  // platform_guid is optional here: the spec lists only the Authorization header for userinfo.
  const platform = resolvePlatform(s, { optional: true });
  r.get('/oauth/userinfo', noStore, rateLimit('userinfo'), platform, handler);
  r.post('/oauth/userinfo', noStore, rateLimit('userinfo'), platform, handler);
  return r;
}
