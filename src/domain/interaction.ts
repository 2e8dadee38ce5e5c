import type { User } from './user';

/** An account this browser knows on a platform: signed in (authTime) or signed out (null). */
export interface KnownAccount {
  userId: string;
  email: string;
  authTime: number | null;
  /** When this browser signed in, in milliseconds (auth_time has whole seconds): compared with the user's sessions_valid_after. */
  signedInAt?: number;
}

/**
 * The pages of an interaction (DESIGN §9). A new page is a new member here, a check that returns it
 * in src/services/interaction/decide.ts, a transition that moves past it in
 * src/services/interaction/transitions.ts and a builder in src/http/pages/ (docs/architecture.md).
 */
export type PageStep =
  | { kind: 'signin'; email?: string; emailLocked: boolean }
  | { kind: 'signup'; email?: string; emailLocked: boolean }
  | { kind: 'chooser' }
  | { kind: 'consent'; user: Pick<User, 'id' | 'email'> };

/** The answers to the client: a code (complete) or an error (RFC 6749 §4.1.2.1, OIDC Core 3.1.2.6). */
export type FinalStep =
  | { kind: 'complete'; user: User; authTime: number }
  | { kind: 'error'; code: 'login_required' | 'consent_required' | 'account_selection_required' | 'access_denied'; description: string };

/** What an authorization needs next, decided once per transition: a page to show, or the answer. */
export type Step = PageStep | FinalStep;

export const isPageStep = (step: Step): step is PageStep => step.kind !== 'complete' && step.kind !== 'error';

/**
 * The browser's side of an interaction, as the interaction service sees it: the accounts this
 * browser knows on the platform and the changes a transition makes to them. The HTTP layer
 * implements it over the session (src/http/browser-session.ts: browserAccounts).
 */
export interface BrowserAccounts {
  list(): KnownAccount[];
  /** A stable id of this browser, created on first use (refresh tokens are bound to it). */
  id(): string;
  /** Signed in now (a new session id against fixation; the account first in the list). */
  signedIn(user: Pick<User, 'id' | 'email'>, authTime: number): Promise<void>;
  /** Signed out but still listed, so the chooser offers it with the email pre-filled. */
  signedOut(userId: string): void;
  forget(userId: string): void;
}
