import type { AuthorizationRequest } from '../../domain/authorization-request';
import {
  isPageStep,
  type BrowserAccounts,
  type PageStep,
  type Step,
  type UpstreamInProgress,
} from '../../domain/interaction';
import { normalizeEmail, type User } from '../../domain/user';
import type { Deps } from '../deps';
import type { AuthorizationGrant } from '../authorize/authorization-grant.service';
import type { Platform } from '../../domain/platform';
import type { createPasswordSignIn, createPasswordSignUp, FormRefusal } from './sign-in';
import type { Decide } from './decide';
import { lockedMessage } from './sign-in';
import type { Mfa } from '../mfa';
import { amrOf, type AuthMethod } from '../../domain/mfa';
import type { Passkeys } from '../mfa/passkeys.service';
import type { AuditContext } from '../../domain/audit';
import type { SecurityOrigin } from '../security-events';
import type { Identities } from '../federation/identities.service';
import type { UpstreamProfile, UpstreamProvider } from '../../domain/upstream';
import * as usersRepo from '../../repositories/user.repository';
import { randomToken } from '../../crypto/random';
import { digest, safeEqual } from '../../crypto/digest';

/** "Email me a link" on the link page: how long the link works, and the least time between two mails. */
export const LINK_MAIL_TTL_MINUTES = 15;
const LINK_MAIL_INTERVAL_MS = 60_000;

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
 * The interaction as named transitions. Each one changes the authorization request's
 * progress (and, through BrowserAccounts, the browser's accounts) and returns the step that is due
 * next, decided once by ./decide.ts. The HTTP layer maps a request to one transition and answers the
 * step (src/http/interaction/interaction.router.ts). A new way in (a passkey) is a sibling of
 * passwordVerified that ends in firstFactorVerified; a new page is a step in src/domain/interaction.ts,
 * a check in ./decide.ts and the transition that moves past it here. `ctx` (the request, for the
 * audit log) is handed on to the services that record the security events; without it, none is.
 */
export function createInteractionFlow(
  deps: Deps,
  decide: Decide,
  authorize: Pick<AuthorizationGrant, 'grantConsent' | 'signOut'>,
  signInWithPassword: ReturnType<typeof createPasswordSignIn>,
  signUpWithPassword: ReturnType<typeof createPasswordSignUp>,
  passkeys: Pick<Passkeys, 'authenticate'>,
  mfa: Pick<Mfa, 'verifySecondFactor' | 'confirmTotp' | 'secondFactorNeed'>,
  identities: Identities,
) {
  const { secondFactorNeed } = mfa;
  const nowSeconds = () => Math.floor(deps.now().getTime() / 1000);
  const next = (ar: AuthorizationRequest, browser: BrowserAccounts) => decide(ar, browser.list());
  /** The audit origin of a transition: the request, this platform and the client asking. */
  const originOf = (ar: AuthorizationRequest, ctx?: AuditContext): SecurityOrigin | undefined =>
    ctx && { ctx, platformId: ar.platformId, clientId: ar.clientId };
  const refuse = (
    step: PageStep,
    refusal: Omit<FormRefusal, 'ok'> & Partial<Pick<FormRefusal, 'ok'>>,
    values?: Refused['values'],
  ): Refused => ({ ...refusal, ok: false, kind: 'refused', step, values });

  /**
   * The user proved who they are: the browser signs in (new session id, the account first in its
   * list) and the request carries on from here with this account and auth_time. A second factor
   * would be asked by a check in ./decide.ts after this, before consent.
   */
  async function firstFactorVerified(
    ar: AuthorizationRequest,
    browser: BrowserAccounts,
    user: Pick<User, 'id' | 'email'>,
    amr: string[],
  ): Promise<Step> {
    const authTime = nowSeconds();
    Object.assign(ar, {
      userId: user.id,
      screen: undefined,
      signinEmail: undefined,
      amr,
      secondFactorMethod: undefined,
      upstream: undefined,
    });
    // A due second factor comes first; the browser counts as signed in only once it is verified.
    if ((await secondFactorNeed(ar.platformId, user.id, amr, ar.acrValues, ar)) !== 'none') {
      ar.secondFactorPending = true;
      return next(ar, browser);
    }
    await browser.signedIn(user, authTime, amr);
    Object.assign(ar, { authenticatedAt: authTime, secondFactorPending: undefined });
    return next(ar, browser);
  }

  /** A pinned sign-in (login_hint, id_token_hint, re-authentication) is for its email only. */
  const otherEmail = (at: { email?: string; emailLocked: boolean }, email: string) =>
    at.emailLocked && normalizeEmail(email) !== normalizeEmail(at.email ?? '');

  async function signOut(ar: AuthorizationRequest, browser: BrowserAccounts, userId: string, ctx?: AuditContext) {
    await authorize.signOut(ar.platformId, userId, browser.id(), originOf(ar, ctx), 'chooser');
    browser.signedOut(userId);
  }

  const verifiedOf = (up: UpstreamInProgress) => ({
    providerId: up.providerId,
    subject: up.subject,
    email: up.email,
    sealedTokens: up.sealedTokens,
  });

  /**
   * The account with the upstream's email proved it is theirs (password, passkey or the mailed
   * link): the identity is linked, and the account signs in through the upstream.
   */
  async function linkProven(
    ar: AuthorizationRequest,
    browser: BrowserAccounts,
    up: UpstreamInProgress & { link: { userId: string } },
    ctx?: AuditContext,
  ): Promise<Step | Refused> {
    const origin = originOf(ar, ctx);
    const linked = await identities.link(
      { id: up.link.userId, platformId: ar.platformId },
      { id: up.providerId, slug: up.slug },
      verifiedOf(up),
      origin,
    );
    ar.upstream = undefined;
    const user = await usersRepo.findById(deps.db, ar.platformId, up.link.userId);
    if (!linked || !user || user.disabledAt) {
      if (origin) await identities.failed(origin, up.slug, linked ? 'disabled' : 'already_linked', up.link.userId);
      return refuse(
        { kind: 'signin', emailLocked: false },
        {
          status: 400,
          error: linked ? 'link:errors.cannotSignIn' : 'link:errors.alreadyLinked',
          errorValues: { provider: up.providerName },
        },
      );
    }
    const { passwordHash: _h, disabledAt: _d, ...plain } = user;
    return firstFactorVerified(ar, browser, plain, up.amr);
  }

  /** The sign-up page of an upstream sign-in: the user is created with the identity linked. */
  async function upstreamSignUp(
    ar: AuthorizationRequest,
    browser: BrowserAccounts,
    up: UpstreamInProgress,
    at: At<'signup'>,
    platform: Platform,
    form: SignUpForm,
    source: string,
    ctx?: AuditContext,
  ): Promise<Step | Refused> {
    const email = up.email ?? form.email;
    const result = await identities.signUp(
      platform,
      { id: up.providerId, slug: up.slug },
      verifiedOf(up),
      {
        email,
        emailVerified: Boolean(up.email) && up.emailTrusted,
        password: form.password ? form.password : null,
        givenName: form.given_name,
        familyName: form.family_name,
        birthdate: form.birthdate,
        phoneNumber: form.phone_number,
      },
      source,
      originOf(ar, ctx),
      ar.locale,
    );
    if (!result.ok && result.lockedSeconds)
      return refuse(at, {
        status: 429,
        ...lockedMessage(result.lockedSeconds),
        retryAfterSeconds: result.lockedSeconds,
      });
    if (!result.ok && result.alreadyLinked) {
      ar.upstream = undefined;
      return refuse(
        { kind: 'signin', emailLocked: false },
        { status: 400, error: 'link:errors.alreadyLinkedSignIn', errorValues: { provider: up.providerName } },
      );
    }
    if (!result.ok)
      return refuse(
        at,
        { status: 400, error: null, fieldErrors: Object.fromEntries(result.errors.map((e) => [e.field, e.message])) },
        { email },
      );
    return firstFactorVerified(ar, browser, result.user, up.amr);
  }

  return {
    /** Where the interaction stands: the page to show, or the answer (GET, and before a form is read). */
    current: next,

    /** The links between the forms (sign in, create account, choose an account); the page is decided when shown. */
    switchForm(ar: AuthorizationRequest, form: 'signin' | 'signup' | 'chooser'): void {
      ar.upstream = undefined; // leaving an upstream's link or sign-up page drops it (nothing linked, nothing created)
      if (form === 'chooser') Object.assign(ar, { screen: undefined, signinEmail: undefined, userId: undefined });
      else if (!ar.loginHint && !ar.idTokenHintSub)
        Object.assign(ar, { screen: form, userId: ar.authenticatedAt ? ar.userId : undefined });
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
    async signOutAccount(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      userId: string,
      ctx?: AuditContext,
    ): Promise<Step> {
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
    async passwordSubmitted(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'signin'>,
      form: PasswordForm,
      source: string,
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      const lockedTo = {
        status: 400 as const,
        error: 'signin:errors.lockedTo',
        errorValues: { email: at.email ?? '' },
      };
      if (otherEmail(at, form.email)) return refuse(at, lockedTo);
      const result = await signInWithPassword(ar.platformId, form.email, form.password, source, originOf(ar, ctx));
      if (!result.ok) return refuse({ ...at, email: form.email }, result);
      if (at.emailLocked && ar.userId && ar.userId !== result.user.id) return refuse(at, lockedTo);
      return this.passwordVerified(ar, browser, result.user);
    },

    /**
     * The second-factor page's form: a code from the authenticator app or a recovery
     * code, throttled per account and source like passwords; a used TOTP step is refused.
     */
    async secondFactorSubmitted(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'second_factor'>,
      form: { method: string; code: string },
      source: string,
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      const method = form.method === 'recovery_code' ? 'recovery_code' : 'totp';
      const result = await mfa.verifySecondFactor(
        ar.platformId,
        at.user,
        { method, code: form.code },
        source,
        originOf(ar, ctx),
      );
      if (result.ok) return this.secondFactorVerified(ar, browser, at.user, [result.amr]);
      if (result.lockedSeconds)
        return refuse(at, {
          status: 429,
          ...lockedMessage(result.lockedSeconds),
          retryAfterSeconds: result.lockedSeconds,
        });
      return refuse(at, {
        status: 400,
        error: method === 'recovery_code' ? 'mfa:errors.wrongRecoveryCode' : 'mfa:errors.wrongCode',
      });
    },

    /** The second-factor page's links: the authenticator app's code, or a recovery code. */
    chooseSecondFactorMethod(ar: AuthorizationRequest, method: 'totp' | 'recovery_code'): void {
      ar.secondFactorMethod = method;
    },

    /**
     * "Use a passkey" on the second-factor page: one of this user's own passkeys, user
     * verification not needed (the password was the first factor). amr adds `hwk`/`swk` (+ `user`).
     */
    async passkeySecondFactorSubmitted(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'second_factor'>,
      platform: Platform,
      form: { credential: string; expectedChallenge?: string },
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      if (!form.expectedChallenge) return refuse(at, { status: 400, error: 'mfa:errors.passkeyExpired' });
      const result = await passkeys.authenticate(
        platform,
        { credential: form.credential, expectedChallenge: form.expectedChallenge, forUser: at.user },
        originOf(ar, ctx),
      );
      if (!result.ok || result.user.id !== at.user.id)
        return refuse(at, { status: 400, error: result.ok ? 'mfa:errors.passkeyNotForAccount' : result.message });
      return this.secondFactorVerified(ar, browser, at.user, result.amr);
    },

    /**
     * A second factor was verified (a TOTP or recovery code here; a passkey through s.passkeys): the
     * browser signs in with both factors in its amr, after this interaction's first factor or as a
     * step-up of the account's earlier sign-in. `methods`: RFC 8176 values (`otp`, `hwk`, `user`, …).
     */
    async secondFactorVerified(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      user: Pick<User, 'id' | 'email'>,
      methods: string[],
    ): Promise<Step> {
      const pending = ar.secondFactorPending && ar.userId === user.id;
      const before = pending ? (ar.amr ?? ['pwd']) : (browser.list().find((a) => a.userId === user.id)?.amr ?? ['pwd']);
      const amr = amrOf([...before, ...methods] as AuthMethod[]);
      const authTime = nowSeconds();
      await browser.signedIn(user, authTime, amr);
      Object.assign(ar, {
        userId: user.id,
        authenticatedAt: authTime,
        amr,
        secondFactorPending: undefined,
        secondFactorMethod: undefined,
      });
      return next(ar, browser);
    },

    /**
     * Policy `required` or a step-up, for a user without a second factor: the authenticator app set
     * up during sign-in, confirmed with its first code. Answers the recovery codes, to show once.
     */
    async totpSetupConfirmed(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'totp_setup'>,
      code: string,
      ctx?: AuditContext,
    ): Promise<{ kind: 'enrolled'; step: Step; recoveryCodes: string[]; replacedEarlier: boolean } | Refused> {
      const result = await mfa.confirmTotp(at.user.id, code, originOf(ar, ctx));
      if (!result.ok) return refuse(at, { status: 400, error: 'mfa:errors.setupCodeMismatch' });
      return {
        kind: 'enrolled',
        step: await this.secondFactorVerified(ar, browser, at.user, ['otp']),
        recoveryCodes: result.recoveryCodes,
        replacedEarlier: result.replacedEarlier,
      };
    },

    /** The password was right: the first factor. */
    passwordVerified(ar: AuthorizationRequest, browser: BrowserAccounts, user: User): Promise<Step> {
      return firstFactorVerified(ar, browser, user, ['pwd']);
    },

    /**
     * "Sign in with a passkey": the passkey alone, a first factor, so the authenticator must have
     * verified the user (s.passkeys checks it). amr: `hwk` or `swk`, and `user`.
     * `expectedChallenge` is this browser's single-use challenge (undefined: none, or expired).
     */
    async passkeySubmitted(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'signin'>,
      platform: Platform,
      form: { credential: string; expectedChallenge?: string },
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      if (!form.expectedChallenge) return refuse(at, { status: 400, error: 'signin:errors.passkeyExpired' });
      // A pinned sign-in refuses another account's passkey inside s.passkeys, before a sign-in is recorded.
      const onlyEmail = at.emailLocked ? (at.email ?? '') : undefined;
      const result = await passkeys.authenticate(
        platform,
        { credential: form.credential, expectedChallenge: form.expectedChallenge, onlyEmail },
        originOf(ar, ctx),
      );
      if (!result.ok) return refuse(at, { status: 400, error: result.message });
      return firstFactorVerified(ar, browser, result.user, result.amr);
    },

    /** The sign-up form (also posted from the sign-in page's step); the new account is signed in. */
    async signUpSubmitted(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'signin'> | At<'signup'>,
      platform: Platform,
      form: SignUpForm,
      source: string,
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      const signupStep: At<'signup'> = { kind: 'signup', email: at.email, emailLocked: at.emailLocked };
      if (ar.upstream && !ar.upstream.link)
        return upstreamSignUp(ar, browser, ar.upstream, signupStep, platform, form, source, ctx);
      if (otherEmail(at, form.email))
        return refuse(
          signupStep,
          { status: 400, error: 'signup:errors.lockedTo', errorValues: { email: at.email ?? '' } },
          { email: at.email },
        );
      const result = await signUpWithPassword(
        platform,
        {
          email: form.email,
          password: form.password,
          givenName: form.given_name,
          familyName: form.family_name,
          birthdate: form.birthdate,
          phoneNumber: form.phone_number,
        },
        source,
        originOf(ar, ctx),
        ar.locale,
      );
      if (!result.ok) return refuse(signupStep, result);
      return firstFactorVerified(ar, browser, result.user, ['pwd']);
    },

    /**
     * "Continue with …": what the upstream request carries — a pinned sign-in's email as
     * login_hint, and for a re-authentication (prompt=login, max_age) prompt=login and max_age, so
     * the upstream asks again too. An earlier upstream step of this interaction is dropped.
     */
    upstreamStarted(
      ar: AuthorizationRequest,
      at: At<'signin'> | At<'signup'>,
    ): { prompt?: string; maxAge?: number; loginHint?: string } {
      ar.upstream = undefined;
      const reauth = ar.prompts.includes('login') || ar.maxAge !== undefined;
      return {
        ...(reauth ? { prompt: 'login', ...(ar.maxAge !== undefined ? { maxAge: ar.maxAge } : {}) } : {}),
        ...(at.emailLocked && at.email ? { loginHint: at.email } : {}),
      };
    },

    /**
     * The upstream's verified answer. A linked identity signs its user in (a first
     * factor: the platform's MFA policy still applies unless the provider is trusted for the
     * upstream's MFA); an account with the same email must prove it first (link page), never linked
     * silently; nobody: the sign-up page, pre-filled. A pinned sign-in (login_hint, id_token_hint,
     * re-authentication) refuses any other account, and nothing is linked or created then.
     */
    async upstreamVerified(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'signin'> | At<'signup'>,
      provider: UpstreamProvider,
      profile: UpstreamProfile,
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      const origin = originOf(ar, ctx);
      const resolved = await identities.resolve(ar.platformId, profile);
      const lockedEmail = at.emailLocked ? (at.email ?? '') : undefined;
      const accountEmail = resolved.kind === 'new' ? profile.email : resolved.user.email;
      const otherAccount =
        lockedEmail !== undefined &&
        (!accountEmail ||
          normalizeEmail(accountEmail) !== normalizeEmail(lockedEmail) ||
          (resolved.kind !== 'new' && ar.userId !== undefined && ar.userId !== resolved.user.id));
      const userId = resolved.kind === 'new' ? null : resolved.user.id;
      if (otherAccount) {
        if (origin) await identities.failed(origin, provider.slug, 'other_account', userId);
        return refuse(at, { status: 400, error: 'signin:errors.lockedTo', errorValues: { email: lockedEmail } });
      }
      if (resolved.kind !== 'new' && resolved.disabled) {
        if (origin) await identities.failed(origin, provider.slug, 'disabled', userId);
        return refuse({ kind: 'signin', emailLocked: false }, { status: 400, error: 'link:errors.cannotSignIn' });
      }
      const amr = identities.amrFor(provider, profile);
      if (resolved.kind === 'linked') {
        await identities.signedIn(resolved.identity, provider, profile, amr, origin);
        return firstFactorVerified(ar, browser, resolved.user, amr);
      }
      ar.upstream = {
        providerId: provider.id,
        slug: provider.slug,
        providerName: provider.displayName,
        subject: profile.subject,
        email: profile.email,
        emailTrusted: provider.trustEmail && profile.emailVerified,
        givenName: profile.givenName,
        familyName: profile.familyName,
        amr,
        sealedTokens: identities.sealTokens(provider, profile),
        ...(resolved.kind === 'link_required'
          ? { link: { userId: resolved.user.id, email: resolved.user.email } }
          : {}),
      };
      return next(ar, browser);
    },

    /** The link page's password: the account's own, counted by the sign-in throttle. */
    async linkPasswordSubmitted(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'link_account'>,
      password: string,
      source: string,
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      const up = ar.upstream;
      if (!up?.link) return next(ar, browser);
      if (!password) return refuse(at, { status: 400, error: 'link:errors.enterPassword' });
      const origin = originOf(ar, ctx);
      const result = await signInWithPassword(
        ar.platformId,
        at.user.email,
        password,
        source,
        origin && { ...origin, purpose: 'confirm' },
      );
      if (!result.ok)
        return refuse(at, result.status === 429 ? result : { ...result, error: 'link:errors.wrongPassword' });
      if (result.user.id !== up.link.userId) return refuse(at, { status: 400, error: 'link:errors.wrongPassword' });
      return linkProven(ar, browser, { ...up, link: up.link }, ctx);
    },

    /** The link page's passkey: one of this account's own passkeys. */
    async linkPasskeySubmitted(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'link_account'>,
      platform: Platform,
      form: { credential: string; expectedChallenge?: string },
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      const up = ar.upstream;
      if (!up?.link) return next(ar, browser);
      if (!form.expectedChallenge) return refuse(at, { status: 400, error: 'mfa:errors.passkeyExpired' });
      const result = await passkeys.authenticate(
        platform,
        {
          credential: form.credential,
          expectedChallenge: form.expectedChallenge,
          forUser: at.user,
          purpose: 'confirm',
        },
        originOf(ar, ctx),
      );
      if (!result.ok || result.user.id !== up.link.userId)
        return refuse(at, { status: 400, error: result.ok ? 'mfa:errors.passkeyNotForAccount' : result.message });
      return linkProven(ar, browser, { ...up, link: up.link }, ctx);
    },

    /**
     * "Email me a link": a single-use link to the account's address; it works only in this browser
     * (its digest is kept with this interaction), so the mailbox's owner proves the account is theirs.
     * `linkUrl` builds the page's address from the secret. At most one mail a minute.
     */
    async linkMailRequested(
      ar: AuthorizationRequest,
      at: At<'link_account'>,
      platform: Platform,
      linkUrl: (token: string) => string,
    ): Promise<{ kind: 'mailed'; step: PageStep; notice: string }> {
      const up = ar.upstream;
      const now = deps.now().getTime();
      const notice = 'link:notice.mailSent'; // the page fills in the address, the provider and LINK_MAIL_TTL_MINUTES
      if (!up?.link || (up.mailedLink && now - up.mailedLink.sentAt < LINK_MAIL_INTERVAL_MS))
        return { kind: 'mailed', step: at, notice };
      const user = await usersRepo.findById(deps.db, ar.platformId, up.link.userId);
      if (!user) return { kind: 'mailed', step: at, notice };
      const token = randomToken(32);
      up.mailedLink = { digest: digest(token), expiresAt: now + LINK_MAIL_TTL_MINUTES * 60_000, sentAt: now };
      const { passwordHash: _h, disabledAt: _d, ...plain } = user;
      await identities.mailLink(platform, plain, up.providerName, linkUrl(token), LINK_MAIL_TTL_MINUTES, ar.locale);
      return { kind: 'mailed', step: at, notice };
    },

    /** The mailed link opened (in the browser that asked): used once, then the identity is linked. */
    async linkMailOpened(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      token: string,
      ctx?: AuditContext,
    ): Promise<Step | Refused> {
      const up = ar.upstream;
      const sent = up?.mailedLink;
      const matches =
        sent !== undefined && sent.expiresAt > deps.now().getTime() && safeEqual(digest(token), sent.digest);
      if (!up?.link || !matches) {
        const at = await next(ar, browser);
        return isPageStep(at) ? refuse(at, { status: 400, error: 'link:errors.linkExpired' }) : at;
      }
      up.mailedLink = undefined; // single use
      return linkProven(ar, browser, { ...up, link: up.link }, ctx);
    },

    /** Allow: remembered for these scopes (asked again only for new ones). */
    async consentGiven(
      ar: AuthorizationRequest,
      browser: BrowserAccounts,
      at: At<'consent'>,
      ctx?: AuditContext,
    ): Promise<Step> {
      await authorize.grantConsent(ar, at.user.id, originOf(ar, ctx));
      ar.consentGiven = true;
      return next(ar, browser);
    },

    /**
     * "Use another email" on a sign-in pinned by login_hint or id_token_hint: this request is for that
     * account only, so it ends and the app hears that the user wants another account (OIDC Core
     * 3.1.2.6 account_selection_required: the app may ask again without the hint).
     */
    anotherEmailChosen(at: At<'signin'>): Step | null {
      if (!at.emailLocked) return null;
      return {
        kind: 'error',
        code: 'account_selection_required',
        description: 'The user chose to sign in with another account',
      };
    },

    /** Deny: access_denied to the client (RFC 6749 §4.1.2.1). */
    consentDenied(): Step {
      return { kind: 'error', code: 'access_denied', description: 'The user denied the request' };
    },
  };
}

export type InteractionFlow = ReturnType<typeof createInteractionFlow>;
