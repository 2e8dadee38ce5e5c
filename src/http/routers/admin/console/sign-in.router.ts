import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../../services';
import { attemptSource, tooManyAttempts } from '../../../attempt-source';
import { auditContext } from '../../../audit-context';
import { issueCsrf, requireCsrf } from '../../../middleware/csrf';
import { presentTotpSetup } from '../../../../presenters/totp.presenter';
import { field } from '../../../admin-console/forms';
import { renderConsole } from '../../../admin-console/render';
import { SIGN_IN_PATH } from '../../../admin-console/operator';
import { CONSOLE_SECOND_FACTOR_MS, endConsoleSession, startConsoleSession } from '../../../admin-console/session';

const WRONG = 'Wrong email or password';
const CODE_PATH = `${SIGN_IN_PATH}/code`;
const ENROL_PATH = `${SIGN_IN_PATH}/authenticator`;

/**
 * Console sign-in (DESIGN §14): email and password, then always a second factor — the code of
 * the operator's authenticator app, or, for an operator without one, its enrolment (QR code and
 * "Setup key", then a first "Code"). Only then does the session count as signed in.
 */
export function consoleSignInRouter(s: Services): Router {
  const r = Router();
  const ctx = (req: Request, email?: string) => auditContext(req, { type: 'operator', name: email ?? null });

  /** The operator between password and code, if that step is still fresh; else undefined. */
  async function pending(req: Request) {
    const c = req.session?.console;
    if (!c || c.stage !== 'second_factor' || s.deps.now().getTime() - c.startedAt > CONSOLE_SECOND_FACTOR_MS) return undefined;
    return s.operators.findActive(c.operatorId);
  }

  const showSignIn = (req: Request, res: Response, model: { email?: string; error?: string | null; notice?: string | null }, status = 200) =>
    renderConsole(req, res, 'sign-in', { title: 'Sign in', email: '', notice: null, ...model }, status);

  r.get(SIGN_IN_PATH, issueCsrf, (req, res) => {
    if (req.session?.console?.stage === 'signed_in') return res.redirect(303, '/admin');
    showSignIn(req, res, { notice: req.query.expired ? 'Your session has ended. Sign in again.' : null });
  });

  r.post(SIGN_IN_PATH, requireCsrf, issueCsrf, async (req, res) => {
    const email = field(req, 'email');
    const password = typeof req.body?.password === 'string' ? req.body.password : '';
    if (!email || !password) return showSignIn(req, res, { email, error: WRONG }, 400);
    const outcome = await s.operators.verifyPassword(ctx(req, email), email, password, attemptSource(req));
    if (!outcome.ok) {
      if (outcome.lockedSeconds) res.set('Retry-After', String(outcome.lockedSeconds));
      return showSignIn(req, res, { email, error: outcome.lockedSeconds ? tooManyAttempts(outcome.lockedSeconds) : WRONG }, outcome.lockedSeconds ? 429 : 401);
    }
    const now = s.deps.now().getTime();
    await startConsoleSession(req, { operatorId: outcome.operator.id, stage: 'second_factor', startedAt: now, lastSeenAt: now });
    res.redirect(303, outcome.operator.hasTotp ? CODE_PATH : ENROL_PATH);
  });

  /** The code page, or the enrolment page for an operator without an app. */
  async function showSecondFactor(req: Request, res: Response, error: string | null = null, status = 200) {
    const operator = await pending(req);
    if (!operator) return res.redirect(303, SIGN_IN_PATH);
    if (operator.hasTotp) {
      if (req.path !== CODE_PATH) return res.redirect(303, CODE_PATH);
      return renderConsole(req, res, 'sign-in-code', { title: 'Two-step verification', email: operator.email, error }, status);
    }
    if (req.path !== ENROL_PATH) return res.redirect(303, ENROL_PATH);
    const enrolment = await s.operators.totpEnrolment(operator.id);
    if (!enrolment) return res.redirect(303, SIGN_IN_PATH);
    renderConsole(req, res, 'sign-in-enrol', { title: 'Set up authenticator app', email: operator.email, error, ...(await presentTotpSetup(enrolment)) }, status);
  }

  r.get([CODE_PATH, ENROL_PATH], issueCsrf, (req, res) => showSecondFactor(req, res));

  r.post([CODE_PATH, ENROL_PATH], requireCsrf, issueCsrf, async (req, res) => {
    const operator = await pending(req);
    if (!operator) return res.redirect(303, SIGN_IN_PATH);
    const outcome = await s.operators.verifyCode(ctx(req, operator.email), operator.id, field(req, 'code'), attemptSource(req));
    if (!outcome.ok) {
      if (outcome.lockedSeconds) res.set('Retry-After', String(outcome.lockedSeconds));
      const error = outcome.lockedSeconds ? tooManyAttempts(outcome.lockedSeconds) : outcome.reason === 'replayed' ? 'This code was already used. Wait for the next one.' : 'That code is not right. Try again.';
      return showSecondFactor(req, res, error, outcome.lockedSeconds ? 429 : 400);
    }
    await s.operators.signedIn(ctx(req, operator.email), operator, !operator.hasTotp);
    const now = s.deps.now().getTime();
    await startConsoleSession(req, { operatorId: operator.id, stage: 'signed_in', startedAt: now, lastSeenAt: now });
    res.redirect(303, '/admin');
  });

  r.post('/admin/sign-out', requireCsrf, async (req, res) => {
    await endConsoleSession(req);
    res.redirect(303, SIGN_IN_PATH);
  });

  return r;
}
