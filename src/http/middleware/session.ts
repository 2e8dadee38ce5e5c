import type { RequestHandler, Response } from 'express';
import session from 'express-session';
import cookieParser from 'cookie-parser';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import { holdsState, INTERACTION_TTL_SECONDS } from '../session/browser-session';
import { csrfCookie } from './csrf';
import { createBrowserSessionStore } from '../session/session-store';

/**
 * One cookie-backed server session per browser, stored in Postgres, but only once it
 * holds something: an anonymous page view costs no row. A new session lives an hour
 * (cookie and row), enough for an authorization in progress; a sign-in extends it to
 * SESSION_TTL_SECONDS (rememberSignIn). Also parses cookies for the anonymous forms' CSRF cookie.
 */
export function sessionMiddleware(config: Config, pool: Pool): RequestHandler[] {
  const secure = config.baseUrl.startsWith('https://');
  const signedInMs = config.sessionTtlSeconds * 1000;
  const expressSession = session({
    name: 'latchkey.sid',
    secret: config.sessionSecret!,
    // disableTouch: the cookie is not rolling, so a row's expiry is the cookie's from its last save;
    // extending the row on every unchanged request would be a durable write that buys nothing.
    store: createBrowserSessionStore(pool, {
      tableName: 'session',
      createTableIfMissing: false,
      pruneSessionInterval: false,
      disableTouch: true,
    }),
    resave: false,
    saveUninitialized: false,
    rolling: false,
    proxy: secure ? true : undefined,
    cookie: {
      httpOnly: true,
      sameSite: 'lax',
      secure,
      maxAge: Math.min(INTERACTION_TTL_SECONDS * 1000, signedInMs),
      path: '/',
    },
  });
  const lifetimes: RequestHandler = (_req, res, next) => {
    res.locals.signedInSessionMs = signedInMs;
    next();
  };
  return [cookieParser(), csrfCookie(config), lifetimes, expressSession, storeOnlyWithState];
}

/**
 * A session that arrived empty (no cookie, an unknown or forged one) and still holds nothing when
 * the response ends is dropped before express-session sees it: no row, no Set-Cookie. So anything
 * that writes an empty value by accident (`accounts: { P: [] }`) cannot cost a row either.
 */
const storeOnlyWithState: RequestHandler = (req, res, next) => {
  if (!req.session || holdsState(req.session)) return next();
  const end = res.end as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    if (!holdsState(req.session)) (req as { session?: unknown }).session = null; // express-session: no session, nothing saved
    return end.apply(res, args);
  }) as typeof res.end;
  next();
};

/**
 * express-session writes the response headers before its store write finishes, and a browser
 * follows a redirect as soon as it sees them: save the session first, then redirect. A session
 * holding nothing is not saved (storeOnlyWithState drops it, or express-session writes it at the end).
 */
export const saveSessionBeforeRedirect: RequestHandler = (req, res, next) => {
  const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
  res.redirect = ((...args: unknown[]) => {
    if (!req.session || !holdsState(req.session)) return redirect(...args);
    req.session.save((err) => (err ? next(err) : redirect(...args)));
  }) as typeof res.redirect;
  next();
};
