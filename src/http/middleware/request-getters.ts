import express, { type RequestHandler } from 'express';

/**
 * Express 5's `req.query` and `req.ip` are getters that work again on every read (the query string
 * parsed, X-Forwarded-For walked against TRUST_PROXY); a request reads each several times (the
 * rate limiter, resolvePlatform, the route, the logs). Each is worked out on its first read and
 * kept for the rest of the request. Neither can change within one: the query string is never
 * rewritten (the issuer path keeps it), and the trusted proxies are the app's setting.
 */
export const memoizeRequestGetters: RequestHandler = (req, _res, next) => {
  for (const name of MEMOIZED) {
    const compute = GETTERS[name];
    Object.defineProperty(req, name, {
      configurable: true,
      enumerable: true,
      get() {
        const value = compute.call(this);
        Object.defineProperty(this, name, { value, configurable: true, enumerable: true, writable: true });
        return value;
      },
    });
  }
  next();
};

const MEMOIZED = ['query', 'ip'] as const;
/** Express's own getters, from its request prototype. */
const GETTERS = Object.fromEntries(
  MEMOIZED.map((name) => {
    const getter = Object.getOwnPropertyDescriptor(express.request, name)?.get;
    if (!getter) throw new Error(`express.request has no ${name} getter`);
    return [name, getter];
  }),
) as Record<(typeof MEMOIZED)[number], () => unknown>;
