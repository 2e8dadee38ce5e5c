import * as consents from '../../repositories/consent.repository';
import * as users from '../../repositories/user.repository';
import type { Deps } from '../deps';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import type { KnownAccount, Step } from '../../domain/interaction';
import { normalizeEmail } from '../../domain/user';

const loginRequired: Step = { kind: 'error', code: 'login_required', description: 'The user must sign in' };

/**
 * What the authorization request needs next, given the accounts of this browser: the spec's
 * account chooser, login_hint/id_token_hint pinning, prompt and max_age (DESIGN §6, §9).
 */
export function createNextStep(deps: Deps) {
  return async function nextStep(req: AuthorizationRequest, accounts: KnownAccount[]): Promise<Step> {
    const none = req.prompts.includes('none');
    const now = Math.floor(deps.now().getTime() / 1000);
    let userId = req.userId;

    // prompt=select_account forces the chooser, even over a login_hint (OIDC Core 3.1.2.1)
    if (!userId && req.prompts.includes('select_account') && !req.screen && accounts.length > 0) return { kind: 'chooser' };

    if (!userId) {
      const pinned = await pinnedAccount(req, accounts);
      if (pinned) {
        if (pinned.signedIn && pinned.userId) userId = pinned.userId;
        else if (none) return loginRequired;
        else return pinned.exists ? { kind: 'signin', email: pinned.email, emailLocked: true } : { kind: 'signup', email: pinned.email, emailLocked: true };
      } else if (none) {
        const signedIn = accounts.filter((a) => a.authTime !== null);
        if (signedIn.length === 0) return loginRequired;
        if (signedIn.length > 1) return { kind: 'error', code: 'account_selection_required', description: 'Several accounts are signed in; the user must choose one' };
        userId = signedIn[0].userId;
      } else if (accounts.length > 0 && !req.screen) {
        return { kind: 'chooser' };
      } else {
        const screen = req.screen ?? (req.action === 'register' ? 'signup' : 'signin');
        return { kind: screen, email: req.signinEmail, emailLocked: false };
      }
    }

    const account = accounts.find((a) => a.userId === userId);
    const user = await users.findById(deps.db, req.platformId, userId);
    const locked = Boolean(req.loginHint || req.idTokenHintSub);
    if (!user) return none ? loginRequired : { kind: 'signin', emailLocked: false };
    if (!account || account.authTime === null) return none ? loginRequired : { kind: 'signin', email: user.email, emailLocked: locked };
    const reauthRequired = req.prompts.includes('login') && !req.authenticatedAt;
    const tooOld = req.maxAge !== undefined && now - account.authTime > req.maxAge;
    if (reauthRequired || tooOld) return none ? loginRequired : { kind: 'signin', email: user.email, emailLocked: true };

    const granted = await consents.findScopes(deps.db, user.id, req.clientId);
    const missing = req.scopes.filter((s) => !granted.includes(s));
    const forceConsent = req.prompts.includes('consent') && !req.consentGiven;
    if ((missing.length > 0 || forceConsent) && !req.consentGiven) {
      return none ? { kind: 'error', code: 'consent_required', description: 'The user must consent' } : { kind: 'consent', user };
    }
    return { kind: 'complete', user, authTime: account.authTime };
  };

  /** login_hint (email) or id_token_hint (sub) pin one account and skip the chooser. */
  async function pinnedAccount(req: AuthorizationRequest, accounts: KnownAccount[]) {
    if (req.idTokenHintSub) {
      const known = accounts.find((a) => a.userId === req.idTokenHintSub);
      if (known) return { userId: known.userId, email: known.email, signedIn: known.authTime !== null, exists: true };
      const user = await users.findById(deps.db, req.platformId, req.idTokenHintSub);
      return { userId: req.idTokenHintSub, email: user?.email, signedIn: false, exists: Boolean(user) };
    }
    if (req.loginHint) {
      const hint = normalizeEmail(req.loginHint);
      const known = accounts.find((a) => normalizeEmail(a.email) === hint);
      if (known) return { userId: known.userId, email: req.loginHint, signedIn: known.authTime !== null, exists: true };
      const user = await users.findByEmail(deps.db, req.platformId, req.loginHint);
      return { userId: user?.id, email: req.loginHint, signedIn: false, exists: Boolean(user) };
    }
    return undefined;
  }
}

export type NextStep = ReturnType<typeof createNextStep>;
