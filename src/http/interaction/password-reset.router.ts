import { Router, type Request, type Response } from 'express';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { findInteraction, markSignedOut } from '../session/browser-session';
import { field, redirectSaved } from '../session/account-session';
import { accountUrl, platformQuery as q } from '../urls';
import { renderLinkProblem } from '../pages/link-problem.page';
import { renderPage } from '../pages/render';
import { securityOrigin } from '../request/security-origin';
import { allowPageScript } from '../middleware/security-headers';
import { withEmail } from '../pages/signin.page';
import { translateMessage } from '../pages/messages';
import { checkEmail, ruleValues } from '../../services/user-rules';
import { RESET_PASSWORD_TTL_SECONDS } from '../../services/account/password-reset.service';

/** "Forgot password?" → email → single-use 30-minute link → new password. */
export function passwordResetRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();

  /** Where "Back to sign in" and "Continue" go: the sign-in page this started from, else the account page. */
  const signInUrl = (req: Request, platformId: string) => {
    const iid = req.session.resume?.[platformId];
    return iid && findInteraction(req, iid) ? `/interaction/${iid}` : accountUrl(platformId, '/signin');
  };

  /** The email the sign-in page passed on (?email=): only to pre-fill the field, so bounded and nothing more. */
  const emailOf = (req: Request) => (typeof req.query.email === 'string' ? req.query.email.trim().slice(0, 320) : '');

  // The sign-in page's link: remembers which sign-in to come back to, and passes on the email typed there.
  r.get('/interaction/:iid/forgot', (req, res) => {
    const a = findInteraction(req, String(req.params.iid));
    if (!a) return res.redirect(303, `/interaction/${encodeURIComponent(String(req.params.iid))}`);
    req.session.resume = { ...(req.session.resume ?? {}), [a.platformId]: a.id };
    return redirectSaved(req, res, withEmail(`/password/forgot?${q(a.platformId)}`, emailOf(req)));
  });

  const renderForgot = (req: Request, res: Response, values: { email: string; error: string | null }, status = 200) =>
    renderPage(
      res,
      'forgot-password',
      {
        title: res.locals.t('password:forgot.title'),
        platformName: res.locals.platform.name,
        csrfToken: res.locals.csrfToken,
        action: `/password/forgot?${q(res.locals.platform.id)}`,
        backUrl: signInUrl(req, res.locals.platform.id),
        ...values,
        error: translateMessage(res.locals.t, values.error),
      },
      status,
    );

  r.get('/password/forgot', resolvePlatform(s), issueCsrf, (req, res) =>
    renderForgot(req, res, { email: emailOf(req), error: null }),
  );

  r.post('/password/forgot', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const email = field(req.body, 'email', 320).trim();
    if (checkEmail(email)) return renderForgot(req, res, { email, error: 'password:forgot.errors.email' }, 400);
    // Looked up and mailed only once the answer has gone: the same answer, as fast, either way.
    const platform = res.locals.platform;
    const origin = securityOrigin(req, platform.id); // read now: the request is done by then
    const locale = res.locals.locale; // the mail in the language of the page that asked for it
    res.once('close', () => void s.account.passwordReset.requestReset(platform, email, origin, locale));
    await redirectSaved(req, res, `/password/forgot/sent?${q(res.locals.platform.id)}`);
  });

  r.get('/password/forgot/sent', resolvePlatform(s), (req, res) => {
    const t = res.locals.t;
    renderPage(res, 'notice', {
      title: t('password:sent.title'),
      platformName: res.locals.platform.name,
      icon: 'mail',
      heading: t('password:sent.title'),
      // The same answer whether or not the address has an account.
      message: t('password:sent.message'),
      details: t('password:sent.details', { minutes: RESET_PASSWORD_TTL_SECONDS / 60 }),
      actions: [{ href: signInUrl(req, res.locals.platform.id), label: t('password:backToSignIn') }],
    });
  });

  const renderReset = (res: Response, token: string, email: string, error: string | null, status = 200) => {
    allowPageScript(res, 'password-toggle');
    const min = deps.config.passwordMinLength;
    renderPage(
      res,
      'reset-password',
      {
        title: res.locals.t('password:reset.title'),
        platformName: res.locals.platform.name,
        csrfToken: res.locals.csrfToken,
        action: `/password/reset?${q(res.locals.platform.id)}`,
        token,
        email,
        error: translateMessage(res.locals.t, error, ruleValues(min)),
        passwordMinLength: min,
      },
      status,
    );
  };
  const askAgain = (res: Response) => ({
    href: `/password/forgot?${q(res.locals.platform.id)}`,
    label: res.locals.t('password:reset.newLink'),
  });

  r.get('/password/reset', resolvePlatform(s), issueCsrf, async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const check = await s.account.passwordReset.checkLink(res.locals.platform.id, token);
    if (check.status !== 'valid') return renderLinkProblem(res, check.status, 'reset', askAgain(res));
    renderReset(res, token, check.email, null);
  });

  r.post('/password/reset', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = res.locals.platform;
    const token = field(req.body, 'token', 100);
    const result = await s.account.passwordReset.resetPassword(
      p,
      token,
      field(req.body, 'password', 300),
      securityOrigin(req, p.id),
      res.locals.locale,
    );
    if (result.ok) {
      markSignedOut(req, p.id, result.user.id);
      return redirectSaved(req, res, `/password/reset/done?${q(p.id)}`);
    }
    if (result.status === 'valid') return renderReset(res, token, result.email, result.message, 400);
    renderLinkProblem(res, result.status, 'reset', askAgain(res));
  });

  r.get('/password/reset/done', resolvePlatform(s), (req, res) => {
    const t = res.locals.t;
    renderPage(res, 'notice', {
      title: t('password:done.title'),
      platformName: res.locals.platform.name,
      heading: t('password:done.heading'),
      message: t('password:done.message'),
      actions: [{ href: signInUrl(req, res.locals.platform.id), label: t('password:done.continue') }],
    });
  });

  return r;
}
