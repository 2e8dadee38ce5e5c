import express, { type RequestHandler } from 'express';

/**
 * Express 5's `req.query` and `req.ip` are getters that work again on every read (the query string
 * parsed, X-Forwarded-For walked against TRUST_PROXY); a request reads each several times (the
 * rate limiter, resolvePlatform, the route, the logs). Each is worked out once and kept: the
 * address for the whole request (the trusted proxies are the app's setting), the query for as long
 * as `req.url` stays the same (the issuer path rewrites it, adding `platform_guid`).
 */
export const memoizeRequestGetters: RequestHandler = (req, _res, next) => {
  let query: { url: string; value: unknown } | undefined;
  Object.defineProperty(req, 'query', {
    configurable: true,
    enumerable: true,
    get() {
      const held = query;
      if (held && held.url === this.url) return held.value;
      const value = parseQuery.call(this);
      query = { url: this.url, value };
      return value;
    },
  });
  Object.defineProperty(req, 'ip', {
    configurable: true,
    enumerable: true,
    get() {
      const value = addressOf.call(this);
      Object.defineProperty(this, 'ip', { value, configurable: true, enumerable: true, writable: true });
      return value;
    },
  });
  next();
};

/** Express's own getters, from its request prototype. */
function expressGetter(name: 'query' | 'ip'): () => unknown {
  const getter = Object.getOwnPropertyDescriptor(express.request, name)?.get;
  if (!getter) throw new Error(`express.request has no ${name} getter`);
  return getter;
}
const parseQuery = expressGetter('query');
const addressOf = expressGetter('ip');
