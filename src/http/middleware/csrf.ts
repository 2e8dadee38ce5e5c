import type { Request, RequestHandler, Response } from 'express';
import type { Config } from '../../config';
import { createKeyedDigest } from '../../crypto/keyed-digest';
import { safeEqual } from '../../crypto/digest';
import { randomToken } from '../../crypto/random';
import { OAuthError } from '../../errors';
import { holdsState, sessionCsrfToken } from '../session/browser-session';

/**
 * CSRF on every hosted form, in one of two forms:
 * - a browser whose session holds something keeps a synchroniser token in it (one random value
 *   per session, kept across the sign-in's new session id);
 * - an anonymous browser, which must not cost a session row, gets a signed
 *   double-submit token: a random nonce in an HttpOnly cookie, and in the form HMAC(key, nonce)
 *   under a key derived from MASTER_KEY. A cross-site page can neither read the form nor compute
 *   the HMAC for a nonce, so it cannot present a matching pair. Under https the cookie is
 *   `__Host-` prefixed: no sibling subdomain and no plain-http response can plant a nonce.
 * A POST passes with either (a form rendered before the session existed stays valid after).
 */
interface CsrfCookie {
  name: string;
  secure: boolean;
  maxAgeMs: number;
  sign: (nonce: string) => string;
}

declare global {
  namespace Express {
    interface Locals {
      csrfCookie?: CsrfCookie;
    }
  }
}

const NONCE = /^[A-Za-z0-9_-]{43}$/; // randomToken(32)

/** The anonymous forms' cookie settings and key; mounted with the session (middleware/session.ts). */
export function csrfCookie(config: Config): RequestHandler {
  const secure = config.baseUrl.startsWith('https://');
  const settings: CsrfCookie = {
    name: secure ? '__Host-latchkey.csrf' : 'latchkey.csrf',
    secure,
    maxAgeMs: config.sessionTtlSeconds * 1000,
    sign: createKeyedDigest(config.masterKey!, 'csrf-double-submit'),
  };
  return (_req, res, next) => {
    res.locals.csrfCookie = settings;
    next();
  };
}

function settingsOf(res: Response): CsrfCookie {
  if (!res.locals.csrfCookie) throw new Error('CSRF used on a route without the browser session middleware');
  return res.locals.csrfCookie;
}

/** The nonce the browser sent, if well-formed. */
function sentNonce(req: Request, c: CsrfCookie): string | undefined {
  const value = (req.cookies as Record<string, unknown> | undefined)?.[c.name];
  return typeof value === 'string' && NONCE.test(value) ? value : undefined;
}

/** Puts the form token in res.locals.csrfToken. */
export const issueCsrf: RequestHandler = (req, res, next) => {
  if (holdsState(req.session)) {
    res.locals.csrfToken = sessionCsrfToken(req);
    return next();
  }
  const c = settingsOf(res);
  let nonce = sentNonce(req, c);
  if (!nonce) {
    nonce = randomToken(32);
    res.cookie(c.name, nonce, { httpOnly: true, sameSite: 'lax', secure: c.secure, path: '/', maxAge: c.maxAgeMs });
  }
  res.locals.csrfToken = c.sign(nonce);
  next();
};

/** Every form POST: the session's token, or a double-submit token matching the request's own cookie. */
export const requireCsrf: RequestHandler = (req, res, next) => {
  const sent = (req.body as Record<string, unknown> | undefined)?._csrf;
  const inSession = req.session?.csrf;
  const nonce = sentNonce(req, settingsOf(res));
  const ok =
    typeof sent === 'string' &&
    ((inSession !== undefined && safeEqual(sent, inSession)) ||
      (nonce !== undefined && safeEqual(sent, settingsOf(res).sign(nonce))));
  if (!ok)
    throw new OAuthError('invalid_request', 'This form has expired. Go back, reload the page and try again.', {
      status: 403,
    });
  next();
};
