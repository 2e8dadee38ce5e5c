import type { Request } from 'express';

/** What a WebAuthn ceremony is for: adding a passkey, a passwordless sign-in, or a second factor. */
export type CeremonyPurpose = 'register' | 'signin' | 'second-factor';

interface Ceremony {
  challenge: string;
  /** Unix seconds. */
  expiresAt: number;
}

declare module 'express-session' {
  interface SessionData {
    /**
     * Challenges of WebAuthn ceremonies in progress, one per purpose and scope (platform or
     * interaction): small, short-lived and single-use. A passwordless sign-in's challenge is state
     * worth a session row even for an anonymous browser.
     */
    passkeyCeremonies: Record<string, Ceremony>;
  }
}

const key = (purpose: CeremonyPurpose, scope: string) => `${purpose}:${scope}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Remembers a new challenge (replacing one of the same purpose and scope), dropping expired ones. */
export function startCeremony(
  req: Request,
  purpose: CeremonyPurpose,
  scope: string,
  challenge: string,
  ttlSeconds: number,
): void {
  const now = nowSeconds();
  const live = Object.entries(req.session.passkeyCeremonies ?? {})
    .filter(([, c]) => c.expiresAt > now)
    .slice(-4);
  req.session.passkeyCeremonies = Object.fromEntries([
    ...live,
    [key(purpose, scope), { challenge, expiresAt: now + ttlSeconds }],
  ]);
}

/** The challenge of this ceremony, removed from the session whatever comes next: each is used once. */
export function takeChallenge(req: Request, purpose: CeremonyPurpose, scope: string): string | undefined {
  const all = req.session.passkeyCeremonies;
  const k = key(purpose, scope);
  if (!all || !Object.hasOwn(all, k)) return undefined;
  const { challenge, expiresAt } = all[k];
  delete all[k];
  if (Object.keys(all).length === 0) delete req.session.passkeyCeremonies;
  return expiresAt > nowSeconds() ? challenge : undefined;
}

declare global {
  namespace Express {
    interface Locals {
      /** The signed-in user a passkey form of the account page acts on. */
      passkeyUser?: import('../../domain/user').User;
      /** The account page's sign-in waiting for its second factor (mfa-session.ts). */
      pendingSignIn?: { userId: string; email: string };
    }
  }
}
