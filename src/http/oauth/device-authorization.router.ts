import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { OAuthError } from '../../errors';
import { presentDeviceAuthorization } from '../../presenters/device-authorization.presenter';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { RateLimits } from '../middleware/rate-limit';
import { requireFormBody } from '../middleware/form-body';
import { noStore } from '../middleware/no-store';
import { resolvePlatform } from '../middleware/resolve-platform';
import { parseOAuth } from '../request/params';
import { auditContext } from '../request/audit-context';
import { resourceParams } from '../request/resource-params';
import { clientAuth } from './client-auth';

const DeviceBody = z.object({ scope: z.string().max(1024).optional() }).passthrough();

/** A seed platform's interface is the spec's: like an unknown path, this endpoint does not exist there. */
const standardOnly: RequestHandler = (_req, res, next) => {
  if (res.locals.platform.signingProfile !== 'standard')
    throw new OAuthError('not_found', 'This platform has no device authorization endpoint');
  next();
};

/**
 * POST {issuer}/oauth/device_authorization (RFC 8628 §3.1): the client authenticates as at the
 * token endpoint and is counted per client like it; the answer is the device and user codes.
 */
export function deviceAuthorizationRouter(s: Services, deps: HttpDeps, rateLimit: RateLimits): Router {
  const r = Router();
  const limit = rateLimit.perClient('device_authorization');
  const issue: RequestHandler = async (req, res) => {
    const platform = res.locals.platform;
    const { body, resource } = resourceParams(platform, req.body);
    const { scope } = parseOAuth(DeviceBody, body);
    const issued = await s.device.requestDeviceAuthorization(
      { platform, client: res.locals.client!, audit: auditContext(req, { type: 'user' }) },
      { scope, resource },
    );
    res.json(presentDeviceAuthorization(deps.config.baseUrl, issued));
  };
  r.post(
    '/oauth/device_authorization',
    noStore,
    requireFormBody,
    resolvePlatform(s),
    standardOnly,
    clientAuth(s, { allowPublic: true }),
    limit.authenticated,
    issue,
    limit.failed,
  );
  return r;
}
