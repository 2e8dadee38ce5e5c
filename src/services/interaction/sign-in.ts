import type { Platform } from '../../domain/platform';
import type { User } from '../../domain/user';
import type { AttemptThrottle, SignInAudit } from '../attempt-throttle.service';
import type { SecurityOrigin } from '../security-events';
import type { EmailVerification } from '../account/email-verification.service';
import type { NewUserInput, Users } from '../users.service';
import type { Locale } from '../../domain/locales';

/**
 * A form that did not go through: the status, the message above the form, and per-field messages.
 * Messages are catalog keys; `errorValues` fills the error's placeholders, and field
 * messages take the rules' values (user-rules.ts ruleValues).
 */
export interface FormRefusal {
  ok: false;
  status: 400 | 429;
  error: string | null;
  errorValues?: Record<string, string | number>;
  fieldErrors?: Record<string, string>;
  /** Set with 429: the Retry-After header. */
  retryAfterSeconds?: number;
}

/** The throttled attempt's message as a catalog key with its count of minutes (the hosted pages). */
export function lockedMessage(seconds: number): { error: string; errorValues: { count: number } } {
  return { error: 'signin:errors.tooManyAttempts', errorValues: { count: Math.max(1, Math.ceil(seconds / 60)) } };
}

/** The same in English, for the operator's console and pages not yet translated. */
export function tooManyAttempts(seconds: number): string {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  return `Too many attempts. Try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`;
}

const locked = (seconds: number): FormRefusal => ({
  ok: false,
  status: 429,
  ...lockedMessage(seconds),
  retryAfterSeconds: seconds,
});

/**
 * Email and password, the one way both the authorization's sign-in page and the account page sign
 * a user in: throttled per account+source and per source, no password checked while locked
 * (docs/decisions.md, "Abuse resistance and scale-out"). With `audit`, the outcome is in the audit log (attemptSignIn).
 */
export function createPasswordSignIn(throttle: AttemptThrottle) {
  return async function signInWithPassword(
    platformId: string,
    email: string,
    password: string,
    source: string,
    audit?: SignInAudit,
  ): Promise<{ ok: true; user: User } | FormRefusal> {
    if (!email || !password) return { ok: false, status: 400, error: 'signin:errors.missingCredentials' };
    const attempt = await throttle.attemptSignIn(platformId, email, password, source, audit);
    if (attempt.ok) return { ok: true, user: attempt.user };
    if (attempt.lockedSeconds) return locked(attempt.lockedSeconds);
    return { ok: false, status: 400, error: 'signin:errors.incorrectPassword' };
  };
}

/** Sign-up: throttled per source; a new account gets its verification mail. `origin`: audited (attemptSignUp). */
export function createPasswordSignUp(throttle: AttemptThrottle, users: Users, emailVerification: EmailVerification) {
  return async function signUpWithPassword(
    platform: Platform,
    input: NewUserInput,
    source: string,
    origin?: SecurityOrigin,
    locale?: Locale,
  ): Promise<{ ok: true; user: User } | FormRefusal> {
    const result = await throttle.attemptSignUp(
      platform.id,
      source,
      () => users.createUser(platform.id, input),
      origin,
    );
    if (!result.ok && 'lockedSeconds' in result) return locked(result.lockedSeconds);
    if (!result.ok && 'emailTaken' in result && input.password) {
      // The account exists (a double-submitted form, or someone who forgot they signed up): its own
      // password signs in, counted by the sign-in throttle like any password, so this form is no
      // better an oracle than the sign-in form. Otherwise the "already exists" message stands.
      const signIn = await throttle.attemptSignIn(platform.id, input.email, input.password, source, origin);
      if (signIn.ok) return { ok: true, user: signIn.user };
    }
    if (!result.ok)
      return {
        ok: false,
        status: 400,
        error: null,
        fieldErrors: Object.fromEntries(result.errors.map((e) => [e.field, e.message])),
      };
    await emailVerification.sendAfterSignUp(platform, result.user, locale);
    return { ok: true, user: result.user };
  };
}
