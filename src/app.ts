import { memoizeRequestGetters } from './http/middleware/request-getters';
import path from 'node:path';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import type { Notifications } from './db/notifications';
import type { Config } from './config';
import type { Db } from './db';
import { createSealer } from './crypto/seal';
import { OAuthError } from './errors';
import { errorHandler } from './http/errors/error-handler';
import { createServices, type Services } from './services';
import { createMetrics, type Metrics } from './services/metrics';
import type { HttpDeps } from './http/http-deps';
import { requestLogging } from './http/middleware/request-id';
import { requestMetrics } from './http/middleware/request-metrics';
import { securityHeaders } from './http/middleware/security-headers';
import { createRateLimits } from './http/middleware/rate-limit';
import { untrustedProxyWarning } from './http/middleware/untrusted-proxy-warning';
import { developmentHostRedirect } from './http/middleware/development-host';
import { issuerPathEndpoints } from './http/middleware/issuer-path';
import { pathOfTarget } from './http/surface';
import { discoveryRouter } from './http/oauth/discovery.router';
import { jwksRouter } from './http/oauth/jwks.router';
import { healthRouter } from './http/ops/health.router';
import { VERSION } from './version';
import { metricsRouter } from './http/ops/metrics.router';
import { authorizeRouter, redirectAuthorizePost } from './http/oauth/authorize.router';
import { interactionRouter } from './http/interaction/interaction.router';
import { tokenRouter } from './http/oauth/token.router';
import { userinfoRouter } from './http/oauth/userinfo.router';
import { introspectRouter } from './http/oauth/introspect.router';
import { revokeRouter } from './http/oauth/revoke.router';
import { registerRouter } from './http/oauth/register.router';
import { deviceAuthorizationRouter } from './http/oauth/device-authorization.router';
import { deviceRouter } from './http/interaction/device.router';
import { avatarRouter } from './http/site/avatar.router';
import { platformLogoRouter } from './http/site/platform-logo.router';
import { upstreamRouter } from './http/interaction/upstream.router';
import { saveSessionBeforeRedirect, sessionMiddleware } from './http/middleware/session';
import { revalidateAccounts } from './http/middleware/revalidate-accounts';
import { passwordResetRouter } from './http/interaction/password-reset.router';
import { emailVerificationRouter } from './http/interaction/email-verification.router';
import { accountRouter } from './http/account/account.router';
import { accountActionsRouter } from './http/account/account-actions.router';
import { accountMfaRouter } from './http/account/account-mfa.router';
import { accountPictureRouter } from './http/account/account-picture.router';
import { logoutRouter, redirectLogoutPost } from './http/oauth/logout.router';
import { devOutboxRouter } from './http/site/dev-outbox.router';
import { homeRouter } from './http/site/home.router';
import { localeFromRequest } from './http/middleware/locale';
import { DEFAULT_LOCALE } from './domain/locales';
import { translatorFor } from './i18n/catalogs';
import { presentPageBrand } from './presenters/branding.presenter';
import { passkeyAssetsRouter } from './http/site/passkey-assets.router';
import { passkeysRouter } from './http/interaction/passkeys.router';
import { ADMIN_API_PATH, adminApiRouter } from './http/admin/api/admin-api.router';
import { adminConsole } from './http/admin/console/screens';
import './http/locals';

/** The upstream callback is a browser route: it needs the session that holds the pending sign-in. */
const UPSTREAM_CALLBACK_PATH = '/platforms/:guid/upstream/callback';

export interface AppDeps {
  config: Config;
  db: Db;
  /** pg pool for connect-pg-simple (browser sessions). */
  sessionPool: Pool;
  /** LISTEN/NOTIFY for cross-instance cache invalidation; without it nothing is cached. */
  notifications?: Notifications;
  logger: Logger;
  now?: () => Date;
  /** Whether the process is shutting down (/readyz answers 503 then); never, without a server. */
  isDraining?: () => boolean;
}

export interface App {
  app: Express;
  services: Services;
  /** The process's counters: main serves them on METRICS_PORT when set. */
  metrics: Metrics;
  /** Closes what the app opened itself (the Redis connection of the rate limits); not the db or pools it was given. */
  close(): void;
}

/** Builds the Express app and its services; never listens. */
export function createApp(deps: AppDeps): App {
  const { config, db, logger } = deps;
  if (!config.masterKey || !config.sessionSecret)
    throw new Error('createApp needs MASTER_KEY and SESSION_SECRET (see dev-secrets)');
  // Process metrics only where someone can scrape them.
  const metrics = createMetrics({
    db,
    sessionPool: deps.sessionPool,
    processMetrics: Boolean(config.metricsToken || config.metricsPort),
  });
  const now = deps.now ?? (() => new Date());
  const services = createServices(
    { config, db, logger, sealer: createSealer(config.masterKey, config.masterKeyPrevious), now, metrics },
    deps.notifications,
  );
  const http: HttpDeps = { config, now, logger, metrics };
  const rateLimit = createRateLimits(services, http);

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('view engine', 'ejs');
  // Defaults for a page rendered outside renderPage (the 404 page): English, Latchkey's own brand.
  Object.assign(app.locals, { lang: DEFAULT_LOCALE, t: translatorFor(DEFAULT_LOCALE), brand: presentPageBrand(null) });
  app.set('views', path.resolve(__dirname, '..', 'views'));
  // Compiled templates are kept whatever NODE_ENV says (Express caches only in production): `npm start`
  // defaults to development, and recompiling every page and include cost a sign-in flow ~2% of its CPU.
  app.set('view cache', true);
  app.set('query parser', 'simple');
  app.set('etag', false); // JSON answers are no-store; discovery and JWKS carry their own strong ETag

  app.use(memoizeRequestGetters);
  app.use(requestMetrics(metrics));
  app.use(requestLogging(logger));
  app.use(untrustedProxyWarning(config.trustProxy, logger));
  app.use(securityHeaders(config.baseUrl.startsWith('https://')));
  // One host for the pages in development (127.0.0.1 → localhost); production sits behind proxies that name it.
  if (config.nodeEnv === 'development') app.use(developmentHostRedirect(config.baseUrl));
  // A standard platform's /platforms/G/oauth/… served as /oauth/…?platform_guid=G, before anything reads the path.
  app.use(issuerPathEndpoints(services));
  // The hottest GET endpoints first: no body to parse, no static files to look for.
  app.use(discoveryRouter(services, http, rateLimit));
  app.use(jwksRouter(services, http, rateLimit));
  app.use(healthRouter(VERSION, (ms) => services.maintenance.databaseReady(ms), deps.isDraining));
  if (config.metricsToken) app.use(metricsRouter(metrics.registry, config.metricsToken)); // else 404: METRICS_PORT serves it apart
  app.use(passkeyAssetsRouter());
  app.use('/static', express.static(path.resolve(__dirname, '..', 'public'), { maxAge: '1h' }));
  app.use(express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 100 }));

  app.use(tokenRouter(services, rateLimit));
  app.use(userinfoRouter(services, http, rateLimit));
  app.use(introspectRouter(services, rateLimit));
  app.use(revokeRouter(services, rateLimit));
  app.use(registerRouter(services, http, rateLimit)); // standard platforms: RFC 7591/7592, JSON bodies of its own
  app.use(deviceAuthorizationRouter(services, http, rateLimit)); // standard platforms: RFC 8628
  app.use(avatarRouter(services));
  app.use(platformLogoRouter(services)); // uploaded platform logos
  app.use(ADMIN_API_PATH, adminApiRouter(services, http, rateLimit)); // bearer tokens, JSON: never the browser session
  app.use(adminConsole(services, http, deps.sessionPool, rateLimit)); // /admin: its own session cookie, operators only
  // Browser routes only: API endpoints never touch the session store. Every browser route also
  // drops accounts signed out elsewhere (password reset, sign out everywhere).
  app.use(
    ['/interaction', '/account', '/password', '/oauth/logout', '/verify-email', '/device', UPSTREAM_CALLBACK_PATH],
    rateLimit.hostedPages,
  ); // per source, before any session work
  app.post('/oauth/authorize', redirectAuthorizePost); // to the GET before any session work
  app.post('/oauth/logout', redirectLogoutPost); // likewise: a cross-site POST carries no session cookie
  const browserPaths = [
    '/oauth/authorize',
    '/interaction',
    '/account',
    '/password',
    '/oauth/logout',
    '/device',
    UPSTREAM_CALLBACK_PATH,
  ];
  app.use(
    browserPaths,
    sessionMiddleware(config, deps.sessionPool),
    saveSessionBeforeRedirect,
    revalidateAccounts(services),
  );
  app.use(localeFromRequest); // the pages' language
  app.use(authorizeRouter(services, http, rateLimit));
  app.use(interactionRouter(services, http));
  app.use(deviceRouter(services, http)); // BASE_URL/device: the user code, then an interaction (RFC 8628)
  app.use(upstreamRouter(services, http)); // "Continue with …" and the platform's upstream callback
  app.use(passwordResetRouter(services, http));
  app.use(emailVerificationRouter(services));
  app.use(accountRouter(services, http));
  app.use(accountActionsRouter(services, http));
  app.use(accountMfaRouter(services, http));
  app.use(accountPictureRouter(services, http));
  app.use(passkeysRouter(services, http));
  app.use(logoutRouter(services));
  if (!config.isProduction) app.use(devOutboxRouter(services)); // development only: 404 in production
  app.use(homeRouter(config));

  app.use('/oauth', (req) => {
    throw new OAuthError('not_found', `No endpoint ${req.method} ${pathOfTarget(req.originalUrl)}`); // as asked: an issuer path stays one
  });
  app.use((req) => {
    // On a hosted page the error page (translated, with the request id); it shows no description for not_found.
    throw new OAuthError('not_found', `No endpoint ${req.method} ${req.path}`);
  });
  app.use(errorHandler(logger));
  return { app, services, metrics, close: () => rateLimit.close() };
}
