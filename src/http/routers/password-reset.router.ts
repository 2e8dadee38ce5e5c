import { Router, type Request, type Response } from 'express';
import type { Services } from '../../services';
import { checkEmail } from '../../services/user-rules';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { findInteraction, markSignedOut } from '../browser-session';
import { field, redirectSaved } from '../account-session';
import { accountUrl, platformQuery as q } from '../urls';
import { renderLinkProblem } from '../pages/link-problem.page';
import { renderPage } from '../pages/render';
import { securityOrigin } from '../security-origin';

/** "Forgot password?" → email → single-use 30-minute link → new password (issue 6). */
export function passwordResetRouter(s: Services): Router {
  const r = Router();

  /** Where "Back to sign in" and "Continue" go: the sign-in page this started from, else the account page. */
  const signInUrl = (req: Request, platformId: string) => {
    const iid = req.session.resume?.[platformId];
    return iid && findInteraction(req, iid) ? `/interaction/${iid}` : accountUrl(platformId, '/signin');
  };

  // The sign-in page's link: remembers which sign-in to come back to.
  r.get('/interaction/:iid/forgot', (req, res) => {
    const a = findInteraction(req, String(req.params.iid));
    if (!a) return res.redirect(303, `/interaction/${encodeURIComponent(String(req.params.iid))}`);
    req.session.resume = { ...(req.session.resume ?? {}), [a.platformId]: a.id };
    return redirectSaved(req, res, `/password/forgot?${q(a.platformId)}`);
  });

  const renderForgot = (req: Request, res: Response, values: { email: string; error: string | null }, status = 200) =>
    renderPage(res, 'forgot-password', {
      title: 'Reset your password', platformName: res.locals.platform.name, csrfToken: res.locals.csrfToken,
      action: `/password/forgot?${q(res.locals.platform.id)}`, backUrl: signInUrl(req, res.locals.platform.id), ...values,
    }, status);

  r.get('/password/forgot', resolvePlatform(s), issueCsrf, (req, res) => renderForgot(req, res, { email: '', error: null }));

  r.post('/password/forgot', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const email = field(req.body, 'email', 320).trim();
    if (checkEmail(email)) return renderForgot(req, res, { email, error: 'Enter a valid email address.' }, 400);
    // Looked up and mailed only once the answer has gone: the same answer, as fast, either way (issue 10 §7).
    const platform = res.locals.platform;
    const origin = securityOrigin(req, platform.id); // read now: the request is done by then
    res.once('close', () => void s.account.passwordReset.requestReset(platform, email, origin));
    await redirectSaved(req, res, `/password/forgot/sent?${q(res.locals.platform.id)}`);
  });

  r.get('/password/forgot/sent', resolvePlatform(s), (req, res) => {
    renderPage(res, 'notice', {
      title: 'Check your email', platformName: res.locals.platform.name, icon: 'mail', heading: 'Check your email',
      // The same answer whether or not the address has an account.
      message: 'If an account exists for that address, we have sent it a link to choose a new password.',
      details: 'The link works once and expires in 30 minutes. Nothing arrived? Check your spam folder, or ask again in a minute.',
      actions: [{ href: signInUrl(req, res.locals.platform.id), label: 'Back to sign in' }],
    });
  });

  const renderReset = (res: Response, token: string, email: string, error: string | null, status = 200) =>
    renderPage(res, 'reset-password', {
      title: 'Choose a new password', platformName: res.locals.platform.name, csrfToken: res.locals.csrfToken, action: `/password/reset?${q(res.locals.platform.id)}`,
      token, email, error, passwordMinLength: s.deps.config.passwordMinLength,
    }, status);
  const askAgain = (res: Response) => ({ href: `/password/forgot?${q(res.locals.platform.id)}`, label: 'Get a new link' });

  r.get('/password/reset', resolvePlatform(s), issueCsrf, async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const check = await s.account.passwordReset.checkLink(res.locals.platform.id, token);
    if (check.status !== 'valid') return renderLinkProblem(res, check.status, 'reset', askAgain(res));
    renderReset(res, token, check.email, null);
  });

  r.post('/password/reset', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = res.locals.platform;
    const token = field(req.body, 'token', 100);
    const result = await s.account.passwordReset.resetPassword(p, token, field(req.body, 'password', 300), securityOrigin(req, p.id));
    if (result.ok) {
      markSignedOut(req, p.id, result.user.id);
      return redirectSaved(req, res, `/password/reset/done?${q(p.id)}`);
    }
    if (result.status === 'valid') return renderReset(res, token, result.email, result.message, 400);
    renderLinkProblem(res, result.status, 'reset', askAgain(res));
  });

  r.get('/password/reset/done', resolvePlatform(s), (req, res) => {
    renderPage(res, 'notice', {
      title: 'Password changed', platformName: res.locals.platform.name, heading: 'Your password has been changed',
      message: 'Sign in with your new password. Every device that was signed in to your account has been signed out.',
      actions: [{ href: signInUrl(req, res.locals.platform.id), label: 'Continue to sign in' }],
    });
  });

  return r;
}
