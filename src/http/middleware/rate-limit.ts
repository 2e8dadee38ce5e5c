import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import { RATE_LIMITS, type Platform } from '../../domain/platform';
import { pageTooManyRequests, tooManyRequests } from './rate-limit-answers';
import { windowLimiter, type CounterBackend, type LimitVerdict } from './rate-limit-store';
import { createRedisCounters } from './rate-limit-store.redis';

export { RATE_LIMITS } from '../../domain/platform';

/**
 * Requests per minute from one source over all hosted pages together (sign-in, sign-up, consent,
 * account, password reset, logout, email verification): far above what a person clicks, even a
 * few dozen behind one NAT, and a wall for scripts. Scaled by RATE_LIMIT_SCALE like the spec's.
 */
const HOSTED_PAGES_PER_MINUTE = 300;

/**
 * Admin API requests per minute: per token once it authenticated (automation may be busy, but one
 * runaway script must not starve the provider), per source address before (token guessing).
 */
const ADMIN_API_PER_MINUTE = { token: 600, source: 60 };

/** Whom an authenticated request is counted against. */
export interface Caller {
  platformId: string;
  clientId: string;
}
export type CallerOf = (req: Request, res: Response) => Caller | undefined;

/** The two halves of a client-keyed limit, placed around authentication in a route. */
export interface ClientLimit {
  /** Right after authentication: counts the request against its caller, or its source address when there is none. */
  authenticated: RequestHandler;
  /** Last in the route: counts a request that failed before `authenticated` against its source address. */
  failed: ErrorRequestHandler;
}

export interface RateLimits {
  /** Discovery, JWKS and authorize: per source address, counted before anything else. */
  (endpoint: string): RequestHandler;
  /** Token, introspect, revoke and userinfo: per client, but only once the client has proved who it is. */
  perClient(endpoint: string, callerOf?: CallerOf): ClientLimit;
  /** The hosted pages: per source address, over the limit a readable 429 page. */
  hostedPages: RequestHandler;
  /** The admin API: per token (`res.locals.adminTokenId`, set by its authentication), else per source. */
  adminApi: RequestHandler;
  /** Dynamic client registration, after resolvePlatform: per source address per platform per hour (REGISTRATION_PER_HOUR). */
  registration: RequestHandler;
  /** Closes the counter store's own connection (Redis), if any. */
  close(): void;
}

/** Counts one request under `key`: `next()` when within the limit, else the 429. */
type Limiter = (key: string, res: Response, next: NextFunction) => void;

/** X-RateLimit-Limit, -Remaining and -Reset (epoch seconds) on every answer of the spec's endpoints. */
function setLimitHeaders(res: Response, v: LimitVerdict) {
  res.setHeader('X-RateLimit-Limit', String(v.limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(v.limit - v.totalHits, 0)));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(v.resetAt / 1000)));
}

const WINDOW_MS = 60_000;
const HOUR_MS = 3_600_000;
/** Overrides set with `platform rate-limit` reach every instance within this. */

/**
 * The client that authenticated with its secret. A public client proves nothing by naming
 * itself (its id is in every authorize URL), so its requests count per source address.
 */
const confidentialClient: CallerOf = (_req, res) => {
  const client = res.locals.client;
  return client?.type === 'confidential' ? { platformId: client.platformId, clientId: client.id } : undefined;
};

/**
 * Limiters over the shared counters (spec Limits). Keys are `endpoint:platform:subject`;
 * the subject is `client:<id>` only for a caller that authenticated, else `ip:<source>`, so nobody
 * can spend another client's bucket or escape their own by naming ids. Scale 0: no limits, no headers.
 */
export function createRateLimits(s: Services, deps: HttpDeps): RateLimits {
  const { config, metrics } = deps;
  const scale = config.rateLimitScale;
  if (!(scale > 0)) return unlimited();

  const warn = throttledWarning(deps);
  const backend: CounterBackend = config.redisUrl ? createRedisCounters(config.redisUrl, warn) : s.rateLimitCounters;
  const nowMs = () => deps.now().getTime();
  const counted = new WeakSet<Request>();
  const limiters = new Map<string, Limiter>();
  const scaled = (perMinute: number) => Math.max(1, Math.round(perMinute * scale));

  // One limiter per endpoint and limit in force (the spec's, or a platform's override); all of them
  // count in the same shared keys, so an override changes the limit, not the count. Our own rather
  // than express-rate-limit's: a request far from its limit is answered without a promise, a
  // validation or a formatted date, so that limits cost nothing measurable (docs/decisions.md,
  // "Ephemeral counters").
  const limiterFor = (endpoint: string, limit: number, answer: 'json' | 'page', windowMs = WINDOW_MS): Limiter => {
    const name = `${endpoint}:${limit}`;
    let limiter = limiters.get(name);
    if (!limiter) {
      const countHit = windowLimiter(backend, limit, windowMs, nowMs);
      limiter = (key, res, next) =>
        countHit(key, (verdict, err) => {
          // Counter store down: fail open, the endpoint answers 503 itself.
          if (!verdict) return void (warn(err), next());
          if (answer === 'json' && !res.headersSent) setLimitHeaders(res, verdict);
          if (verdict.totalHits <= limit) return void next();
          metrics.rateLimitHits.inc({ limit: endpoint });
          const seconds = Math.max(1, Math.ceil((verdict.resetAt - nowMs()) / 1000));
          if (answer === 'json') tooManyRequests(res, seconds);
          else next(pageTooManyRequests(seconds));
        });
      limiters.set(name, limiter);
    }
    return limiter;
  };

  /** Counts `req` once, at the endpoint's limit or its platform's override; `next` unless it answered 429. */
  function count(
    endpoint: string,
    platformId: string | undefined,
    subject: string,
    req: Request,
    res: Response,
    next: NextFunction,
  ) {
    counted.add(req);
    const countFor = (platform: Platform | undefined) => {
      const override = platform?.rateLimitOverrides[endpoint];
      const perMinute = typeof override === 'number' && override > 0 ? override : RATE_LIMITS[endpoint];
      // Unknown platforms share one namespace: inventing platform_guids must not buy fresh buckets.
      limiterFor(endpoint, scaled(perMinute), 'json')(`${endpoint}:${platform?.id ?? '-'}:${subject}`, res, next);
    };
    const cached = platformId === undefined ? { value: undefined } : s.platforms.cachedPlatform(platformId);
    if (cached) return countFor(cached.value);
    s.platforms.findPlatform(platformId!).then(countFor, (err: unknown) => {
      warn(err);
      next();
    });
  }

  const perSource = (endpoint: string): RequestHandler => {
    requireLimit(endpoint);
    return (req, res, next) => count(endpoint, platformGuidOf(req), sourceSubject(req), req, res, next);
  };

  const perClient = (endpoint: string, callerOf: CallerOf = confidentialClient): ClientLimit => {
    requireLimit(endpoint);
    return {
      authenticated: (req, res, next) => {
        const caller = callerOf(req, res);
        if (caller) return count(endpoint, caller.platformId, clientSubject(caller.clientId), req, res, next);
        return count(endpoint, res.locals.platform?.id, sourceSubject(req), req, res, next);
      },
      // Bad input, an unknown platform, failed authentication: the sender's source pays, and once
      // it has spent its bucket it gets the 429 instead of the error.
      failed: (err, req, res, next) => {
        if (counted.has(req)) return next(err);
        return count(endpoint, res.locals.platform?.id, sourceSubject(req), req, res, (limiterError?: unknown) => {
          if (limiterError) warn(limiterError, 'rate limiter failed; the request went on unlimited');
          next(err);
        });
      },
    };
  };

  const hostedPages: RequestHandler = (req, res, next) =>
    limiterFor('pages', scaled(HOSTED_PAGES_PER_MINUTE), 'page')(`pages:-:${sourceSubject(req)}`, res, next);

  const adminApi: RequestHandler = (req, res, next) => {
    const tokenId = res.locals.adminTokenId as string | undefined;
    const key = tokenId ? `admin:-:token:${tokenId}` : `admin:-:${sourceSubject(req)}`;
    const limit = tokenId ? ADMIN_API_PER_MINUTE.token : ADMIN_API_PER_MINUTE.source;
    return limiterFor(tokenId ? 'admin-token' : 'admin-source', scaled(limit), 'json')(key, res, next);
  };

  // After resolvePlatform, keyed by the platform found (other spellings of its id buy no fresh bucket):
  // registering is anonymous, so the source address is the only subject, and an hour the window.
  const registration: RequestHandler = (req, res, next) => {
    const key = `register:${(res.locals.platform as Platform | undefined)?.id ?? '-'}:${sourceSubject(req)}`;
    return limiterFor('register', scaled(config.registrationPerHour), 'json', HOUR_MS)(key, res, next);
  };

  const close = () => backend.close?.();
  return Object.assign(perSource, { perClient, hostedPages, adminApi, registration, close });
}

/** Scale 0: every limiter passes, and sets no header. */
function unlimited(): RateLimits {
  const pass: RequestHandler = (_req, _res, next) => next();
  const passError: ErrorRequestHandler = (err, _req, _res, next) => next(err);
  return Object.assign(() => pass, {
    perClient: () => ({ authenticated: pass, failed: passError }),
    hostedPages: pass,
    adminApi: pass,
    registration: pass,
    close: () => {},
  });
}

function requireLimit(endpoint: string) {
  if (RATE_LIMITS[endpoint] === undefined) throw new Error(`no rate limit is defined for "${endpoint}"`);
}

/** Client ids are lower-case UUIDs; folding any other spelling keeps one bucket per client whatever reaches here. */
export function clientSubject(clientId: string): string {
  return `client:${clientId.toLowerCase()}`;
}

/** Source subjects by address: parsing an address (ipKeyGenerator) was most of a limited request's cost. */
const subjectsByIp = new Map<string, string>();
const SUBJECTS_KEPT = 10_000;

/** req.ip: X-Forwarded-For counts only as far as TRUST_PROXY says. IPv6 by /56, as one customer's prefix. */
export function sourceSubject(req: Pick<Request, 'ip'>): string {
  const ip = req.ip;
  if (!ip) return 'ip:unknown';
  let subject = subjectsByIp.get(ip);
  if (subject === undefined) {
    subject = `ip:${ipKeyGenerator(ip)}`;
    if (subjectsByIp.size >= SUBJECTS_KEPT) subjectsByIp.clear(); // bounded: many addresses just parse again
    subjectsByIp.set(ip, subject);
  }
  return subject;
}

const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** As resolvePlatform reads it: the body's for POST, else the query's; a standard platform's issuer path names it in the path. */
function platformGuidOf(req: Request): string | undefined {
  const fromBody = req.method === 'POST' ? (req.body as Record<string, unknown> | undefined)?.platform_guid : undefined;
  return nonEmpty(req.params?.platform_guid) ?? nonEmpty(fromBody) ?? nonEmpty(req.query?.platform_guid);
}

/** A store outage would log on every request: one warning per 30 s is enough. */
function throttledWarning({ logger }: HttpDeps) {
  let last = 0;
  return (err: unknown, message = 'rate-limit counters unavailable; requests pass unlimited') => {
    const now = Date.now();
    if (now - last < 30_000) return;
    last = now;
    const e = err as { message?: string; code?: string } | undefined;
    logger.warn({ storeError: e?.message, storeErrorCode: e?.code }, message);
  };
}
