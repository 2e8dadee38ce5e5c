import type { RequestHandler } from 'express';
import session from 'express-session';
import connectPgSimple from 'connect-pg-simple';
import type { Pool } from 'pg';
import type { Config } from '../../config';

/** One cookie-backed server session per browser, stored in Postgres (DESIGN §9). */
export function sessionMiddleware(config: Config, pool: Pool) {
  const PgStore = connectPgSimple(session);
  const secure = config.baseUrl.startsWith('https://');
  return session({
    name: 'latchkey.sid',
    secret: config.sessionSecret!,
    store: new PgStore({ pool, tableName: 'session', createTableIfMissing: false, pruneSessionInterval: false }),
    resave: false,
    saveUninitialized: false,
    rolling: false,
    proxy: secure ? true : undefined,
    cookie: { httpOnly: true, sameSite: 'lax', secure, maxAge: config.sessionTtlSeconds * 1000, path: '/' },
  });
}

/**
 * express-session writes the response headers before its store write finishes, and a browser
 * follows a redirect as soon as it sees them: save the session first, then redirect.
 */
export const saveSessionBeforeRedirect: RequestHandler = (req, res, next) => {
  const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
  res.redirect = ((...args: unknown[]) => {
    if (!req.session) return redirect(...args);
    req.session.save((err) => (err ? next(err) : redirect(...args)));
  }) as typeof res.redirect;
  next();
};
