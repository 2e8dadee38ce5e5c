import type { RequestHandler } from 'express';

/** The pages a browser opens (beside `/`): the session cookie, the CSP and passkeys belong to one host. */
const PAGE_PREFIXES = ['/oauth/authorize', '/oauth/logout', '/interaction', '/account', '/password', '/verify-email', '/dev'];
const UPSTREAM_CALLBACK = /^\/platforms\/[^/]+\/upstream\/callback$/;

export const isHostedPage = (path: string): boolean =>
  path === '/' || UPSTREAM_CALLBACK.test(path) || PAGE_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));

/** Whether `host` (a Host header: name and optional port) names BASE_URL's host; the default port may be left out. */
function isBaseHost(base: URL, host: string): boolean {
  try {
    return new URL(`${base.protocol}//${host}`).host === base.host;
  } catch {
    return false; // not a host at all: left to the routes
  }
}

/**
 * Development only (docs/decisions.md): a hosted page opened on another name for this server
 * (`127.0.0.1` for `localhost`, the demo client's loopback redirect URI) is sent to the same path
 * and query on BASE_URL's origin, so one browser keeps one session cookie, the pages' CSP allows
 * their own avatars, and passkeys see the relying party's host. API endpoints answer on any host.
 */
export function developmentHostRedirect(baseUrl: string): RequestHandler {
  const base = new URL(baseUrl);
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !isHostedPage(req.path)) return next();
    const host = req.host; // Express 5: Host (or X-Forwarded-Host from a trusted proxy), with its port
    if (!host || isBaseHost(base, host)) return next();
    res.set('Cache-Control', 'no-store').redirect(302, `${base.origin}${req.originalUrl}`);
  };
}
