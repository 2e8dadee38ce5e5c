import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { OAuthError } from '../../errors';
import { presentTokenResponse } from '../../presenters/token.presenter';
import type { Services } from '../../services';
import { clientAuth } from './client-auth';
import type { RateLimits } from '../middleware/rate-limit';
import { requireFormBody } from '../middleware/form-body';
import { noStore } from '../middleware/no-store';
import { resolvePlatform } from '../middleware/resolve-platform';
import { param, parseOAuth } from '../request/params';
import { auditContext } from '../request/audit-context';
import { resourceParams } from '../request/resource-params';

// Built once: a zod schema compiles itself on first use, so one made per request costs more than the grant's own work.
const CodeBody = z
  .object({ code: param(512), redirect_uri: param(2048), code_verifier: z.string().max(256).optional() })
  .passthrough();
const RefreshBody = z.object({ refresh_token: param(512), scope: z.string().max(1024).optional() }).passthrough();
const GrantType = z.object({ grant_type: param(64) });

/** POST /oauth/token — parse, delegate, present. Counted against the client once it has authenticated. */
export function tokenRouter(s: Services, rateLimit: RateLimits): Router {
  const r = Router();
  const limit = rateLimit.perClient('token');
  const supportedGrant: RequestHandler = (req, _res, next) => {
    const { grant_type } = parseOAuth(GrantType, req.body);
    if (grant_type !== 'authorization_code' && grant_type !== 'refresh_token') {
      throw new OAuthError('unsupported_grant_type', `grant_type "${grant_type.slice(0, 64)}" is not supported`);
    }
    next();
  };
  const issue: RequestHandler = async (req, res) => {
    const ctx = {
      platform: res.locals.platform,
      client: res.locals.client!,
      audit: auditContext(req, { type: 'user' }),
    };
    const { body, resource } = resourceParams(ctx.platform, req.body);
    const issued =
      body.grant_type === 'authorization_code'
        ? await s.grants.exchangeAuthorizationCode(ctx, { ...parseOAuth(CodeBody, body), resource })
        : await s.grants.rotateRefreshToken(ctx, { ...parseOAuth(RefreshBody, body), resource });
    await s.registration.markFirstUse(ctx.client); // a self-registered client in use is not purged; a no-op for the others
    res.json(presentTokenResponse(issued));
  };
  r.post(
    '/oauth/token',
    noStore,
    requireFormBody,
    resolvePlatform(s),
    supportedGrant,
    clientAuth(s, { allowPublic: true }),
    limit.authenticated,
    issue,
    limit.failed,
  );
  return r;
}
