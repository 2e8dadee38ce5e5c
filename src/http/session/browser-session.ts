import type { Request } from 'express';
import { randomToken } from '../../crypto/random';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import type { BrowserAccounts, KnownAccount } from '../../domain/interaction';
import { saveDurably } from './session-store';

declare module 'express-session' {
  interface SessionData {
    /** Stable id of this browser across sign-ins (the session id itself is regenerated). */
    browserId: string;
    csrf: string;
    /** Per platform, the accounts this browser knows. */
    accounts: Record<string, KnownAccount[]>;
    interactions: Record<string, AuthorizationRequest>;
    /** Interactions that ended (id → original query), newest first: see endInteraction. */
    endedInteractions: Record<string, { restart: string; endedAt: number }>;
  }
}

declare global {
  namespace Express {
    interface Locals {
      /** A signed-in browser's session lifetime, set where the session is mounted (middleware/session.ts). */
      signedInSessionMs?: number;
    }
  }
}

const MAX_INTERACTIONS = 10;
const MAX_ENDED_INTERACTIONS = 5;
/** An interaction lives an hour; so does a session that holds nothing but interactions. */
export const INTERACTION_TTL_SECONDS = 3600;

/**
 * Whether the session holds anything worth a stored row: a value other than its cookie that is not
 * empty (`{ accounts: { P: [] } }` is empty). A new session that holds nothing is never stored.
 */
export function holdsState(session: object | null | undefined): boolean {
  if (!session) return false;
  return Object.entries(session).some(([key, value]) => key !== 'cookie' && !isEmpty(value));
}

const isEmpty = (value: unknown): boolean =>
  value == null || (typeof value === 'object' && Object.values(value).every(isEmpty));

const hasSignedInAccount = (req: Request) =>
  Object.values(req.session.accounts ?? {}).some((list) => list.some((a) => a.authTime !== null));

export function browserId(req: Request): string {
  req.session.browserId ??= randomToken(18);
  return req.session.browserId;
}

export function accountsOf(req: Request, platformId: string): KnownAccount[] {
  return req.session.accounts?.[platformId] ?? [];
}

function setAccounts(req: Request, platformId: string, accounts: KnownAccount[]) {
  req.session.accounts = { ...(req.session.accounts ?? {}), [platformId]: accounts };
}

/**
 * Signed in now: first in the list, with its auth_time. The session now lives SESSION_TTL_SECONDS
 * (cookie and stored row alike, from this sign-in on) instead of an anonymous session's hour.
 */
export function rememberSignIn(
  req: Request,
  platformId: string,
  account: { userId: string; email: string },
  authTime: number,
  amr: string[] = ['pwd'],
) {
  const others = accountsOf(req, platformId).filter((a) => a.userId !== account.userId);
  setAccounts(req, platformId, [{ ...account, authTime, signedInAt: Date.now(), amr }, ...others]);
  const signedInMs = req.res?.locals.signedInSessionMs;
  if (signedInMs) req.session.cookie.maxAge = signedInMs;
}

/** Signed out but still listed, so the chooser can offer it with the email pre-filled. */
export function markSignedOut(req: Request, platformId: string, userId: string) {
  const accounts = accountsOf(req, platformId);
  // An account this browser does not know (a password reset from a fresh browser): nothing to write.
  if (!accounts.some((a) => a.userId === userId)) return;
  setAccounts(
    req,
    platformId,
    accounts.map((a) => (a.userId === userId ? { ...a, authTime: null } : a)),
  );
  saveDurably(req.session); // a database crash must not sign the account back in
}

function forgetAccount(req: Request, platformId: string, userId: string) {
  const accounts = accountsOf(req, platformId);
  if (!accounts.some((a) => a.userId === userId)) return;
  setAccounts(
    req,
    platformId,
    accounts.filter((a) => a.userId !== userId),
  );
}

/** The session's form token (CSRF), minted on first use. */
export function sessionCsrfToken(req: Request): string {
  req.session.csrf ??= randomToken(24);
  return req.session.csrf;
}

export function saveInteraction(req: Request, interaction: AuthorizationRequest) {
  // The language its pages load with (loadInteraction sets it again): stored now, a page view that
  // finds the same language changes nothing and writes nothing.
  const locale = req.res?.locals.locale;
  if (locale) interaction.locale = locale;
  const now = Math.floor(Date.now() / 1000);
  const live = Object.values(req.session.interactions ?? {})
    .filter((i) => i.id !== interaction.id && now - i.createdAt < INTERACTION_TTL_SECONDS)
    .sort((a, b) => b.createdAt - a.createdAt)
    .slice(0, MAX_INTERACTIONS - 1);
  req.session.interactions = Object.fromEntries([interaction, ...live].map((i) => [i.id, i]));
  // The pages' form token is minted with the interaction, whose save stores it: the page views
  // that follow leave the session unchanged and cost no write.
  sessionCsrfToken(req);
  // Nobody signed in: the session lives an hour from its latest interaction, never SESSION_TTL_SECONDS.
  const { cookie } = req.session;
  if (
    !hasSignedInAccount(req) &&
    cookie.originalMaxAge !== null &&
    cookie.originalMaxAge <= INTERACTION_TTL_SECONDS * 1000
  ) {
    cookie.maxAge = cookie.originalMaxAge;
  }
}

export function findInteraction(req: Request, id: string): AuthorizationRequest | undefined {
  // Own keys only: "/interaction/constructor" must not find Object.prototype.constructor.
  const interactions = req.session.interactions;
  const found = interactions && Object.hasOwn(interactions, id) ? interactions[id] : undefined;
  if (!found || Math.floor(Date.now() / 1000) - found.createdAt >= INTERACTION_TTL_SECONDS) return undefined;
  return found;
}

/**
 * Pages are no-store, so Back to a finished interaction's page fetches it again: its
 * original query is kept a while (the newest few, an hour) so that fetch starts the request over
 * (chooser or sign-in) instead of an error page, as its forms' `restart` does.
 */
export function endInteraction(req: Request, id: string) {
  const all = req.session.interactions;
  if (!all || !Object.hasOwn(all, id)) return;
  const { restart } = all[id];
  delete all[id];
  if (!restart) return;
  const now = Math.floor(Date.now() / 1000);
  const kept = Object.entries(req.session.endedInteractions ?? {})
    .filter(([, e]) => now - e.endedAt < INTERACTION_TTL_SECONDS)
    .slice(0, MAX_ENDED_INTERACTIONS - 1);
  req.session.endedInteractions = Object.fromEntries([[id, { restart, endedAt: now }], ...kept]);
}

/** The original query of a recently ended interaction of this browser, if any. */
export function restartOfEnded(req: Request, id: string): string | undefined {
  const all = req.session.endedInteractions;
  const ended = all && Object.hasOwn(all, id) ? all[id] : undefined;
  return ended && Math.floor(Date.now() / 1000) - ended.endedAt < INTERACTION_TTL_SECONDS ? ended.restart : undefined;
}

/** Session fixation defence: a new session id at sign-in, keeping what the session held. */
export function regenerateKeepingData(req: Request): Promise<void> {
  const { cookie: _cookie, ...data } = req.session;
  return new Promise((resolve, reject) => {
    req.session.regenerate((err) => {
      if (err) return reject(err);
      Object.assign(req.session, data);
      saveOnlyChanges(req.session);
      resolve();
    });
  });
}

/**
 * express-session tracks what it saved only on sessions it created itself, not on regenerate()'s:
 * such a session, saved before a redirect (saveSessionBeforeRedirect), would be written a second
 * time when the response ends, unchanged but for an expiry a few milliseconds later. This save
 * skips a write whose data is what the last one stored and whose expiry moved less than a second.
 */
function saveOnlyChanges(session: Request['session']): void {
  const save = session.save.bind(session);
  let stored: { data: string; expires: number } | undefined;
  Object.defineProperty(session, 'save', {
    enumerable: false,
    configurable: true,
    value(callback?: (err?: unknown) => void) {
      const { cookie, ...rest } = session;
      const state = { data: JSON.stringify(rest), expires: cookie.expires?.getTime() ?? 0 };
      if (stored && stored.data === state.data && Math.abs(state.expires - stored.expires) < 1000) {
        callback?.();
        return session;
      }
      return save((err?: unknown) => {
        if (!err) stored = state;
        callback?.(err);
      });
    },
  });
}

/** The interaction service's view of this browser's accounts on a platform, over the session. */
export function browserAccounts(req: Request, platformId: string): BrowserAccounts {
  return {
    list: () => accountsOf(req, platformId),
    id: () => browserId(req),
    async signedIn(user, authTime, amr) {
      await regenerateKeepingData(req);
      rememberSignIn(req, platformId, { userId: user.id, email: user.email }, authTime, amr);
    },
    signedOut: (userId) => markSignedOut(req, platformId, userId),
    forget: (userId) => forgetAccount(req, platformId, userId),
  };
}
