import type { User } from './user';

/** An account this browser knows on a platform: signed in (authTime) or signed out (null). */
export interface KnownAccount {
  userId: string;
  email: string;
  authTime: number | null;
  /** When this browser signed in, in milliseconds (auth_time has whole seconds): compared with the user's sessions_valid_after. */
  signedInAt?: number;
}

/** What an authorization needs next: a page to show, or the answer to the client. */
export type Step =
  | { kind: 'signin'; email?: string; emailLocked: boolean }
  | { kind: 'signup'; email?: string; emailLocked: boolean }
  | { kind: 'chooser' }
  | { kind: 'consent'; user: User }
  | { kind: 'complete'; user: User; authTime: number }
  | { kind: 'error'; code: 'login_required' | 'consent_required' | 'account_selection_required'; description: string };
