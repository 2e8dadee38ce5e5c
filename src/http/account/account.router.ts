import { Router, type Request, type Response } from 'express';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import { presentChooserRows } from '../../presenters/account.presenter';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { accountsOf, regenerateKeepingData, rememberSignIn } from '../session/browser-session';
import { attemptSource } from '../request/attempt-source';
import { renderPage } from '../pages/render';
import { startAccountSecondFactor } from '../session/mfa-session';
import { accountSectionUrl, accountUrl, requestedSection, withSection } from '../urls';
import { chooseAccount, currentAccount, field, redirectSaved, signedInAccounts } from '../session/account-session';
import { accountPageRenderer } from '../pages/account.page';
import { renderAccountSignIn } from '../pages/passkeys';
import { securityOrigin } from '../request/security-origin';
import { takeFrontchannelFrames } from '../oauth/frontchannel-frames';
import { ruleValues } from '../../services/user-rules';

/**
 * The account page of a signed-in user (`/account?platform_guid=G`): the browser session's
 * signed-in account, or the one picked when several are. Forms post to ./account-actions.router.ts (the page: ../pages/account.page.ts).
 */
export function accountRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const { baseUrl } = deps.config;
  const platformOf = (res: Response) => res.locals.platform;

  const renderAccount = accountPageRenderer(s, deps);

  r.get('/account', resolvePlatform(s), issueCsrf, async (req, res) => {
    const p = platformOf(res);
    const account = currentAccount(req, p.id);
    // The tab asked for goes along, so the sign-in or the choice ends on it.
    const section = requestedSection(req.query);
    if (account === undefined) return redirectSaved(req, res, withSection(accountUrl(p.id, '/signin'), section));
    if (account === 'choose') return redirectSaved(req, res, withSection(accountUrl(p.id, '/choose'), section));
    const user = await s.account.security.findUser(p.id, account.userId);
    if (!user) return redirectSaved(req, res, withSection(accountUrl(p.id, '/signin'), section));
    await renderAccount(req, res, user);
  });

  r.get('/account/choose', resolvePlatform(s), issueCsrf, async (req, res) => {
    const p = platformOf(res);
    const signedIn = signedInAccounts(req, p.id);
    const section = requestedSection(req.query);
    if (signedIn.length === 0) return redirectSaved(req, res, withSection(accountUrl(p.id, '/signin'), section));
    const users = await s.users.findManyByIds(
      p.id,
      signedIn.map((a) => a.userId),
    );
    renderPage(res, 'account-choose', {
      title: res.locals.t('account:choose.title'),
      platformName: p.name,
      csrfToken: res.locals.csrfToken,
      action: withSection(accountUrl(p.id, '/choose'), section),
      accounts: presentChooserRows(users, baseUrl),
      signinUrl: withSection(accountUrl(p.id, '/signin'), section),
    });
  });

  r.post('/account/choose', resolvePlatform(s), requireCsrf, async (req, res) => {
    const p = platformOf(res);
    const picked = signedInAccounts(req, p.id).find((a) => a.userId === field(req.body, 'account'));
    if (picked) chooseAccount(req, p.id, picked.userId);
    await redirectSaved(req, res, accountSectionUrl(p.id, requestedSection(req.query)));
  });

  // The sign-in page with "Sign in with a passkey" (src/http/pages/passkeys.ts; its routes: ./passkeys.router.ts).
  const renderSignIn = (
    res: Response,
    values: { email: string; error: string | null; errorValues?: Record<string, string | number> },
    status = 200,
  ) => renderAccountSignIn(s, res, values, status);

  r.get('/account/signin', resolvePlatform(s), issueCsrf, async (req, res) => {
    // A remembered, signed-out account of this browser pre-fills the email.
    const remembered = accountsOf(req, platformOf(res).id).find((a) => a.authTime === null);
    await renderSignIn(res, { email: remembered?.email ?? '', error: null });
  });

  /**
   * A password that signed in (or signed up): the second factor when the account has one (see
   * account-mfa.router.ts), else this browser is signed in; either way it ends on the tab asked for.
   */
  const passwordAccepted = async (req: Request, res: Response, user: { id: string; email: string }) => {
    const p = platformOf(res);
    const section = requestedSection(req.query);
    if ((await s.mfa.secondFactorNeed(p.id, user.id, ['pwd'])) === 'second_factor') {
      startAccountSecondFactor(req, p.id, user, undefined, section);
      return redirectSaved(req, res, accountUrl(p.id, '/second-factor'));
    }
    await regenerateKeepingData(req);
    rememberSignIn(req, p.id, { userId: user.id, email: user.email }, Math.floor(deps.now().getTime() / 1000));
    chooseAccount(req, p.id, user.id);
    await redirectSaved(req, res, accountSectionUrl(p.id, section));
  };

  r.post('/account/signin', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = platformOf(res);
    const email = field(req.body, 'email').trim();
    const password = field(req.body, 'password');
    // The same sign-in as the authorization's sign-in page (throttled per account+source and per source).
    const result = await s.signInWithPassword(p.id, email, password, attemptSource(req), securityOrigin(req, p.id));
    if (!result.ok) {
      if (result.retryAfterSeconds) res.set('Retry-After', String(result.retryAfterSeconds));
      return renderSignIn(res, { email, error: result.error, errorValues: result.errorValues }, result.status);
    }
    await passwordAccepted(req, res, result.user);
  });

  // "Create account" under the account page's sign-in (docs/decisions.md, "Page usability findings"): the sign-up form of the
  // authorization's pages, without an app; the new account lands on its account page, signed in.
  const renderSignUp = (
    res: Response,
    extra: { values?: Record<string, string>; error?: string | null; fieldErrors?: Record<string, string> } = {},
    status = 200,
  ) => {
    const p = platformOf(res);
    const t = res.locals.t;
    const section = requestedSection(res.req.query);
    renderPage(
      res,
      'signup',
      {
        title: t('account:signup.title'),
        action: withSection(accountUrl(p.id, '/signup'), section),
        emailLocked: false,
        signinUrl: withSection(accountUrl(p.id, '/signin'), section),
        passwordMinLength: deps.config.passwordMinLength,
        error: extra.error ?? null,
        fieldErrors: Object.fromEntries(
          Object.entries(extra.fieldErrors ?? {}).map(([k, m]) => [k, t(m, ruleValues(deps.config.passwordMinLength))]),
        ), // {{min}}, {{minAge}}: user-rules.ts
        values: extra.values ?? { email: '', given_name: '', family_name: '', birthdate: '', phone_number: '' },
        viaProvider: null,
        passwordOptional: false,
        upstreams: [],
      },
      status,
    );
  };

  r.get('/account/signup', resolvePlatform(s), issueCsrf, (_req, res) => renderSignUp(res));

  r.post('/account/signup', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = platformOf(res);
    const values = {
      email: field(req.body, 'email').trim(),
      given_name: field(req.body, 'given_name'),
      family_name: field(req.body, 'family_name'),
      birthdate: field(req.body, 'birthdate'),
      phone_number: field(req.body, 'phone_number'),
    };
    const result = await s.signUpWithPassword(
      p,
      {
        email: values.email,
        password: field(req.body, 'password'),
        givenName: values.given_name,
        familyName: values.family_name,
        birthdate: values.birthdate,
        phoneNumber: values.phone_number || undefined,
      },
      attemptSource(req),
      securityOrigin(req, p.id),
      res.locals.locale,
    );
    if (!result.ok) {
      if (result.retryAfterSeconds) res.set('Retry-After', String(result.retryAfterSeconds));
      return renderSignUp(
        res,
        {
          values,
          error: result.error ? res.locals.t(result.error, result.errorValues ?? {}) : null,
          fieldErrors: result.fieldErrors,
        },
        result.status,
      );
    }
    // An existing account's own password signs in (sign-in.ts), like the sign-in form.
    await passwordAccepted(req, res, result.user);
  });

  r.get('/account/signed-out', resolvePlatform(s), (req, res) => {
    const p = platformOf(res);
    const everywhere = req.query.everywhere === '1';
    takeFrontchannelFrames(req, res, p.id); // the apps signed out of through this browser (hidden iframes)
    const t = res.locals.t;
    renderPage(res, 'signed-out', {
      title: t('account:signedOut.title'),
      platformName: p.name,
      heading: t('account:signedOut.heading'),
      message: t(everywhere ? 'account:signedOut.everywhere' : 'account:signedOut.here'),
      continueUrl: accountUrl(p.id, '/signin'),
    });
  });

  return r;
}
