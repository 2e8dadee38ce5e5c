import * as consents from '../../repositories/consent.repository';
import * as users from '../../repositories/user.repository';
import { consentEntriesOf, type AuthorizationRequest } from '../../domain/authorization-request';
import type { FinalStep, KnownAccount, PageStep, Step } from '../../domain/interaction';
import { normalizeEmail, type User } from '../../domain/user';
import type { Deps } from '../deps';
import { createSecondFactorRequirement, type SecondFactorNeed } from '../mfa/requirement';

const loginRequired: FinalStep = { kind: 'error', code: 'login_required', description: 'The user must sign in' };

/**
 * prompt=none: the page a check asks for becomes the error the client gets instead (OIDC Core
 * 3.1.2.6). Typed over every page, so a new page must say what it becomes.
 */
const PROMPT_NONE: Record<PageStep['kind'], FinalStep> = {
  signin: loginRequired,
  signup: loginRequired,
  chooser: {
    kind: 'error',
    code: 'account_selection_required',
    description: 'Several accounts are signed in; the user must choose one',
  },
  consent: { kind: 'error', code: 'consent_required', description: 'The user must consent' },
  second_factor: { kind: 'error', code: 'interaction_required', description: 'The user must verify a second factor' },
  totp_setup: { kind: 'error', code: 'interaction_required', description: 'The user must set up a second factor' },
  link_account: { kind: 'error', code: 'interaction_required', description: 'The user must link an upstream account' },
};

/** What the checks on a known account see. */
export interface AccountContext {
  ar: AuthorizationRequest;
  /** The account as this browser knows it, if it does. */
  account: KnownAccount | undefined;
  user: User;
  /** Now, in seconds. */
  now: number;
}

/** A check on the chosen account: the page it needs, or undefined when it is satisfied. */
export type AccountCheck = (c: AccountContext) => PageStep | undefined | Promise<PageStep | undefined>;

/**
 * What an authorization needs next, given the accounts of this browser: the spec's account chooser,
 * login_hint/id_token_hint pinning, prompt and max_age, consent. Modelled on
 * node-oidc-provider's prompt checks: first which account, then a table of small named checks on
 * it, in order; the first that asks for a page wins, and when none does the code is issued.
 */
export function createDecide(deps: Deps) {
  /** The account must be signed in on this browser (a listed, signed-out one gets its email pre-filled). */
  const signedInHere: AccountCheck = ({ ar, account, user }) =>
    !account || account.authTime === null
      ? { kind: 'signin', email: user.email, emailLocked: Boolean(ar.loginHint || ar.idTokenHintSub) }
      : undefined;

  /** prompt=login (and max_age=0) once per request; max_age against auth_time (OIDC Core 3.1.2.1). */
  const recentEnough: AccountCheck = ({ ar, account, user, now }) => {
    const reauthRequired = ar.prompts.includes('login') && !ar.authenticatedAt;
    // A sign-in made during this very request satisfies max_age, however many seconds it took
    // (max_age=0 would otherwise ask again whenever a second boundary passed in between).
    const signedInDuringRequest = ar.authenticatedAt !== undefined && account!.authTime === ar.authenticatedAt;
    const tooOld = ar.maxAge !== undefined && !signedInDuringRequest && now - account!.authTime! > ar.maxAge;
    return reauthRequired || tooOld ? { kind: 'signin', email: user.email, emailLocked: true } : undefined;
  };

  const secondFactorNeed = createSecondFactorRequirement(deps);
  const factorPage = (need: SecondFactorNeed, user: User): PageStep | undefined =>
    need === 'none'
      ? undefined
      : { kind: need === 'enrol' ? 'totp_setup' : 'second_factor', user: { id: user.id, email: user.email } };

  /**
   * This interaction verified the first factor and a second one is due (transitions.ts
   * firstFactorVerified). Should none be due any more (the policy turned off meanwhile), the browser
   * is still not signed in: signedInHere asks for the first factor again.
   */
  const secondFactorPending: AccountCheck = async ({ ar, user }) =>
    ar.secondFactorPending && ar.userId === user.id
      ? factorPage(await secondFactorNeed(ar.platformId, user.id, ar.amr ?? ['pwd'], ar.acrValues, ar), user)
      : undefined;

  /**
   * A signed-in account whose sign-in was not multi-factor, when the user has a second factor, the
   * policy is `required` or acr_values asks for `urn:latchkey:acr:mfa`: a step-up.
   */
  const strongEnough: AccountCheck = async ({ ar, account, user }) =>
    factorPage(await secondFactorNeed(ar.platformId, user.id, account?.amr ?? ['pwd'], ar.acrValues, ar), user);

  /**
   * Consent once per scope and resource scope (asked again only for new ones), or every time with prompt=consent. No
   * client is exempt by policy, a self-registered one least of all; the person's own remembered
   * grant for this very client counts for every client (docs/decisions.md, "Agent-ready authorization").
   */
  const consented: AccountCheck = async ({ ar, user }) => {
    if (ar.consentGiven) return undefined;
    // A device is approved every time, whatever was remembered: the person must see which device
    // and code they approve (RFC 8628 §5.4, remote phishing).
    if (ar.device) return { kind: 'consent', user: { id: user.id, email: user.email } };
    const granted = await consents.findScopes(deps.db, user.id, ar.clientId);
    const missing = consentEntriesOf(ar).filter((s) => !granted.includes(s));
    return missing.length > 0 || ar.prompts.includes('consent')
      ? { kind: 'consent', user: { id: user.id, email: user.email } }
      : undefined;
  };

  /** The checks on the chosen account, in order. A new step (a second factor after recentEnough) goes here. */
  const ACCOUNT_CHECKS: AccountCheck[] = [secondFactorPending, signedInHere, recentEnough, strongEnough, consented];

  return async function decide(ar: AuthorizationRequest, accounts: KnownAccount[]): Promise<Step> {
    const none = ar.prompts.includes('none');
    const page = (step: PageStep): Step => (none ? PROMPT_NONE[step.kind] : step);

    const which = await whichAccount(ar, accounts, none);
    if ('step' in which)
      return which.step.kind === 'complete' || which.step.kind === 'error' ? which.step : page(which.step);

    const user = await users.findById(deps.db, ar.platformId, which.userId);
    if (!user) return page({ kind: 'signin', emailLocked: false });
    const account = accounts.find((a) => a.userId === which.userId);
    const context: AccountContext = { ar, account, user, now: Math.floor(deps.now().getTime() / 1000) };
    for (const check of ACCOUNT_CHECKS) {
      const step = await check(context);
      if (step) return page(step);
    }
    return { kind: 'complete', user, authTime: account!.authTime!, amr: account!.amr ?? ['pwd'] };
  };

  /** Which account the request is for: already chosen, pinned by a hint, the only one (prompt=none), or a page. */
  async function whichAccount(
    ar: AuthorizationRequest,
    accounts: KnownAccount[],
    none: boolean,
  ): Promise<{ userId: string } | { step: Step }> {
    // An upstream sign-in waits on its page: proof for the account with its email, or the sign-up.
    if (ar.upstream?.link)
      return {
        step: {
          kind: 'link_account',
          user: { id: ar.upstream.link.userId, email: ar.upstream.link.email },
          providerName: ar.upstream.providerName,
        },
      };
    if (ar.upstream)
      return {
        step: { kind: 'signup', email: ar.upstream.email ?? undefined, emailLocked: Boolean(ar.upstream.email) },
      };
    if (ar.userId) return { userId: ar.userId };
    // prompt=select_account forces the chooser, even over a login_hint (OIDC Core 3.1.2.1)
    if (ar.prompts.includes('select_account') && !ar.screen && accounts.length > 0)
      return { step: { kind: 'chooser' } };
    const pinned = await pinnedAccount(ar, accounts);
    if (pinned) {
      if (pinned.signedIn && pinned.userId) return { userId: pinned.userId };
      return { step: { kind: pinned.exists ? 'signin' : 'signup', email: pinned.email, emailLocked: true } };
    }
    if (none) {
      const signedIn = accounts.filter((a) => a.authTime !== null);
      if (signedIn.length === 0) return { step: loginRequired };
      if (signedIn.length > 1) return { step: PROMPT_NONE.chooser };
      return { userId: signedIn[0].userId };
    }
    if (accounts.length > 0 && !ar.screen) return { step: { kind: 'chooser' } };
    return {
      step: {
        kind: ar.screen ?? (ar.action === 'register' ? 'signup' : 'signin'),
        email: ar.signinEmail,
        emailLocked: false,
      },
    };
  }

  /** login_hint (email) or id_token_hint (sub) pin one account and skip the chooser. */
  async function pinnedAccount(ar: AuthorizationRequest, accounts: KnownAccount[]) {
    if (ar.idTokenHintSub) {
      const known = accounts.find((a) => a.userId === ar.idTokenHintSub);
      if (known) return { userId: known.userId, email: known.email, signedIn: known.authTime !== null, exists: true };
      const user = await users.findById(deps.db, ar.platformId, ar.idTokenHintSub);
      return { userId: ar.idTokenHintSub, email: user?.email, signedIn: false, exists: Boolean(user) };
    }
    if (ar.loginHint) {
      const hint = normalizeEmail(ar.loginHint);
      const known = accounts.find((a) => normalizeEmail(a.email) === hint);
      if (known) return { userId: known.userId, email: ar.loginHint, signedIn: known.authTime !== null, exists: true };
      const user = await users.findByEmail(deps.db, ar.platformId, ar.loginHint);
      return { userId: user?.id, email: ar.loginHint, signedIn: false, exists: Boolean(user) };
    }
    return undefined;
  }
}

export type Decide = ReturnType<typeof createDecide>;
