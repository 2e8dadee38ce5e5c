import type { Queryable } from '../db';

/** One application a browser sign-in session (sid) has signed in to (OIDC Back-/Front-Channel Logout). */
export interface SessionClientRow {
  platformId: string;
  userId: string;
  browserSessionId: string;
  clientId: string;
  sid: string;
  createdAt: Date;
}

const toRow = (r: any): SessionClientRow => ({
  platformId: r.platform_id,
  userId: r.user_id,
  browserSessionId: r.browser_session_id,
  clientId: r.client_id,
  sid: r.sid,
  createdAt: r.created_at,
});

/** Remembers that this session signed in to the client (idempotent: the first sign-in's row stays). */
export async function record(db: Queryable, r: Omit<SessionClientRow, 'createdAt'>, at: Date): Promise<void> {
  await db('session_clients')
    .insert({
      platform_id: r.platformId,
      user_id: r.userId,
      browser_session_id: r.browserSessionId,
      client_id: r.clientId,
      sid: r.sid,
      created_at: at,
    })
    .onConflict(['browser_session_id', 'user_id', 'client_id'])
    .ignore();
}

/** The applications one browser session of this user signed in to. */
export async function listBySession(
  db: Queryable,
  platformId: string,
  userId: string,
  browserSessionId: string,
): Promise<SessionClientRow[]> {
  return (
    await db('session_clients').where({
      platform_id: platformId,
      user_id: userId,
      browser_session_id: browserSessionId,
    })
  ).map(toRow);
}

/** Every session's applications of this user (sign out everywhere, password reset). */
export async function listByUser(db: Queryable, platformId: string, userId: string): Promise<SessionClientRow[]> {
  return (await db('session_clients').where({ platform_id: platformId, user_id: userId })).map(toRow);
}

/** Forgets one browser session of this user (after its logout is sent); returns the rows removed. */
export async function removeSession(
  db: Queryable,
  platformId: string,
  userId: string,
  browserSessionId: string,
): Promise<number> {
  return db('session_clients')
    .where({ platform_id: platformId, user_id: userId, browser_session_id: browserSessionId })
    .del();
}

/** Forgets every session of this user. */
export async function removeUser(db: Queryable, platformId: string, userId: string): Promise<number> {
  return db('session_clients').where({ platform_id: platformId, user_id: userId }).del();
}
