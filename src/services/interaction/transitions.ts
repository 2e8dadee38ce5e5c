import type { AuthorizationRequest } from '../../domain/authorization-request';
import type { BrowserAccounts, PageStep, Step } from '../../domain/interaction';
import { normalizeEmail, type User } from '../../domain/user';
import type { Deps } from '../deps';
import type { Interaction } from '../authorize/interaction.service';
import type { Platform } from '../../domain/platform';
import type { createPasswordSignIn, createPasswordSignUp, FormRefusal } from './sign-in';
import type { Decide } from './decide';
import { tooManyAttempts } from './sign-in';
import type { Mfa } from '../mfa';
import { amrOf, type AuthMethod } from '../../domain/mfa';
import type { Passkeys } from '../mfa/passkeys.service';
import type { AuditContext } from '../../domain/audit';
import type { SecurityOrigin } from '../security-events';

type At<K extends PageStep['kind']> = Extract<PageStep, { kind: K }>;

/** A form refused on the page it came from: the page again (`step`) with the refusal's messages. */
export type Refused = FormRefusal & { kind: 'refused'; step: PageStep; values?: Record<string, string | undefined> };

export interface PasswordForm {
  email: string;
  password: string;
}

export interface SignUpForm {
  email: string;
  password: string;
  given_name: string;
  family_name: string;
  birthdate: string;
  phone_number: string;
}

/**
 * The interaction as named transitions (DESIGN §9). Each one changes the authorization request's
 * progress (and, through BrowserAccounts, the browser's accounts) and returns the step that is due
 * next, decided once by ./decide.ts. The HTTP layer maps a request to one transition and answers the
 * step (src/http/routers/interaction.router.ts). A new way in (a passkey) is a sibling of
 * passwordVerified that ends in firstFactorVerified; a new page is a step in src/domain/interaction.ts,
 * a check in ./decide.ts and the transition that moves past it here. `ctx` (the request, for the
 * audit log) is handed on to the services that record the security events; without it, none is.
 */
export function createInteractionFlow(
  deps: Deps,
  decide: Decide,
  authorize: Pick<Interaction, 'grantConsent' | 'signOut'>,
  signInWithPassword: ReturnType<typeof createPasswordSignIn>,
  signUpWithPassword: ReturnType<typeof createPasswordSignUp>,
  passkeys: Pick<Passkeys, 'authenticate'>,
  mfa: Pick<Mfa, 'verifySecondFactor' | 'confirmTotp' | 'secondFactorNeed'>,
) {
  const { secondFactorNeed } = mfa;
  const nowSeconds = () => Math.floor(deps.now().getTime() / 1000);
  const next = (ar: AuthorizationRequest, browser: BrowserAccounts) => decide(ar, browser.list());
  /** The audit origin of a transition: the request, this platform and the client asking. */
  const originOf = (ar: AuthorizationRequest, ctx?: AuditContext): SecurityOrigin | undefined => ctx && { ctx, platformId: ar.platformId, clientId: ar.clientId };
  const refuse = (step: PageStep, refusal: Omit<FormRefusal, 'ok'> & Partial<Pick<FormRefusal, 'ok'>>, values?: Refused['values']): Refused => ({ ...refusal, ok: false, kind: 'refused', step, values });

  /**
   * The user proved who they are: the browser signs in (new session id, the account first in its
   * list) and the request carries on from here with this account and auth_time. A second factor
   * would be asked by a check in ./decide.ts after this, before consent.
   */
  async function firstFactorVerified(ar: AuthorizationRequest, browser: BrowserAccounts, user: Pick<User, 'id' | 'email'>, amr: string[]): Promise<Step> {
    const authTime = nowSeconds();
    Object.assign(ar, { userId: user.id, screen: undefined, signinEmail: undefined, amr, secondFactorMethod: undefined });
    // DESIGN §15: a due second factor comes first; the browser counts as signed in only once it is verified.
    if ((await secondFactorNeed(ar.platformId, user.id, amr, ar.acrValues)) !== 'none') {
      ar.secondFactorPending = true;
      return next(ar, browser);
    }
    await browser.signedIn(user, authTime, amr);
    Object.assign(ar, { authenticatedAt: authTime, secondFactorPending: undefined });
    return next(ar, browser);
  }

  /** A pinned sign-in (login_hint, id_token_hint, re-authentication) is for its email only. */
  const otherEmail = (at: { email?: string; emailLocked: boolean }, email: string) => at.emailLocked && normalizeEmail(email) !== normalizeEmail(at.email ?? '');

  async function signOut(ar: AuthorizationRequest, browser: BrowserAccounts, userId: string, ctx?: AuditContext) {
    await authorize.signOut(ar.platformId, userId, browser.id(), originOf(ar, ctx), 'chooser');
    browser.signedOut(userId);
  }

  return {
    /** Where the interaction stands: the page to show, or the answer (GET, and before a form is read). */
    current: next,

    /** The links between the forms (sign in, create account, choose an account); the page is decided when shown. */
    switchForm(ar: AuthorizationRequest, form: 'signin' | 'signup' | 'chooser'): void {
      if (form === 'chooser') Object.assign(ar, { screen: undefined, signinEmail: undefined, userId: undefined });
      else if (!ar.loginHint && !ar.idTokenHintSub) Object.assign(ar, { screen: form, userId: ar.authenticatedAt ? ar.userId : undefined });
    },

    /** The chooser: a signed-in account goes on; a signed-out one gets the sign-in page with its email. */
    async pickAccount(ar: AuthorizationRequest, browser: BrowserAccounts, userId: string): Promise<Step> {
      const picked = browser.list().find((a) => a.userId === userId);
      if (picked && picked.authTime !== null) Object.assign(ar, { userId: picked.userId, screen: undefined });
      else if (picked) Object.assign(ar, { userId: undefined, screen: 'signin', signinEmail: picked.email });
      return next(ar, browser);
    },

    async useAnotherAccount(ar: AuthorizationRequest, browser: BrowserAccounts): Promise<Step> {
      Object.assign(ar, { userId: undefined, screen: 'signin', signinEmail: undefined });
      return next(ar, browser);
    },

    /** The chooser's "Sign out" of one account (a signed-out one is forgotten), or of all. */
    async signOutAccount(ar: AuthorizationRequest, browser: BrowserAccounts, userId: string, ctx?: AuditContext): Promise<Step> {
      const account = browser.list().find((a) => a.userId === userId);
      if (account?.authTime === null) browser.forget(account.userId);
      else if (account) await signOut(ar, browser, account.userId, ctx);
      return next(ar, browser);
    },

    async signOutAll(ar: AuthorizationRequest, browser: BrowserAccounts, ctx?: AuditContext): Promise<Step> {
      for (const a of browser.list().filter((x) => x.authTime !== null)) await signOut(ar, browser, a.userId, ctx);
      return next(ar, browser);
    },

    /** The sign-in form: email and password (throttled), for the pinned email when there is one. */
    async passwordSubmitted(ar: AuthorizationRequest, browser: BrowserAccounts, at: At<'signin'>, form: PasswordForm, source: string, ctx?: AuditContext): Promise<Step | Refused> {
      const lockedTo = { status: 400 as const, error: `This sign-in is for ${at.email}.` };
      if (otherEmail(at, form.email)) return refuse(at, lockedTo);
      const result = await signInWithPassword(ar.platformId, form.email, form.password, source, originOf(ar, ctx));
      if (!result.ok) return refuse({ ...at, email: form.email }, result);
      if (at.emailLocked && ar.userId && ar.userId !== result.user.id) return refuse(at, lockedTo);
      return this.passwordVerified(ar, browser, result.user);
    },

    /**
     * The second-factor page's form (DESIGN §15): a code from the authenticator app or a recovery
     * code, throttled per account and source like passwords; a used TOTP step is refused.
     */
    async secondFactorSubmitted(ar: AuthorizationRequest, browser: BrowserAccounts, at: At<'second_factor'>, form: { method: string; code: string }, source: string, ctx?: AuditContext): Promise<Step | Refused> {
      const method = form.method === 'recovery_code' ? 'recovery_code' : 'totp';
      const result = await mfa.verifySecondFactor(ar.platformId, at.user, { method, code: form.code }, source, originOf(ar, ctx));
      if (result.ok) return this.secondFactorVerified(ar, browser, at.user, [result.amr]);
      if (result.lockedSeconds) return refuse(at, { status: 429, error: tooManyAttempts(result.lockedSeconds), retryAfterSeconds: result.lockedSeconds });
      return refuse(at, { status: 400, error: method === 'recovery_code' ? 'That recovery code is not valid, or it was already used.' : 'That code is not right. Enter the code the app shows now.' });
    },

    /** The second-factor page's links: the authenticator app's code, or a recovery code. */
    chooseSecondFactorMethod(ar: AuthorizationRequest, method: 'totp' | 'recovery_code'): void {
      ar.secondFactorMethod = method;
    },

    /**
     * "Use a passkey" on the second-factor page (DESIGN §15): one of this user's own passkeys, user
     * verification not needed (the password was the first factor). amr adds `hwk`/`swk` (+ `user`).
     */
    async passkeySecondFactorSubmitted(ar: AuthorizationRequest, browser: BrowserAccounts, at: At<'second_factor'>, platform: Platform, form: { credential: string; expectedChallenge?: string }, ctx?: AuditContext): Promise<Step | Refused> {
      if (!form.expectedChallenge) return refuse(at, { status: 400, error: 'This passkey request has expired. Try again.' });
      const result = await passkeys.authenticate(platform, { credential: form.credential, expectedChallenge: form.expectedChallenge, forUser: at.user }, originOf(ar, ctx));
      if (!result.ok || result.user.id !== at.user.id) return refuse(at, { status: 400, error: result.ok ? 'This passkey is not registered for this account.' : result.message });
      return this.secondFactorVerified(ar, browser, at.user, result.amr);
    },

    /**
     * A second factor was verified (a TOTP or recovery code here; a passkey through s.passkeys): the
     * browser signs in with both factors in its amr, after this interaction's first factor or as a
     * step-up of the account's earlier sign-in. `methods`: RFC 8176 values (`otp`, `hwk`, `user`, …).
     */
    async secondFactorVerified(ar: AuthorizationRequest, browser: BrowserAccounts, user: Pick<User, 'id' | 'email'>, methods: string[]): Promise<Step> {
      const pending = ar.secondFactorPending && ar.userId === user.id;
      const before = pending ? ar.amr ?? ['pwd'] : browser.list().find((a) => a.userId === user.id)?.amr ?? ['pwd'];
      const amr = amrOf([...before, ...methods] as AuthMethod[]);
      const authTime = nowSeconds();
      await browser.signedIn(user, authTime, amr);
      Object.assign(ar, { userId: user.id, authenticatedAt: authTime, amr, secondFactorPending: undefined, secondFactorMethod: undefined });
      return next(ar, browser);
    },

    /**
     * Policy `required` or a step-up, for a user without a second factor: the authenticator app set
     * up during sign-in, confirmed with its first code. Answers the recovery codes, to show once.
     */
    async totpSetupConfirmed(ar: AuthorizationRequest, browser: BrowserAccounts, at: At<'totp_setup'>, code: string, ctx?: AuditContext): Promise<{ kind: 'enrolled'; step: Step; recoveryCodes: string[] } | Refused> {
      const result = await mfa.confirmTotp(at.user.id, code, originOf(ar, ctx));
      if (!result.ok) return refuse(at, { status: 400, error: 'That code did not match. Enter the code the app shows now (check the time on your phone).' });
      return { kind: 'enrolled', step: await this.secondFactorVerified(ar, browser, at.user, ['otp']), recoveryCodes: result.recoveryCodes };
    },

    /** The password was right: the first factor. */
    passwordVerified(ar: AuthorizationRequest, browser: BrowserAccounts, user: User): Promise<Step> {
      return firstFactorVerified(ar, browser, user, ['pwd']);
    },

    /**
     * "Sign in with a passkey": the passkey alone, a first factor, so the authenticator must have
     * verified the user (DESIGN §15; s.passkeys checks it). amr: `hwk` or `swk`, and `user`.
     * `expectedChallenge` is this browser's single-use challenge (undefined: none, or expired).
     */
    async passkeySubmitted(ar: AuthorizationRequest, browser: BrowserAccounts, at: At<'signin'>, platform: Platform, form: { credential: string; expectedChallenge?: string }, ctx?: AuditContext): Promise<Step | Refused> {
      if (!form.expectedChallenge) return refuse(at, { status: 400, error: 'This passkey request has expired. Try again.' });
      // A pinned sign-in refuses another account's passkey inside s.passkeys, before a sign-in is recorded.
      const onlyEmail = at.emailLocked ? at.email ?? '' : undefined;
      const result = await passkeys.authenticate(platform, { credential: form.credential, expectedChallenge: form.expectedChallenge, onlyEmail }, originOf(ar, ctx));
      if (!result.ok) return refuse(at, { status: 400, error: result.message });
      return firstFactorVerified(ar, browser, result.user, result.amr);
    },

    /** The sign-up form (also posted from the sign-in page's step); the new account is signed in. */
    async signUpSubmitted(ar: AuthorizationRequest, browser: BrowserAccounts, at: At<'signin'> | At<'signup'>, platform: Platform, form: SignUpForm, source: string, ctx?: AuditContext): Promise<Step | Refused> {
      const signupStep: At<'signup'> = { kind: 'signup', email: at.email, emailLocked: at.emailLocked };
      if (otherEmail(at, form.email)) return refuse(signupStep, { status: 400, error: `This sign-up is for ${at.email}.` }, { email: at.email });
      const result = await signUpWithPassword(platform, {
        email: form.email, password: form.password, givenName: form.given_name, familyName: form.family_name, birthdate: form.birthdate, phoneNumber: form.phone_number,
      }, source, originOf(ar, ctx));
      if (!result.ok) return refuse(signupStep, result);
      return firstFactorVerified(ar, browser, result.user, ['pwd']);
    },

    /** Allow: remembered for these scopes (asked again only for new ones). */
    async consentGiven(ar: AuthorizationRequest, browser: BrowserAccounts, at: At<'consent'>, ctx?: AuditContext): Promise<Step> {
      await authorize.grantConsent(ar, at.user.id, originOf(ar, ctx));
      ar.consentGiven = true;
      return next(ar, browser);
    },

    /** Deny: access_denied to the client (RFC 6749 §4.1.2.1). */
    consentDenied(): Step {
      return { kind: 'error', code: 'access_denied', description: 'The user denied the request' };
    },
  };
}

export type InteractionFlow = ReturnType<typeof createInteractionFlow>;
