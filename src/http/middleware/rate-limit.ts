import { createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator, type AugmentedRequest } from 'express-rate-limit';
import { decodeJwt } from 'jose';
import { OAuthError } from '../../errors';
import type { Services } from '../../services';
import type { Platform } from '../../repositories/platform.repository';
import { SlidingWindowStore, type CounterBackend } from './rate-limit-store';
import { createPostgresCounters } from './rate-limit-store.postgres';
import { createRedisCounters } from './rate-limit-store.redis';

export type RateLimitFactory = (endpoint: string) => RequestHandler;

/** Requests per minute, exactly the spec's table (spec Limits). */
export const RATE_LIMITS: Readonly<Record<string, number>> = {
  discovery: 100,
  authorize: 60,
  token: 120,
  userinfo: 120,
  jwks: 100,
  introspect: 120,
  revoke: 60,
};

const WINDOW_MS = 60_000;
/** Overrides set with `platform rate-limit` reach every instance within this. */
const PLATFORM_CACHE_MS = 30_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Per-endpoint limiter factory (spec Limits; DESIGN §8). Scale 0: no limiting, no headers. */
export function createRateLimits(s: Services): RateLimitFactory {
  const { config, logger } = s.deps;
  const scale = config.rateLimitScale;
  if (!(scale > 0)) return () => (_req, _res, next) => next();

  const warn = throttledWarning(s);
  const backend: CounterBackend = config.redisUrl ? createRedisCounters(config.redisUrl, warn) : createPostgresCounters(s.deps.db);
  const findPlatform = cachedPlatformLookup(s);
  const nowMs = () => s.deps.now().getTime();
  const keys = new WeakMap<Request, string>();

  return (endpoint) => {
    const perMinute = RATE_LIMITS[endpoint];
    if (perMinute === undefined) throw new Error(`no rate limit is defined for "${endpoint}"`);
    // One express-rate-limit instance per limit in force (the spec's, or a platform's override);
    // all of them count in the same shared keys, so an override changes the limit, not the count.
    const limiters = new Map<number, RequestHandler>();
    const limiterFor = (limit: number) => {
      let limiter = limiters.get(limit);
      if (!limiter) {
        limiter = rateLimit({
          windowMs: WINDOW_MS,
          limit,
          store: new SlidingWindowStore(backend, limit, WINDOW_MS, nowMs, `${endpoint}:`),
          keyGenerator: (req) => keys.get(req) ?? '-',
          legacyHeaders: true, // X-RateLimit-Limit/-Remaining/-Reset on every response
          standardHeaders: false,
          retryAfter: (req) => retryAfterSeconds(req, nowMs()),
          handler: (req, res) => tooManyRequests(res, Number(res.getHeader('Retry-After')) || retryAfterSeconds(req, nowMs())),
          passOnStoreError: true, // counter store down: fail open, the endpoint answers 503 itself
          logger: { error: warn, warn },
          // Limiters for overrides are built on their first request, by design.
          validate: { creationStack: false },
        });
        limiters.set(limit, limiter);
      }
      return limiter;
    };

    return async (req, res, next) => {
      let platform: Platform | undefined;
      try {
        platform = await findPlatform(platformGuidOf(req));
      } catch (err) {
        warn(err);
        next();
        return;
      }
      const override = platform?.rateLimitOverrides[endpoint];
      const base = typeof override === 'number' && override > 0 ? override : perMinute;
      // Unknown platforms share one namespace: inventing platform_guids must not buy fresh buckets.
      keys.set(req, `${endpoint}:${platform?.id ?? '-'}:${rateLimitSubject(endpoint, req)}`);
      await limiterFor(Math.max(1, Math.round(base * scale)))(req, res, next);
    };
  };
}

/** Whose bucket a request counts in: the client for authenticated endpoints, else the source IP. */
export function rateLimitSubject(endpoint: string, req: Pick<Request, 'headers' | 'body' | 'ip'>): string {
  let clientId: string | undefined;
  if (endpoint === 'token' || endpoint === 'introspect' || endpoint === 'revoke') {
    clientId = clientIdFromBasic(req.headers.authorization) ?? nonEmpty(req.body?.client_id);
  } else if (endpoint === 'userinfo') {
    clientId = clientIdFromAccessToken(bearerToken(req));
  }
  if (clientId !== undefined) return `client:${clientId.length > 128 ? createHash('sha256').update(clientId).digest('hex') : clientId}`;
  // req.ip: X-Forwarded-For counts only as far as TRUST_PROXY says. IPv6 by /56, as one customer's prefix.
  return `ip:${req.ip ? ipKeyGenerator(req.ip) : 'unknown'}`;
}

/** RFC 6749 §2.3.1: base64 of form-urlencoded `client_id:client_secret`. */
function clientIdFromBasic(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return nonEmpty(decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')));
  } catch {
    return undefined;
  }
}

/** RFC 6750 §2.1: userinfo takes the token from the Authorization header only. */
function bearerToken(req: Pick<Request, 'headers'>): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

/**
 * The access token's client_id, read WITHOUT verification: it only picks the bucket, so a forged
 * claim merely moves its sender into another client's bucket (the endpoint still rejects it).
 */
function clientIdFromAccessToken(token: string | undefined): string | undefined {
  if (!token) return undefined;
  try {
    return nonEmpty(decodeJwt(token).client_id);
  } catch {
    return undefined;
  }
}

const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** As resolvePlatform reads it: the body's for POST, else the query's. */
function platformGuidOf(req: Request): string | undefined {
  const fromBody = req.method === 'POST' ? (req.body as Record<string, unknown> | undefined)?.platform_guid : undefined;
  return nonEmpty(fromBody) ?? nonEmpty(req.query?.platform_guid);
}

function cachedPlatformLookup(s: Services) {
  const cache = new Map<string, { platform: Platform | undefined; until: number }>();
  return async (guid: string | undefined): Promise<Platform | undefined> => {
    if (!guid || !UUID.test(guid)) return undefined;
    const now = Date.now();
    const hit = cache.get(guid);
    if (hit && hit.until > now) return hit.platform;
    const platform = await s.platforms.findPlatform(guid.toLowerCase());
    if (cache.size >= 10_000) cache.clear();
    cache.set(guid, { platform, until: now + PLATFORM_CACHE_MS });
    return platform;
  };
}

/** Whole seconds until the next request is allowed; at least 1. */
function retryAfterSeconds(req: Request, now: number): number {
  const resetTime = (req as AugmentedRequest).rateLimit?.resetTime;
  return Math.max(1, Math.ceil(((resetTime?.getTime() ?? now + WINDOW_MS) - now) / 1000));
}

/**
 * The 429 in the error middleware's exact JSON shape. Written here because the spec wants this
 * JSON body on every limited endpoint, /oauth/authorize included, where that middleware renders HTML.
 */
function tooManyRequests(res: Parameters<RequestHandler>[1], seconds: number) {
  const error = new OAuthError('too_many_requests', `Rate limit exceeded; retry in ${seconds} seconds`, {
    headers: { 'Retry-After': String(seconds) },
  });
  res.status(error.status).set(error.headers).set('Cache-Control', 'no-store');
  res.json({ error: error.code, error_description: error.description });
}

/** A store outage would log on every request: one warning per 30 s is enough. */
function throttledWarning(s: Services) {
  let last = 0;
  return (err: unknown, message = 'rate-limit counters unavailable; requests pass unlimited') => {
    const now = Date.now();
    if (now - last < 30_000) return;
    last = now;
    const e = err as { message?: string; code?: string } | undefined;
    s.deps.logger.warn({ storeError: e?.message, storeErrorCode: e?.code }, message);
  };
}
