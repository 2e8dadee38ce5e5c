import type { RequestHandler } from 'express';
import { invalidRequest } from '../../errors';

/** Leaves room for cookies and other headers under Node's 16 KiB header limit, and fits common proxies. */
const MAX_REDIRECT_URL = 8192;

/**
 * A browser endpoint that accepts a form POST (OIDC Core 3.1.2.1 for authorize, RP-Initiated
 * Logout §2 for logout) answers it with 303 to the same request as a GET, mounted before the
 * browser session. A cross-site form POST arrives without the SameSite=Lax session
 * cookie: handled in place it would act for a browser with no accounts (and a new session's cookie
 * would replace the browser's). The top-level GET that follows does carry the cookie. Every POST is
 * redirected, not only cookie-less or cross-site ones: one rule, no header guessing, and the GET
 * applies every check. Repeated parameters stay repeated (invalid_request there); platform_guid
 * may sit in the query. Unknown parameters are dropped when the URL would grow too long.
 */
export function redirectPostToGet(path: string, isKnown: (name: string) => boolean, tooLarge: string): RequestHandler {
  return (req, res) => {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries((req.body ?? {}) as Record<string, unknown>)) {
      for (const v of [value].flat()) if (typeof v === 'string') query.append(name, v);
    }
    for (const v of [req.query.platform_guid].flat()) {
      if (typeof v === 'string' && !query.getAll('platform_guid').includes(v)) query.append('platform_guid', v); // different → repeated → refused
    }
    const url = () => `${path}?${query}`;
    if (url().length > MAX_REDIRECT_URL)
      for (const name of [...new Set(query.keys())]) if (!isKnown(name)) query.delete(name);
    if (url().length > MAX_REDIRECT_URL) throw invalidRequest(tooLarge);
    res.set('Cache-Control', 'no-store').redirect(303, url());
  };
}
