import type { RequestHandler } from 'express';
import helmet from 'helmet';

/** The JSON endpoints: no page is ever rendered there, so a page's CSP and friends are moot. */
const API_PATHS = new Set([
  '/.well-known/openid-configuration', '/oauth/jwks', '/oauth/token', '/oauth/userinfo', '/oauth/introspect', '/oauth/revoke', '/healthz', '/readyz',
]);

/**
 * helmet's full set on every page; on the hot JSON endpoints only the headers that matter for
 * JSON (nosniff, no referrer, no framing, HSTS behind https), set at once from a fixed object.
 */
export function securityHeaders(isHttps: boolean): RequestHandler {
  const pages = helmet({
    contentSecurityPolicy: { directives: { 'form-action': null, 'script-src': ["'none'"], 'img-src': ["'self'", 'data:', 'https:'] } },
  });
  const api: Record<string, string> = {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    ...(isHttps ? { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' } : {}),
  };
  return (req, res, next) => {
    if (!API_PATHS.has(req.path)) return pages(req, res, next);
    for (const name in api) res.setHeader(name, api[name]);
    next();
  };
}
