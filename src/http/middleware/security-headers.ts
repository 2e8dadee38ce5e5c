import type { RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { rootFormOf } from '../surface';

declare global {
  namespace Express {
    interface Locals {
      /** The page loads the passkey scripts (allowPasskeyScripts; read by views/partials/head.ejs). */
      passkeyScripts?: boolean;
      /** Other scripts of ours the page loads from /static/<name>.js (allowPageScript; read by views/partials/head.ejs). */
      pageScripts?: string[];
    }
  }
}

/** The JSON endpoints: no page is ever rendered there, so a page's CSP and friends are moot. */
const API_PATHS = new Set([
  '/.well-known/openid-configuration',
  '/oauth/jwks',
  '/oauth/token',
  '/oauth/userinfo',
  '/oauth/introspect',
  '/oauth/revoke',
  '/healthz',
  '/readyz',
]);

/**
 * helmet's full set on every page; on the hot JSON endpoints only the headers that matter for
 * JSON (nosniff, no referrer, no framing, HSTS behind https), set at once from a fixed object.
 * Pages default to `Cache-Control: no-store`: they carry forms, CSRF tokens or
 * personal data, and a page that forgets to say so must not end up in a shared cache. What may be
 * cached (static files, avatars, pictures) sets its own header.
 */
export function securityHeaders(isHttps: boolean): RequestHandler {
  const pages = helmet({
    // form-action 'self': a hosted form posts only here (allowFormRedirectTo widens it per page).
    contentSecurityPolicy: {
      directives: {
        'form-action': ["'self'"],
        'script-src': ["'none'"],
        'img-src': ["'self'", 'data:', 'https:'],
        // Only behind https: over plain http (a LAN address, a first try) it would send the browser
        // to https for the stylesheet and every link, and the pages break.
        'upgrade-insecure-requests': isHttps ? [] : null,
      },
    },
  });
  const api: Record<string, string> = {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    ...(isHttps ? { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' } : {}),
  };
  return (req, res, next) => {
    if (!API_PATHS.has(rootFormOf(req.path))) {
      // serve-static keeps a Cache-Control already set, so static files are left alone here.
      if (!req.path.startsWith('/static/')) res.setHeader('Cache-Control', 'no-store');
      return pages(req, res, next);
    }
    for (const name in api) res.setHeader(name, api[name]);
    next();
  };
}

/**
 * A response never meant to be framed (the admin console): CSP `frame-ancestors 'none'` and
 * `X-Frame-Options: DENY` instead of helmet's same-origin defaults, so not even a page of this
 * origin can frame it (clickjacking an operator's forms).
 */
export function denyFraming(res: Response): void {
  const csp = res.getHeader('Content-Security-Policy');
  if (typeof csp === 'string')
    res.setHeader('Content-Security-Policy', csp.replace(/(^|;)frame-ancestors [^;]*/, "$1frame-ancestors 'none'"));
  res.setHeader('X-Frame-Options', 'DENY');
}

/**
 * Chromium applies form-action to every redirect that follows a form POST, so a page whose form may
 * end at the client (the authorization response after sign-in, consent or the chooser; the
 * post-logout redirect) allows that one target on that response only: its origin, or its scheme for
 * a native app's custom scheme or an IPv6 literal (CSP host sources cannot express those).
 */
export function allowFormRedirectTo(res: Response, uri: string): void {
  const source = cspSource(uri);
  const csp = res.getHeader('Content-Security-Policy');
  if (!source || typeof csp !== 'string') return;
  res.setHeader('Content-Security-Policy', csp.replace(/(^|;)form-action 'self'/, `$1form-action 'self' ${source}`));
}

function cspSource(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  // Only characters that cannot end a source or a directive (a host may hold ";" or ",").
  if ((url.protocol === 'https:' || url.protocol === 'http:') && /^[a-z0-9.-]+$/.test(url.hostname)) return url.origin;
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
}

/**
 * The pages with passkey buttons (account page, sign-in, second factor) load two scripts of ours:
 * the @simplewebauthn/browser bundle and public/passkeys.js. Only those pages get
 * `script-src 'self'` (a CSP source cannot name single files without hashes that browsers apply
 * unevenly to external scripts); every other page keeps `script-src 'none'`. No inline script or
 * handler is ever allowed (script-src-attr 'none' stays). The head partial adds the two tags.
 */
export function allowPasskeyScripts(res: Response): void {
  const csp = res.getHeader('Content-Security-Policy');
  if (typeof csp === 'string')
    res.setHeader('Content-Security-Policy', csp.replace(/(^|;)script-src 'none'/, "$1script-src 'self'"));
  res.locals.passkeyScripts = true;
}

/**
 * A page that loads one of our small progressive-enhancement scripts (public/<name>.js, e.g. the
 * show-password toggle): like allowPasskeyScripts, `script-src 'self'` on that response only, no
 * inline script; the head partial adds the tag. `name` is a fixed file name of ours, never input.
 */
export function allowPageScript(res: Response, name: 'password-toggle'): void {
  const csp = res.getHeader('Content-Security-Policy');
  if (typeof csp === 'string')
    res.setHeader('Content-Security-Policy', csp.replace(/(^|;)script-src 'none'/, "$1script-src 'self'"));
  res.locals.pageScripts = [...new Set([...(res.locals.pageScripts ?? []), name])];
}

/**
 * Front-Channel Logout 1.0 (§3): the signed-out page loads each application's logout URL in a hidden
 * iframe, so that response alone gets `frame-src` with those origins (by default frames fall back to
 * default-src 'self'). Only a URL whose origin a CSP source can name exactly is framed; the ones
 * allowed are returned (the others would be blocked, so the page leaves them out).
 */
export function allowFramesOf(res: Response, urls: string[]): string[] {
  const csp = res.getHeader('Content-Security-Policy');
  if (typeof csp !== 'string') return [];
  const framed = urls.filter((u) => /^https?:\/\//.test(cspSource(u) ?? ''));
  if (framed.length === 0) return [];
  const origins = [...new Set(framed.map((u) => cspSource(u)!))];
  const existing = /(^|;)frame-src ([^;]*)/.exec(csp);
  res.setHeader(
    'Content-Security-Policy',
    existing
      ? csp.replace(
          /(^|;)frame-src ([^;]*)/,
          (_m, lead: string, sources: string) =>
            `${lead}frame-src ${[...new Set([...sources.split(' '), ...origins])].join(' ')}`,
        )
      : `${csp};frame-src ${origins.join(' ')}`,
  );
  return framed;
}
