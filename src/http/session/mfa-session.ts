import type { Request } from 'express';
import type { AuthMethod } from '../../domain/mfa';
import type { AccountSection } from '../urls';

declare module 'express-session' {
  interface SessionData {
    /**
     * The account page's sign-in waiting for its second factor: the password was right,
     * the browser does not count as signed in until the code is. Lives ten minutes.
     */
    accountSecondFactor?: {
      platformId: string;
      userId: string;
      email: string;
      startedAt: number;
      firstFactor?: AuthMethod[];
      section?: AccountSection;
    };
  }
}

const TTL_MS = 10 * 60 * 1000;

/**
 * `firstFactor`: the amr of the first step (`pwd` unless told: `fed` after an upstream, docs/decisions.md);
 * `section`: the account page's tab the sign-in ends on.
 */
export function startAccountSecondFactor(
  req: Request,
  platformId: string,
  user: { id: string; email: string },
  firstFactor?: AuthMethod[],
  section?: AccountSection,
) {
  req.session.accountSecondFactor = {
    platformId,
    userId: user.id,
    email: user.email,
    startedAt: Date.now(),
    ...(firstFactor ? { firstFactor } : {}),
    ...(section ? { section } : {}),
  };
}

/** The pending sign-in of this platform, if it is fresh. */
export function pendingAccountSecondFactor(req: Request, platformId: string) {
  const pending = req.session.accountSecondFactor;
  if (!pending || pending.platformId !== platformId || Date.now() - pending.startedAt > TTL_MS) return undefined;
  return pending;
}

export function endAccountSecondFactor(req: Request) {
  delete req.session.accountSecondFactor;
}
