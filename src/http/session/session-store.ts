import session, { type SessionData } from 'express-session';
import connectPgSimple from 'connect-pg-simple';
import type { Pool } from 'pg';
import { ASYNC_COMMIT } from '../../db/async-commit';

/** Sessions whose next save must reach the disk before it is acknowledged (see saveDurably). */
const durableSaves = new WeakSet<object>();

/**
 * The next save of this session commits durably: for a change that takes something away (an
 * account signed out), which a database crash must not undo. Every other save is asynchronous.
 */
export function saveDurably(browserSession: object): void {
  durableSaves.add(browserSession);
}

/**
 * connect-pg-simple's store (its reads, its table) with its two writes committed asynchronously
 * (src/db/async-commit.ts): a browser session's writes during a sign-in have no effect of their
 * own until the code or token it leads to commits durably, which flushes them with it, so a flow
 * costs durable commits only for what it issues (docs/decisions.md, "Durable commits per
 * sign-in"). A database crash may forget the last moments of session writes: the browser then
 * starts its sign-in again. A sign-out's save is durable (saveDurably).
 */
export function createBrowserSessionStore(pool: Pool, options: connectPgSimple.PGStoreOptions) {
  const PgStore = connectPgSimple(session);
  class BrowserSessionStore extends PgStore {
    override set(sid: string, data: SessionData, callback?: (err?: unknown) => void): void {
      const commit = durableSaves.delete(data) ? '' : ` FROM ${ASYNC_COMMIT}`;
      const expires = data.cookie?.expires ? new Date(data.cookie.expires).getTime() : Date.now() + 86_400_000;
      pool
        .query(
          `INSERT INTO session (sess, expire, sid) SELECT $1, to_timestamp($2), $3${commit}
           ON CONFLICT (sid) DO UPDATE SET sess = $1, expire = to_timestamp($2)`,
          [data, Math.ceil(expires / 1000), sid],
        )
        .then(
          () => callback?.(),
          (err: unknown) => callback?.(err),
        );
    }

    override destroy(sid: string, callback?: (err?: unknown) => void): void {
      pool.query(`DELETE FROM session WHERE sid = $1 AND EXISTS (SELECT 1 FROM ${ASYNC_COMMIT})`, [sid]).then(
        () => callback?.(),
        (err: unknown) => callback?.(err),
      );
    }
  }
  return new BrowserSessionStore({ ...options, pool });
}
