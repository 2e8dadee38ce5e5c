import type { User } from './user';

/** An account this browser knows on a platform: signed in (authTime) or signed out (null). */
export interface KnownAccount {
  userId: string;
  email: string;
  authTime: number | null;
  /** When this browser signed in, in milliseconds (auth_time has whole seconds): compared with the user's sessions_valid_after. */
  signedInAt?: number;
  /** RFC 8176 methods this browser's sign-in proved (`pwd`, `otp`, `mfa`, …); absent: a password sign-in from before amr was recorded. */
  amr?: string[];
}

/**
 * The pages of an interaction. A new page is a new member here, a check that returns it
 * in src/services/interaction/decide.ts, a transition that moves past it in
 * src/services/interaction/transitions.ts and a builder in src/http/pages/ (docs/architecture.md).
 */
export type PageStep =
  | { kind: 'signin'; email?: string; emailLocked: boolean }
  | { kind: 'signup'; email?: string; emailLocked: boolean }
  | { kind: 'chooser' }
  | { kind: 'consent'; user: Pick<User, 'id' | 'email'> }
  /** The second factor: after the first factor of this interaction, or a step-up of a signed-in account. */
  | { kind: 'second_factor'; user: Pick<User, 'id' | 'email'> }
  /** Policy `required` or a step-up, and the user has no second factor: set up an authenticator app first. */
  | { kind: 'totp_setup'; user: Pick<User, 'id' | 'email'> }
  /** An upstream sign-in whose email has a local account: that account proves it before it is linked. */
  | { kind: 'link_account'; user: Pick<User, 'id' | 'email'>; providerName: string };

/**
 * An upstream sign-in that verified but still needs a page before anyone signs in:
 * linking the existing account with its email (`link`), or the sign-up, pre-filled. Kept with the
 * authorization request; ended by the sign-in it leads to, or by going to another form.
 */
export interface UpstreamInProgress {
  providerId: string;
  slug: string;
  providerName: string;
  subject: string;
  email: string | null;
  /** The email counts as verified: the upstream said so and the provider is trusted for it. */
  emailTrusted: boolean;
  givenName: string | null;
  familyName: string | null;
  /** What the sign-in will carry (`fed`, `mfa` when trusted). */
  amr: string[];
  /** The upstream's tokens, sealed, when the provider keeps them. */
  sealedTokens: string | null;
  /** The account with the same email that must prove it before it is linked. */
  link?: { userId: string; email: string };
  /** "Email me a link": the link's SHA-256 (single use, this browser only), when it stops working, when it was sent (ms). */
  mailedLink?: { digest: string; expiresAt: number; sentAt: number };
}

/** The answers to the client: a code (complete) or an error (RFC 6749 §4.1.2.1, OIDC Core 3.1.2.6). */
export type FinalStep =
  | { kind: 'complete'; user: User; authTime: number; amr?: string[] }
  | {
      kind: 'error';
      code:
        'login_required' | 'consent_required' | 'account_selection_required' | 'access_denied' | 'interaction_required';
      description: string;
    };

/** What an authorization needs next, decided once per transition: a page to show, or the answer. */
export type Step = PageStep | FinalStep;

export const isPageStep = (step: Step): step is PageStep => step.kind !== 'complete' && step.kind !== 'error';

/**
 * The browser's side of an interaction, as the interaction service sees it: the accounts this
 * browser knows on the platform and the changes a transition makes to them. The HTTP layer
 * implements it over the session (src/http/session/browser-session.ts: browserAccounts).
 */
export interface BrowserAccounts {
  list(): KnownAccount[];
  /** A stable id of this browser, created on first use (refresh tokens are bound to it). */
  id(): string;
  /** Signed in now (a new session id against fixation; the account first in the list). */
  signedIn(user: Pick<User, 'id' | 'email'>, authTime: number, amr: string[]): Promise<void>;
  /** Signed out but still listed, so the chooser offers it with the email pre-filled. */
  signedOut(userId: string): void;
  forget(userId: string): void;
}
