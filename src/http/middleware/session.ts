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
