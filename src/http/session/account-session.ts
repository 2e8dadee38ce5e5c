import type { Request, RequestHandler, Response } from 'express';
import type { User } from '../../domain/user';
import type { Services } from '../../services';
import { accountUrl } from '../urls';
import type { KnownAccount } from '../../domain/interaction';
import { accountsOf } from './browser-session';

declare module 'express-session' {
  interface SessionData {
    /** Per platform, the account the account page shows when several are signed in. */
    accountPage: Record<string, string>;
    /** One message for the next page (post/redirect/get). */
    flash: { message: string; platformId: string };
    /** Per platform, the sign-in page (interaction id) a "Forgot password?" came from. */
    resume: Record<string, string>;
  }
}

export const signedInAccounts = (req: Request, platformId: string): KnownAccount[] =>
  accountsOf(req, platformId).filter((a) => a.authTime !== null);

/** The account the account page acts on: the chosen one, or the only one signed in; 'choose' when several. */
export function currentAccount(req: Request, platformId: string): KnownAccount | 'choose' | undefined {
  const signedIn = signedInAccounts(req, platformId);
  const chosen = signedIn.find((a) => a.userId === req.session.accountPage?.[platformId]);
  if (chosen) return chosen;
  if (signedIn.length === 1) return signedIn[0];
  return signedIn.length ? 'choose' : undefined;
}

export function chooseAccount(req: Request, platformId: string, userId: string) {
  req.session.accountPage = { ...(req.session.accountPage ?? {}), [platformId]: userId };
}

export function setFlash(req: Request, platformId: string, message: string) {
  req.session.flash = { message, platformId };
}

export function takeFlash(req: Request, platformId: string): string | null {
  const flash = req.session.flash;
  if (!flash || flash.platformId !== platformId) return null;
  delete req.session.flash;
  return flash.message;
}

/** A 303 after a form; saveSessionBeforeRedirect (mounted with the session) writes the session first. */
export async function redirectSaved(_req: Request, res: Response, url: string) {
  res.redirect(303, url);
}

export const field = (body: unknown, name: string, max = 1024): string => {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v.slice(0, max) : '';
};

declare global {
  namespace Express {
    interface Locals {
      /** The signed-in user an account form acts on (requireAccount). */
      accountUser?: User;
    }
  }
}

/** Loads the account a form acts on: it must be signed in on this browser, else back to /account. */
export function requireAccount(s: Services): RequestHandler {
  return async (req, res, next) => {
    const p = res.locals.platform;
    const account = signedInAccounts(req, p.id).find((a) => a.userId === field(req.body, 'account'));
    const user = account && (await s.account.security.findUser(p.id, account.userId));
    if (!user) return redirectSaved(req, res, accountUrl(p.id));
    res.locals.accountUser = user;
    next();
  };
}
