import type { RequestHandler } from 'express';
import { isHostedPagePath } from '../surface';

const isLoopbackName = (hostname: string) =>
  hostname === 'localhost' ||
  hostname.endsWith('.localhost') ||
  hostname === '[::1]' ||
  /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/**
 * Whether `host` (a Host header) is this listener under another loopback name than BASE_URL's:
 * both names loopback, same port. Only then is the redirect certain to reach this process; a
 * proxy in front (another port, or a Host it rewrites) or a LAN address is left alone, so no
 * redirect can loop.
 */
function isOtherLoopbackName(base: URL, host: string): boolean {
  let url: URL;
  try {
    url = new URL(`${base.protocol}//${host}`);
  } catch {
    return false; // not a host at all: left to the routes
  }
  return (
    url.host !== base.host && url.port === base.port && isLoopbackName(url.hostname) && isLoopbackName(base.hostname)
  );
}

/**
 * Development only (docs/decisions.md): a hosted page opened on another loopback name for this
 * server (`127.0.0.1` for `localhost`: the demo client's redirect URI must name the IP) is sent to
 * the same path and query on BASE_URL's origin, so one browser keeps one session cookie, the
 * pages' CSP allows their own avatars, and passkeys see the relying party's host. API endpoints
 * and form posts answer on any host.
 */
export function developmentHostRedirect(baseUrl: string): RequestHandler {
  const base = new URL(baseUrl);
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !isHostedPagePath(req.path)) return next();
    const host = req.host; // Express 5: Host (or X-Forwarded-Host from a trusted proxy), with its port
    if (!host || !isOtherLoopbackName(base, host)) return next();
    res.set('Cache-Control', 'no-store').redirect(302, `${base.origin}${req.originalUrl}`);
  };
}
