import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import type { HttpDeps } from '../../http-deps';
import { attemptSource, tooManyAttempts } from '../../request/attempt-source';
import { auditContext } from '../../request/audit-context';
import { issueCsrf, requireCsrf } from '../../middleware/csrf';
import { presentTotpSetup } from '../../../presenters/totp.presenter';
import { field } from './forms';
import { renderConsole } from './render';
import { SIGN_IN_PATH } from './operator';
import { CONSOLE_SECOND_FACTOR_MS, endConsoleSession, isConsoleCookieRefused, startConsoleSession } from './session';
import { consolePasskeyForm, operatorScope, passkeyOptionsRoute } from './passkeys';
import { takeChallenge } from '../../session/passkey-session';
import type { Operator } from '../../../domain/operator';

const WRONG = 'Wrong email or password';
const CODE_PATH = `${SIGN_IN_PATH}/code`;
const ENROL_PATH = `${SIGN_IN_PATH}/authenticator`;
const PASSKEY_PATH = `${SIGN_IN_PATH}/passkey`;
const PASSKEY_ENROL_PATH = `${SIGN_IN_PATH}/new-passkey`;

/**
 * Console sign-in: email and password, then always a second factor — the code of
 * the operator's authenticator app, or, for an operator without one, its enrolment (QR code and
 * "Setup key", then a first "Code"). Only then does the session count as signed in.
 * A passkey is the other second factor: "Use a passkey" next to
 * or instead of the code, and "Add a passkey" next to the app's enrolment.
 */
export function consoleSignInRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const ctx = (req: Request, email?: string) => auditContext(req, { type: 'operator', name: email ?? null });

  /** The operator between password and code, if that step is still fresh; else undefined. */
  async function pending(req: Request) {
    const c = req.session?.console;
    if (!c || c.stage !== 'second_factor' || deps.now().getTime() - c.startedAt > CONSOLE_SECOND_FACTOR_MS)
      return undefined;
    return s.operators.findActive(c.operatorId);
  }

  const showSignIn = (
    req: Request,
    res: Response,
    model: { email?: string; error?: string | null; notice?: string | null },
    status = 200,
  ) => renderConsole(req, res, 'sign-in', { title: 'Sign in', email: '', notice: null, ...model }, status);

  /** Over plain http under an https BASE_URL the session cookie never sticks: say so instead of looping back here. */
  const plainHttpError = (req: Request) => {
    const { baseUrl } = deps.config;
    if (!isConsoleCookieRefused(baseUrl, req)) return null;
    return `This console was reached over plain http, but its sign-in cookie is only kept over https (BASE_URL is ${baseUrl}), so signing in cannot work here. Open ${baseUrl}${SIGN_IN_PATH}. Behind a reverse proxy that ends TLS, have it send X-Forwarded-Proto: https and set TRUST_PROXY to trust it.`;
  };

  r.get(SIGN_IN_PATH, issueCsrf, (req, res) => {
    if (req.session?.console?.stage === 'signed_in') return res.redirect(303, '/admin');
    showSignIn(req, res, {
      notice: req.query.expired ? 'Your session has ended. Sign in again.' : null,
      error: plainHttpError(req),
    });
  });

  // Before the CSRF check: over plain http its cookie is missing too, and "form expired" would mislead. Nothing is checked or changed.
  r.post(SIGN_IN_PATH, (req, res, next) => {
    const error = plainHttpError(req);
    if (!error) return next();
    issueCsrf(req, res, () => showSignIn(req, res, { email: field(req, 'email'), error }, 400));
  });

  r.post(SIGN_IN_PATH, requireCsrf, issueCsrf, async (req, res) => {
    const email = field(req, 'email');
    const password = typeof req.body?.password === 'string' ? req.body.password : '';
    if (!email || !password) return showSignIn(req, res, { email, error: WRONG }, 400);
    const outcome = await s.operators.verifyPassword(ctx(req, email), email, password, attemptSource(req));
    if (!outcome.ok) {
      if (outcome.lockedSeconds) res.set('Retry-After', String(outcome.lockedSeconds));
      return showSignIn(
        req,
        res,
        { email, error: outcome.lockedSeconds ? tooManyAttempts(outcome.lockedSeconds) : WRONG },
        outcome.lockedSeconds ? 429 : 401,
      );
    }
    const now = deps.now().getTime();
    await startConsoleSession(req, {
      operatorId: outcome.operator.id,
      stage: 'second_factor',
      startedAt: now,
      lastSeenAt: now,
    });
    const hasFactor = outcome.operator.hasTotp || (await s.operators.passkeys.count(outcome.operator.id)) > 0;
    res.redirect(303, hasFactor ? CODE_PATH : ENROL_PATH);
  });

  /** The code page (the app's code, "Use a passkey", or both), or the enrolment page for an operator without either. */
  async function showSecondFactor(
    req: Request,
    res: Response,
    error: string | null = null,
    status = 200,
    fromPasskeyForm = false,
  ) {
    const operator = await pending(req);
    if (!operator) return res.redirect(303, SIGN_IN_PATH);
    const passkeys = await s.operators.passkeys.count(operator.id);
    if (operator.hasTotp || passkeys > 0) {
      if (req.path !== CODE_PATH && !fromPasskeyForm) return res.redirect(303, CODE_PATH);
      const passkey =
        passkeys > 0 ? consolePasskeyForm(s, res, { action: PASSKEY_PATH, options: `${PASSKEY_PATH}/options` }) : null;
      return renderConsole(
        req,
        res,
        'sign-in-code',
        { title: 'Two-step verification', email: operator.email, hasTotp: operator.hasTotp, passkey, error },
        status,
      );
    }
    if (req.path !== ENROL_PATH && !fromPasskeyForm) return res.redirect(303, ENROL_PATH);
    const c = req.session.console!;
    const enrolment = await s.operators.totpEnrolment(operator.id, c.enrolmentTotp);
    if (!enrolment) return res.redirect(303, SIGN_IN_PATH);
    c.enrolmentTotp = enrolment.sealed; // this sign-in's secret: shown again on a reload, never to another sign-in
    const passkey = consolePasskeyForm(s, res, {
      action: PASSKEY_ENROL_PATH,
      options: `${PASSKEY_ENROL_PATH}/options`,
    });
    renderConsole(
      req,
      res,
      'sign-in-enrol',
      {
        title: 'Set up authenticator app',
        email: operator.email,
        error,
        passkey,
        ...(await presentTotpSetup(enrolment)),
      },
      status,
    );
  }

  /** Both factors passed: a new session id, signed in. */
  async function finishSignIn(
    req: Request,
    res: Response,
    operator: Operator,
    enrolled: boolean,
    factor: 'totp' | 'passkey',
  ) {
    await s.operators.signedIn(ctx(req, operator.email), operator, enrolled, factor);
    const now = deps.now().getTime();
    await startConsoleSession(req, { operatorId: operator.id, stage: 'signed_in', startedAt: now, lastSeenAt: now });
    res.redirect(303, '/admin');
  }

  // "Use a passkey": options (JSON, for public/passkeys.js), then the form with the browser's answer.
  r.post(
    `${PASSKEY_PATH}/options`,
    requireCsrf,
    issueCsrf,
    passkeyOptionsRoute(s, 'second-factor', pending, (operator) =>
      s.operators.passkeys.authenticationOptions(operator.id),
    ),
  );
  r.post(PASSKEY_PATH, requireCsrf, issueCsrf, async (req, res) => {
    const operator = await pending(req);
    if (!operator) return res.redirect(303, SIGN_IN_PATH);
    const expectedChallenge = takeChallenge(req, 'second-factor', operatorScope(operator));
    if (!expectedChallenge)
      return showSecondFactor(req, res, 'This passkey request has expired. Try again.', 400, true);
    const outcome = await s.operators.passkeys.authenticate(
      ctx(req, operator.email),
      operator,
      { credential: field(req, 'credential'), expectedChallenge },
      attemptSource(req),
    );
    if (!outcome.ok) {
      if (outcome.lockedSeconds) res.set('Retry-After', String(outcome.lockedSeconds));
      return showSecondFactor(
        req,
        res,
        outcome.lockedSeconds ? tooManyAttempts(outcome.lockedSeconds) : outcome.message,
        outcome.lockedSeconds ? 429 : 400,
        true,
      );
    }
    await finishSignIn(req, res, operator, false, 'passkey');
  });

  // "Add a passkey" as the first second factor (an operator without the app or a passkey).
  r.post(
    `${PASSKEY_ENROL_PATH}/options`,
    requireCsrf,
    issueCsrf,
    passkeyOptionsRoute(s, 'register', pending, (operator) => s.operators.passkeys.registrationOptions(operator)),
  );
  r.post(PASSKEY_ENROL_PATH, requireCsrf, issueCsrf, async (req, res) => {
    const operator = await pending(req);
    if (!operator) return res.redirect(303, SIGN_IN_PATH);
    const expectedChallenge = takeChallenge(req, 'register', operatorScope(operator));
    if (!expectedChallenge)
      return showSecondFactor(req, res, 'This passkey request has expired. Try again.', 400, true);
    const added = await s.operators.passkeys.register(ctx(req, operator.email), operator, {
      name: field(req, 'name'),
      credential: field(req, 'credential'),
      expectedChallenge,
      firstFactor: true,
    });
    if (!added.ok) return showSecondFactor(req, res, `The passkey was not added. ${added.message}`, 400, true);
    await finishSignIn(req, res, operator, true, 'passkey');
  });

  r.get([CODE_PATH, ENROL_PATH], issueCsrf, (req, res) => showSecondFactor(req, res));

  r.post([CODE_PATH, ENROL_PATH], requireCsrf, issueCsrf, async (req, res) => {
    const operator = await pending(req);
    if (!operator) return res.redirect(303, SIGN_IN_PATH);
    const outcome = await s.operators.verifyCode(
      ctx(req, operator.email),
      operator.id,
      field(req, 'code'),
      attemptSource(req),
    );
    if (!outcome.ok) {
      if (outcome.lockedSeconds) res.set('Retry-After', String(outcome.lockedSeconds));
      const error = outcome.lockedSeconds
        ? tooManyAttempts(outcome.lockedSeconds)
        : outcome.reason === 'replayed'
          ? 'This code was already used. Wait for the next one.'
          : 'That code is not right. Try again.';
      return showSecondFactor(req, res, error, outcome.lockedSeconds ? 429 : 400);
    }
    await finishSignIn(req, res, operator, !operator.hasTotp, 'totp');
  });

  r.post('/admin/sign-out', requireCsrf, async (req, res) => {
    await endConsoleSession(req);
    res.redirect(303, SIGN_IN_PATH);
  });

  return r;
}
