import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import type { Pool } from 'pg';
import type { Services } from '../../../services';
import type { HttpDeps } from '../../http-deps';
import { OAuthError } from '../../../errors';
import { issueCsrf, requireCsrf } from '../../middleware/csrf';
import { denyFraming } from '../../middleware/security-headers';
import type { RateLimits } from '../../middleware/rate-limit';
import { consoleSignInRouter } from './sign-in.router';
import { consolePlatformsRouter } from './platforms.router';
import { consoleClientsRouter } from './clients.router';
import { consoleUsersRouter } from './users.router';
import { consoleKeysRouter } from './keys.router';
import { consoleRateLimitsRouter } from './rate-limits.router';
import { consoleMailRouter } from './mail.router';
import { consoleAuditRouter } from './audit.router';
import { consoleAccountRouter } from './account.router';
import { consoleUpstreamProvidersRouter } from './upstream-providers.router';
import { consoleBrandingRouter } from './branding.router';
import { consoleResourcesRouter } from './resources.router';
import { consoleRegistrationTokensRouter } from './registration-tokens.router';
import { LOGO_MAX_BYTES } from '../../../domain/branding';
import { multipartForm } from '../../request/multipart';
import { operatorActor, requireOperator } from './operator';
import { renderConsole, type ConsoleNavEntry } from './render';
import { consoleSessionMiddleware } from './session';

/**
 * The console's screens, in navigation order. A new screen is one router file under
 * src/http/admin/console/*.router.ts (its routes in full, /admin/… or /admin/platforms/:platformId/…),
 * one view under views/admin/ rendered with renderConsole, and one line here. A `platform` screen's
 * routes find the platform, already scope-checked, in res.locals.consolePlatform.
 */
const SCREENS: Array<ConsoleNavEntry & { router: (s: Services, deps: HttpDeps) => Router }> = [
  { label: 'Platforms', section: 'global', path: '/platforms', router: consolePlatformsRouter },
  { label: 'Audit log', section: 'global', path: '/audit', router: consoleAuditRouter },
  { label: 'Clients', section: 'platform', path: '/clients', router: consoleClientsRouter },
  { label: 'Users', section: 'platform', path: '/users', router: consoleUsersRouter },
  {
    label: 'Upstream providers',
    section: 'platform',
    path: '/upstream-providers',
    router: consoleUpstreamProvidersRouter,
  },
  { label: 'Resources', section: 'platform', path: '/resources', router: consoleResourcesRouter },
  { label: 'Keys', section: 'platform', path: '/keys', router: consoleKeysRouter },
  {
    label: 'Registration tokens',
    section: 'platform',
    path: '/registration-tokens',
    router: consoleRegistrationTokensRouter,
  },
  { label: 'Rate limits', section: 'platform', path: '/rate-limits', router: consoleRateLimitsRouter },
  { label: 'Branding', section: 'platform', path: '/branding', router: consoleBrandingRouter },
  { label: 'Mail', section: 'platform', path: '/mail', router: consoleMailRouter },
];

/**
 * The admin console at /admin (docs/decisions.md, "Console"), apart from the admin API under /admin/api: no-store
 * and no framing (its 429 too), its own session cookie, the hosted pages' per-source rate limit,
 * CSRF on every POST, and an operator past both factors on every page but the sign-in's.
 */
export function adminConsole(s: Services, deps: HttpDeps, sessionPool: Pool, rateLimit: RateLimits): Router {
  const r = Router();
  r.use('/admin/api', (_req, _res, next) => next('router'));
  r.use('/admin', consoleHeaders, rateLimit.hostedPages, ...consoleSessionMiddleware(deps.config, sessionPool), nav);
  r.use(consoleSignInRouter(s, deps));
  // The logo upload is multipart: read before the CSRF check, which needs its `_csrf` field (room above the limit: an oversized file gets the form's message).
  r.post('/admin/platforms/:platformId/branding/logo', ...multipartForm('logo', LOGO_MAX_BYTES * 4));
  r.use('/admin', requireOperator(s, deps), issueCsrf, (req, _res, next) =>
    req.method === 'POST' ? requireCsrf(req, _res, next) : next(),
  );
  r.get('/admin', (_req, res) => res.redirect(303, '/admin/platforms'));
  r.use('/admin/platforms/:platformId', loadPlatform(s));
  r.get('/admin/platforms/:platformId', (req, res) =>
    res.redirect(
      303,
      `/admin/platforms/${req.params.platformId}${SCREENS.find((e) => e.section === 'platform')!.path}`,
    ),
  );
  for (const screen of SCREENS) r.use(screen.router(s, deps));
  r.use(consoleAccountRouter(s)); // "Your account": linked from the header's email, not a screen
  r.use('/admin', (req) => {
    throw new OAuthError('not_found', `No page ${req.method} ${req.originalUrl.split('?')[0]}`);
  });
  r.use('/admin', consoleErrors);
  return r;
}

/** Every console response: never cached, never framed. */
const consoleHeaders: RequestHandler = (_req, res, next) => {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  denyFraming(res);
  next();
};

const nav: RequestHandler = (_req, res, next) => {
  res.locals.consoleNav = SCREENS.map(({ label, section, path }) => ({ label, section, path }));
  next();
};

/** A platform outside the operator's scope is "not found", like one that does not exist. */
function loadPlatform(s: Services): RequestHandler {
  return async (req, res, next) => {
    const platform = await s.admin.platforms.get(operatorActor(req, res), String(req.params.platformId));
    res.locals.consolePlatform = { id: platform.id, name: platform.name, signingProfile: platform.signingProfile };
    next();
  };
}

/** Errors as console pages: a 4xx OAuthError with its text (unknown page, out of scope, expired form); anything else to the app's handler. */
const consoleErrors: ErrorRequestHandler = (err, req, res, next) => {
  if (!(err instanceof OAuthError) || err.status >= 500 || res.headersSent) return next(err);
  const heading =
    err.status === 404 ? 'Not found' : err.status === 403 ? 'Not allowed' : 'Something is wrong with this request';
  renderConsole(req, res, 'error', { title: heading, heading, message: err.description }, err.status);
};
