import express, { type RequestHandler, type Router } from 'express';
import type { Services } from '../../../services';
import type { HttpDeps } from '../../http-deps';
import { OAuthError } from '../../../errors';
import type { RateLimits } from '../../middleware/rate-limit';
import { noStore } from '../../middleware/no-store';
import { createAdminRegistry, generateAdminDocument } from './openapi-document';
import { platformRoutes } from './platforms.routes';
import { userRoutes } from './users.routes';
import { clientRoutes } from './clients.routes';
import { keyRoutes } from './keys.routes';
import { registrationTokenRoutes } from './registration-tokens.routes';
import { throttleRoutes } from './throttles.routes';
import { mailRoutes } from './mail.routes';
import { auditRoutes } from './audit.routes';
import { upstreamProviderRoutes, userIdentityRoutes } from './upstream-providers.routes';
import { resourceRoutes } from './resources.routes';

export const ADMIN_API_PATH = '/admin/api/v1';

/** Every resource's routes; each adds its operations to the router and the document. */
const RESOURCES = [
  platformRoutes,
  userRoutes,
  userIdentityRoutes,
  clientRoutes,
  upstreamProviderRoutes,
  resourceRoutes,
  keyRoutes,
  registrationTokenRoutes,
  throttleRoutes,
  mailRoutes,
  auditRoutes,
];

/**
 * The admin REST API, mounted at /admin/api/v1: a bearer admin token, counted per
 * token once it authenticated (per source before), JSON only, described at /openapi.json.
 */
export function adminApiRouter(s: Services, deps: HttpDeps, rateLimit: RateLimits): Router {
  const registry = createAdminRegistry();
  const api = express.Router();
  for (const addRoutes of RESOURCES) addRoutes(api, registry, s);
  let document: unknown;

  const router = express.Router();
  router.use(noStore);
  router.get('/openapi.json', (_req, res) => {
    document ??= generateAdminDocument(registry, deps.config.baseUrl);
    res.json(document);
  });
  router.use(authenticate(s), rateLimit.adminApi, requireToken);
  router.use(express.json({ limit: '64kb', strict: true }));
  router.use(api);
  router.use((req) => {
    throw new OAuthError('not_found', `No endpoint ${req.method} ${ADMIN_API_PATH}${req.path}`);
  });
  return router;
}

/** `Authorization: Bearer lk_admin_…` → res.locals.adminActor; anything else is left for requireToken. */
function authenticate(s: Services): RequestHandler {
  return async (req, res, next) => {
    const match = /^Bearer ([^\s]+)$/i.exec(req.get('authorization') ?? '');
    const actor = match ? await s.admin.tokens.authenticate(match[1]) : undefined;
    if (actor) {
      res.locals.adminActor = actor;
      res.locals.adminTokenId = actor.actorId;
    }
    next();
  };
}

const requireToken: RequestHandler = (req, res, next) => {
  if (res.locals.adminActor) return next();
  const given = Boolean(req.get('authorization'));
  const description = given
    ? 'The admin token is not valid (revoked, mistyped or not an admin token)'
    : 'An admin token is required (Authorization: Bearer lk_admin_…)';
  next(
    new OAuthError('invalid_token', description, {
      headers: {
        'WWW-Authenticate': given ? `Bearer error="invalid_token", error_description="${description}"` : 'Bearer',
      },
    }),
  );
};
