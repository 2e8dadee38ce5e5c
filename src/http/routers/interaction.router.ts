import { Router, type Request, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../../errors';
import type { Services } from '../../services';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import type { Step } from '../../domain/interaction';
import { normalizeEmail } from '../../domain/user';
import { presentChooserAccounts, presentConsentScopes } from '../../presenters/pages.presenter';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { allowFormRedirectTo } from '../middleware/security-headers';
import {
  accountsOf, browserId, endInteraction, findInteraction, forgetAccount, markSignedOut, regenerateKeepingData, rememberSignIn, restartOfEnded, saveInteraction,
} from '../browser-session';
import { createAdvance, redirectToClient } from './authorize.router';
import { attemptSource, tooManyAttempts } from '../attempt-source';
import { hostedFormBody } from '../hosted-forms';

const field = (body: unknown, name: string): string => {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v.slice(0, 1024) : '';
};

/** The hosted pages of an authorization: sign-in, sign-up, chooser, consent (DESIGN §9). */
export function interactionRouter(s: Services): Router {
  const r = Router();
  const advance = createAdvance(s);
  const { baseUrl } = s.deps.config;
  const now = () => Math.floor(s.deps.now().getTime() / 1000);

  /** Loads the interaction into res.locals; a lost one restarts from its original query or explains. */
  const loadInteraction: RequestHandler = async (req, res, next) => {
    const ar = findInteraction(req, String(req.params.iid));
    if (ar) {
      res.locals.ar = ar;
      res.locals.platform = (await s.platforms.findPlatform(ar.platformId))!;
      res.locals.restart = ar.restart;
      return next();
    }
    const restart = req.method === 'POST' ? field(req.body, 'restart') : restartOfEnded(req, String(req.params.iid)); // GET: Back to a finished page
    if (restart) return res.redirect(303, `/oauth/authorize?${restart}`);
    throw new OAuthError('invalid_request', 'This sign-in page has expired. Go back to the app you came from and start again.');
  };

  /** A lost or mismatched CSRF token on a known interaction restarts it rather than failing. */
  const csrfOrRestart: RequestHandler = (req, res, next) => {
    try {
      requireCsrf(req, res, next);
    } catch (err) {
      const restart = field(req.body, 'restart');
      if (restart) return res.redirect(303, `/oauth/authorize?${restart}`);
      throw err;
    }
  };

  const ar = (res: Response) => res.locals.ar as AuthorizationRequest;
  const page = (iid: string, suffix = '') => `/interaction/${iid}${suffix}`;

  async function render(req: Request, res: Response, step: Step, extra: Record<string, unknown> = {}, status = 200) {
    const a = ar(res);
    allowFormRedirectTo(res, a.redirectUri); // every form here may end at the client (CSP form-action)
    const common = { platformName: res.locals.platform.name, csrfToken: res.locals.csrfToken, restart: a.restart };
    const hasAccounts = accountsOf(req, a.platformId).length > 0;
    switch (step.kind) {
      case 'signin':
        return res.status(status).render('signin', {
          ...common, title: 'Sign in', action: page(a.id, '/signin'), email: step.email ?? '', emailLocked: step.emailLocked,
          signupUrl: page(a.id, '/signup'), forgotUrl: page(a.id, '/forgot'), chooserUrl: hasAccounts && !step.emailLocked ? page(a.id, '/chooser') : null, error: null, ...extra,
        });
      case 'signup':
        return res.status(status).render('signup', {
          ...common, title: 'Create account', action: page(a.id, '/signup'), emailLocked: step.emailLocked, signinUrl: page(a.id, '/signin'),
          passwordMinLength: s.deps.config.passwordMinLength, error: null, fieldErrors: {},
          values: { email: step.email ?? '', given_name: a.prefill.givenName ?? '', family_name: a.prefill.familyName ?? '', birthdate: '', phone_number: a.prefill.phoneNumber ?? '' },
          ...extra,
        });
      case 'chooser': {
        const accounts = accountsOf(req, a.platformId);
        const users = await s.users.findManyByIds(a.platformId, accounts.map((x) => x.userId));
        return res.status(status).render('chooser', {
          ...common, title: 'Choose an account', action: page(a.id, '/chooser'), clientName: a.clientName, accounts: presentChooserAccounts(accounts, users, baseUrl),
        });
      }
      case 'consent':
        return res.status(status).render('consent', {
          ...common, title: 'Allow access', action: page(a.id, '/consent'), clientName: a.clientName, userEmail: step.user.email, scopes: presentConsentScopes(a.scopes),
        });
      default:
        return advance(req, res, a);
    }
  }

  const current = (req: Request, res: Response) => s.authorize.nextStep(ar(res), accountsOf(req, ar(res).platformId));

  /** Signed in: a new session id, the account first in the list, the interaction carries on. */
  async function completeSignIn(req: Request, res: Response, user: { id: string; email: string }) {
    const a = ar(res);
    await regenerateKeepingData(req);
    const authTime = now();
    rememberSignIn(req, a.platformId, { userId: user.id, email: user.email }, authTime);
    Object.assign(a, { userId: user.id, authenticatedAt: authTime, screen: undefined, signinEmail: undefined });
    saveInteraction(req, a);
    res.locals.csrfToken = req.session.csrf;
    return advance(req, res, a);
  }

  // Every form POST below: a form body, each field once and bounded (zod), before anything else.
  r.post('/interaction/:iid/:form', hostedFormBody);

  r.get('/interaction/:iid', loadInteraction, issueCsrf, async (req, res) => render(req, res, await current(req, res)));

  // Links between the forms: remembered so a reload stays on the chosen form.
  for (const screen of ['signin', 'signup'] as const) {
    r.get(`/interaction/:iid/${screen}`, loadInteraction, (req, res) => {
      const a = ar(res);
      if (!a.loginHint && !a.idTokenHintSub) Object.assign(a, { screen, userId: a.authenticatedAt ? a.userId : undefined });
      saveInteraction(req, a);
      res.redirect(303, page(a.id));
    });
  }
  r.get('/interaction/:iid/chooser', loadInteraction, (req, res) => {
    const a = ar(res);
    Object.assign(a, { screen: undefined, signinEmail: undefined, userId: undefined });
    saveInteraction(req, a);
    res.redirect(303, page(a.id));
  });

  r.post('/interaction/:iid/signin', loadInteraction, issueCsrf, csrfOrRestart, async (req, res) => {
    const a = ar(res);
    const step = await current(req, res);
    if (step.kind !== 'signin') return render(req, res, step);
    const email = field(req.body, 'email').trim();
    const password = field(req.body, 'password');
    if (step.emailLocked && normalizeEmail(email) !== normalizeEmail(step.email ?? '')) {
      return render(req, res, step, { error: `This sign-in is for ${step.email}.` }, 400);
    }
    if (!email || !password) return render(req, res, { ...step, email }, { error: 'Enter your email and password.' }, 400);
    // Throttled per account+source and per source; no password is checked while locked (issue 5 §2).
    const attempt = await s.throttle.attemptSignIn(a.platformId, email, password, attemptSource(req));
    if (!attempt.ok && attempt.lockedSeconds) {
      res.set('Retry-After', String(attempt.lockedSeconds));
      return render(req, res, { ...step, email }, { error: tooManyAttempts(attempt.lockedSeconds) }, 429);
    }
    if (!attempt.ok) return render(req, res, { ...step, email }, { error: 'Incorrect email or password.' }, 400);
    const { user } = attempt;
    if (step.emailLocked && a.userId && a.userId !== user.id) return render(req, res, step, { error: `This sign-in is for ${step.email}.` }, 400);
    return completeSignIn(req, res, user);
  });

  r.post('/interaction/:iid/signup', loadInteraction, issueCsrf, csrfOrRestart, async (req, res) => {
    const a = ar(res);
    const step = await current(req, res);
    if (step.kind !== 'signup' && step.kind !== 'signin') return render(req, res, step);
    const values = {
      email: field(req.body, 'email').trim(),
      given_name: field(req.body, 'given_name'),
      family_name: field(req.body, 'family_name'),
      birthdate: field(req.body, 'birthdate'),
      phone_number: field(req.body, 'phone_number'),
    };
    const signupStep: Step = { kind: 'signup', email: step.email, emailLocked: step.emailLocked };
    if (step.emailLocked && normalizeEmail(values.email) !== normalizeEmail(step.email ?? '')) {
      return render(req, res, signupStep, { values: { ...values, email: step.email }, error: `This sign-up is for ${step.email}.` }, 400);
    }
    const result = await s.throttle.attemptSignUp(a.platformId, attemptSource(req), () => s.users.createUser(a.platformId, {
      email: values.email,
      password: field(req.body, 'password'),
      givenName: values.given_name,
      familyName: values.family_name,
      birthdate: values.birthdate,
      phoneNumber: values.phone_number,
    }));
    if (!result.ok && 'lockedSeconds' in result) {
      res.set('Retry-After', String(result.lockedSeconds));
      return render(req, res, signupStep, { values, error: tooManyAttempts(result.lockedSeconds) }, 429);
    }
    if (!result.ok) {
      const fieldErrors = Object.fromEntries(result.errors.map((e) => [e.field, e.message]));
      return render(req, res, signupStep, { values, fieldErrors, error: null }, 400);
    }
    await s.account.emailVerification.sendAfterSignUp(res.locals.platform, result.user);
    return completeSignIn(req, res, result.user);
  });

  r.post('/interaction/:iid/consent', loadInteraction, issueCsrf, csrfOrRestart, async (req, res) => {
    const a = ar(res);
    const step = await current(req, res);
    if (step.kind !== 'consent') return render(req, res, step);
    if (field(req.body, 'decision') !== 'allow') {
      endInteraction(req, a.id);
      return redirectToClient(req, res, a, { error: 'access_denied', error_description: 'The user denied the request' }, baseUrl);
    }
    await s.authorize.grantConsent(a, step.user.id);
    a.consentGiven = true;
    return advance(req, res, a);
  });

  r.post('/interaction/:iid/chooser', loadInteraction, issueCsrf, csrfOrRestart, async (req, res) => {
    const a = ar(res);
    const accounts = accountsOf(req, a.platformId);
    const picked = accounts.find((x) => x.userId === field(req.body, 'account'));
    const signout = accounts.find((x) => x.userId === field(req.body, 'signout'));
    if (picked) {
      if (picked.authTime !== null) Object.assign(a, { userId: picked.userId, screen: undefined });
      else Object.assign(a, { userId: undefined, screen: 'signin', signinEmail: picked.email });
    } else if (field(req.body, 'another')) {
      Object.assign(a, { userId: undefined, screen: 'signin', signinEmail: undefined });
    } else if (signout) {
      if (signout.authTime === null) forgetAccount(req, a.platformId, signout.userId);
      else {
        await s.authorize.signOut(a.platformId, signout.userId, browserId(req));
        markSignedOut(req, a.platformId, signout.userId);
      }
    } else if (field(req.body, 'signout_all')) {
      for (const x of accounts.filter((y) => y.authTime !== null)) {
        await s.authorize.signOut(a.platformId, x.userId, browserId(req));
        markSignedOut(req, a.platformId, x.userId);
      }
    }
    return advance(req, res, a);
  });

  return r;
}
