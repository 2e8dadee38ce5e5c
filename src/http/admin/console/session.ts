import type { TLSSocket } from 'node:tls';
import type { Request, RequestHandler } from 'express';
import session from 'express-session';
import connectPgSimple from 'connect-pg-simple';
import cookieParser from 'cookie-parser';
import type { Pool } from 'pg';
import type { Config } from '../../../config';
import { csrfCookie } from '../../middleware/csrf';

/** An operator's console session, in the session table under its own cookie. */
export interface ConsoleSession {
  operatorId: string;
  /** `second_factor`: the password was right, the code is still due; nothing else is shown. */
  stage: 'second_factor' | 'signed_in';
  /** Epoch ms (services clock) of the password check, and of the last request. */
  startedAt: number;
  lastSeenAt: number;
  /** One message for the next page (after a form's 303). */
  flash?: string;
  /** A client secret just issued, sealed, for the client page's next render only (then deleted). */
  secretOnce?: { clientId: string; sealed: string };
  /** An initial access token just made, sealed, for its platform's tokens page's next render only (then deleted). */
  registrationTokenOnce?: { platformId: string; sealed: string };
  /** "Your account": the authenticator app being set up, its secret sealed (stored only once a code confirms it). */
  totpSetup?: string;
  /** Sign-in enrolment: the pending app secret (sealed) this sign-in showed; another sign-in's is never shown here. */
  enrolmentTotp?: string;
}

declare module 'express-session' {
  interface SessionData {
    console: ConsoleSession;
  }
}

/** The console's lifetimes: a signed-in operator is asked again after 8 hours, or after 30 idle minutes. */
export const CONSOLE_ABSOLUTE_MS = 8 * 3600_000;
export const CONSOLE_IDLE_MS = 30 * 60_000;
/** Between the password and the code. */
export const CONSOLE_SECOND_FACTOR_MS = 10 * 60_000;

/**
 * The console's own session: cookie `latchkey.admin` on path /admin only, HttpOnly, SameSite=Strict
 * (no cross-site request carries it, not even a top-level GET), Secure under https, renewed on every
 * response (idle limit) and never shared with the hosted pages' `latchkey.sid`. Stored in the same
 * session table. Also parses cookies and sets up the anonymous CSRF token of the sign-in form.
 */
export function consoleSessionMiddleware(config: Config, pool: Pool): RequestHandler[] {
  const PgStore = connectPgSimple(session);
  const secure = isConsoleCookieSecure(config.baseUrl);
  const consoleSession = session({
    name: 'latchkey.admin',
    secret: config.sessionSecret!,
    store: new PgStore({ pool, tableName: 'session', createTableIfMissing: false, pruneSessionInterval: false }),
    resave: false,
    saveUninitialized: false,
    rolling: true,
    proxy: secure ? true : undefined,
    cookie: { httpOnly: true, sameSite: 'strict', secure, maxAge: CONSOLE_IDLE_MS, path: '/admin' },
  });
  return [cookieParser(), csrfCookie(config), consoleSession];
}

/** Under an https BASE_URL the console cookie is Secure. */
const isConsoleCookieSecure = (baseUrl: string) => baseUrl.startsWith('https://');

/**
 * Whether the console cookie cannot be set on this request's answer: it is Secure, and the request
 * came over plain http. The same test express-session makes with `proxy: true` (a TLS connection,
 * or a proxy's first `X-Forwarded-Proto` saying https); where it fails, the session is never saved
 * in the browser and every sign-in ends back on the sign-in page.
 */
export function isConsoleCookieRefused(baseUrl: string, req: Request): boolean {
  if (!isConsoleCookieSecure(baseUrl) || (req.socket as TLSSocket).encrypted) return false;
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]
    .trim()
    .toLowerCase();
  return forwarded !== 'https';
}

const promised = (fn: (cb: (err: unknown) => void) => void) =>
  new Promise<void>((resolve, reject) => fn((err) => (err ? reject(err) : resolve())));

/** A new session id for a new privilege level (session fixation), holding `state`. */
export async function startConsoleSession(req: Request, state: ConsoleSession): Promise<void> {
  await promised((cb) => req.session.regenerate(cb));
  req.session.console = state;
  await promised((cb) => req.session.save(cb));
}

/** Ends the console session: the row is deleted and the cookie cleared. */
export async function endConsoleSession(req: Request): Promise<void> {
  if (!req.session?.console) return;
  await promised((cb) => req.session.destroy(cb));
  req.res?.clearCookie('latchkey.admin', { path: '/admin' });
}

/** Saves the session before a redirect: the browser follows a 303 as soon as it sees it. */
export async function saveConsoleSession(req: Request): Promise<void> {
  if (req.session?.console) await promised((cb) => req.session.save(cb));
}
