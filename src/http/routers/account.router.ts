import { Router, type Response } from 'express';
import type { Services } from '../../services';
import { presentChooserRows } from '../../presenters/account.presenter';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { accountsOf, regenerateKeepingData, rememberSignIn } from '../browser-session';
import { attemptSource } from '../attempt-source';
import { renderPage } from '../pages/render';
import { startAccountSecondFactor } from '../mfa-session';
import { accountUrl } from '../urls';
import { chooseAccount, currentAccount, field, redirectSaved, signedInAccounts } from '../account-session';
import { accountPageRenderer } from '../pages/account.page';
import { renderAccountSignIn } from '../passkeys-page';
import { securityOrigin } from '../security-origin';
import { takeFrontchannelFrames } from '../frontchannel-frames';

/**
 * The account page of a signed-in user (`/account?platform_guid=G`): the browser session's
 * signed-in account, or the one picked when several are. Forms post to ./account-actions.router.ts (the page: ../pages/account.page.ts).
 */
export function accountRouter(s: Services): Router {
  const r = Router();
  const { baseUrl } = s.deps.config;
  const platformOf = (res: Response) => res.locals.platform;

  const renderAccount = accountPageRenderer(s);

  r.get('/account', resolvePlatform(s), issueCsrf, async (req, res) => {
    const p = platformOf(res);
    const account = currentAccount(req, p.id);
    if (account === undefined) return redirectSaved(req, res, accountUrl(p.id, '/signin'));
    if (account === 'choose') return redirectSaved(req, res, accountUrl(p.id, '/choose'));
    const user = await s.account.security.findUser(p.id, account.userId);
    if (!user) return redirectSaved(req, res, accountUrl(p.id, '/signin'));
    await renderAccount(req, res, user);
  });

  r.get('/account/choose', resolvePlatform(s), issueCsrf, async (req, res) => {
    const p = platformOf(res);
    const signedIn = signedInAccounts(req, p.id);
    if (signedIn.length === 0) return redirectSaved(req, res, accountUrl(p.id, '/signin'));
    const users = await s.users.findManyByIds(p.id, signedIn.map((a) => a.userId));
    renderPage(res, 'account-choose', {
      title: 'Choose an account', platformName: p.name, csrfToken: res.locals.csrfToken, action: accountUrl(p.id, '/choose'),
      accounts: presentChooserRows(users, baseUrl), signinUrl: accountUrl(p.id, '/signin'),
    });
  });

  r.post('/account/choose', resolvePlatform(s), requireCsrf, async (req, res) => {
    const p = platformOf(res);
    const picked = signedInAccounts(req, p.id).find((a) => a.userId === field(req.body, 'account'));
    if (picked) chooseAccount(req, p.id, picked.userId);
    await redirectSaved(req, res, accountUrl(p.id));
  });

  // The sign-in page with "Sign in with a passkey" (src/http/passkeys-page.ts; its routes: ./passkeys.router.ts).
  const renderSignIn = (res: Response, values: { email: string; error: string | null }, status = 200) => renderAccountSignIn(s, res, values, status);

  r.get('/account/signin', resolvePlatform(s), issueCsrf, async (req, res) => {
    // A remembered, signed-out account of this browser pre-fills the email.
    const remembered = accountsOf(req, platformOf(res).id).find((a) => a.authTime === null);
    await renderSignIn(res, { email: remembered?.email ?? '', error: null });
  });

  r.post('/account/signin', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = platformOf(res);
    const email = field(req.body, 'email').trim();
    const password = field(req.body, 'password');
    // The same sign-in as the authorization's sign-in page (throttled per account+source and per source).
    const result = await s.signInWithPassword(p.id, email, password, attemptSource(req), securityOrigin(req, p.id));
    if (!result.ok) {
      if (result.retryAfterSeconds) res.set('Retry-After', String(result.retryAfterSeconds));
      return renderSignIn(res, { email, error: result.error }, result.status);
    }
    const { user } = result;
    // DESIGN §15: a user with a second factor gives it before this browser is signed in (account-mfa.router.ts).
    if ((await s.mfa.secondFactorNeed(p.id, user.id, ['pwd'])) === 'second_factor') {
      startAccountSecondFactor(req, p.id, user);
      return redirectSaved(req, res, accountUrl(p.id, '/second-factor'));
    }
    await regenerateKeepingData(req);
    rememberSignIn(req, p.id, { userId: user.id, email: user.email }, Math.floor(s.deps.now().getTime() / 1000));
    chooseAccount(req, p.id, user.id);
    await redirectSaved(req, res, accountUrl(p.id));
  });

  r.get('/account/signed-out', resolvePlatform(s), (req, res) => {
    const p = platformOf(res);
    const everywhere = req.query.everywhere === '1';
    takeFrontchannelFrames(req, res, p.id); // the apps signed out of through this browser (hidden iframes)
    renderPage(res, 'signed-out', {
      title: 'Signed out', platformName: p.name, heading: 'You are signed out',
      message: everywhere ? 'You are signed out on every device, and apps will ask you to sign in again.' : 'You are signed out on this browser.',
      continueUrl: accountUrl(p.id, '/signin'),
    });
  });

  return r;
}
