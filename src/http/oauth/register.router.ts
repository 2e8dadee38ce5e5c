import express, { Router, type Request, type RequestHandler } from 'express';
import { invalidClientMetadata } from '../../errors';
import { issuerOf } from '../../domain/platform';
import { presentClientInformation } from '../../presenters/client-registration.presenter';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { RateLimits } from '../middleware/rate-limit';
import { noStore } from '../middleware/no-store';
import { resolvePlatform } from '../middleware/resolve-platform';
import { auditContext } from '../request/audit-context';

/** Client metadata is small: a registration larger than this is refused (413) before it is parsed. */
const BODY_LIMIT = '16kb';

const parseJson = express.json({ limit: BODY_LIMIT, strict: true, type: 'application/json' });

/** RFC 7591 §3: the body is client metadata as JSON; anything else is invalid_client_metadata (too large: 413). */
const jsonBody: RequestHandler = (req, res, next) => {
  if (!req.is('application/json'))
    throw invalidClientMetadata('the body must be client metadata as JSON (Content-Type: application/json)');
  parseJson(req, res, (err?: unknown) =>
    next(
      (err as { type?: string } | undefined)?.type === 'entity.parse.failed'
        ? invalidClientMetadata('the body is not valid JSON')
        : err,
    ),
  );
};

/** The Bearer token of the Authorization header (RFC 6750 §2.1), or undefined. */
function bearerOf(req: Request): string | undefined {
  const m = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(req.get('authorization') ?? '');
  return m?.[1];
}

/**
 * POST /oauth/register (RFC 7591) and the client configuration endpoint
 * /oauth/register/{client_id} (RFC 7592: GET, PUT, DELETE) of a standard platform whose
 * registration policy allows it; `registration_client_uri` is under the platform's issuer.
 */
export function registerRouter(s: Services, deps: HttpDeps, rateLimit: RateLimits): Router {
  const r = Router();
  const clientUri = (req: Request, clientId: string) =>
    `${issuerOf(deps.config.baseUrl, req.res!.locals.platform)}/oauth/register/${clientId}`;
  const enabled: RequestHandler = (_req, res, next) => {
    s.registration.assertEnabled(res.locals.platform);
    next();
  };
  const anonymous = (req: Request) => auditContext(req, { type: 'anonymous' });

  r.post(
    '/oauth/register',
    noStore,
    resolvePlatform(s),
    enabled,
    rateLimit.registration,
    jsonBody,
    async (req, res) => {
      const info = await s.registration.register(res.locals.platform, bearerOf(req), req.body, anonymous(req));
      res.status(201).json(presentClientInformation(info, clientUri(req, info.client.id)));
    },
  );

  const configuration = '/oauth/register/:client_id';
  r.get(configuration, noStore, resolvePlatform(s), enabled, async (req, res) => {
    const info = await s.registration.read(res.locals.platform, String(req.params.client_id), bearerOf(req));
    res.json(presentClientInformation(info, clientUri(req, info.client.id)));
  });
  r.put(configuration, noStore, resolvePlatform(s), enabled, jsonBody, async (req, res) => {
    const info = await s.registration.replace(
      res.locals.platform,
      String(req.params.client_id),
      bearerOf(req),
      req.body,
      anonymous(req),
    );
    res.json(presentClientInformation(info, clientUri(req, info.client.id)));
  });
  r.delete(configuration, noStore, resolvePlatform(s), enabled, async (req, res) => {
    await s.registration.remove(res.locals.platform, String(req.params.client_id), bearerOf(req), anonymous(req));
    res.status(204).end();
  });
  return r;
}
