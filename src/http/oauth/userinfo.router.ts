import { Router, type Request, type RequestHandler } from 'express';
import { invalidRequest, invalidToken } from '../../errors';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { LiveAccessToken } from '../../services/access-token-cache';
import { presentUserinfo } from '../../presenters/claims.presenter';
import { parseScope } from '../../services/scopes';
import { noStore } from '../middleware/no-store';
import type { RateLimits } from '../middleware/rate-limit';
import { resolvePlatform } from '../middleware/resolve-platform';

/** RFC 6750 §2.1: the token comes in the Authorization header only. */
function bearerToken(header: string | undefined): string {
  if (!header) throw invalidToken('An access token is required in the Authorization header');
  const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(header.trim());
  if (!match) throw invalidToken('The Authorization header must be "Bearer <access token>"');
  return match[1];
}

/**
 * GET and POST /oauth/userinfo: sub, human_guid and the claims of every granted scope (a standard
 * platform's token granted without openid: insufficient_scope, counted against its client). Counted
 * against the token's client only once the token has verified and is live; anything else (a
 * forged or dead token naming any client) against the source address.
 */
export function userinfoRouter(s: Services, deps: HttpDeps, rateLimit: RateLimits): Router {
  const r = Router();
  const live = new WeakMap<Request, LiveAccessToken>();
  const limit = rateLimit.perClient('userinfo', (req) => live.get(req)?.token);
  const authenticate: RequestHandler = async (req, res, next) => {
    if (req.method === 'POST' && (req.body as Record<string, unknown> | undefined)?.access_token !== undefined) {
      throw invalidRequest('Send the access token in the Authorization header');
    }
    live.set(
      req,
      await s.tokens.authenticateAccessToken(res.locals.platform?.id, bearerToken(req.headers.authorization)),
    );
    next();
  };
  const openIdOnly: RequestHandler = async (req, _res, next) => {
    await s.tokens.requireUserinfoScope(live.get(req)!);
    next();
  };
  // The body of a cached live token is serialised once: the cache drops the object on any change.
  const bodies = new WeakMap<LiveAccessToken, string>();
  const respond: RequestHandler = (req, res) => {
    const found = live.get(req)!;
    let body = bodies.get(found);
    if (body === undefined) {
      // openIdOnly has refused a token without a user.
      body = JSON.stringify(presentUserinfo(found.user!, parseScope(found.token.scope), deps.config.baseUrl));
      bodies.set(found, body);
    }
    res
      .writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) })
      .end(body);
  };
  // platform_guid is optional here: the spec lists only the Authorization header for userinfo.
  const platform = resolvePlatform(s, { optional: true });
  r.get('/oauth/userinfo', noStore, platform, authenticate, limit.authenticated, openIdOnly, respond, limit.failed);
  r.post('/oauth/userinfo', noStore, platform, authenticate, limit.authenticated, openIdOnly, respond, limit.failed);
  return r;
}
