import { Router, type Request, type Response } from 'express';
import type { Services } from '../../../services';
import { presentOperatorPasskeys } from '../../../presenters/operator-passkey.presenter';
import { presentTotpSetup } from '../../../presenters/totp.presenter';
import { field, submitForm } from './forms';
import { operatorActor } from './operator';
import { consolePasskeyForm, operatorScope, passkeyOptionsRoute } from './passkeys';
import { renderConsole } from './render';
import { takeChallenge } from '../../session/passkey-session';
import { invalidRequest } from '../../../errors';

const PATH = '/admin/account';

/**
 * "Your account" (linked from the operator's email in the header, not a screen of the navigation):
 * the operator's second factors — whether the authenticator app is set, and its passkeys, which it
 * adds (public/passkeys.js) and removes here. The last second factor cannot be removed.
 * An operator signed in with a passkey sets up the authenticator app here too (its secret kept in
 * the console session until a first code confirms it), and removes it while a passkey remains.
 */
export function consoleAccountRouter(s: Services): Router {
  const r = Router();

  const show = async (req: Request, res: Response, error: string | null = null, status = 200) => {
    const operator = res.locals.operator!;
    const passkeys = await s.operators.passkeys.list(operator.id);
    renderConsole(
      req,
      res,
      'account',
      {
        title: 'Your account',
        accountPage: true,
        hasTotp: operator.hasTotp,
        passkeys: presentOperatorPasskeys(passkeys),
        // Without the app, the last passkey has no Remove button (the service refuses it too).
        canRemove: operator.hasTotp || passkeys.length > 1,
        passkey: consolePasskeyForm(s, res, { action: `${PATH}/passkeys`, options: `${PATH}/passkeys/options` }),
        error,
      },
      status,
    );
  };

  r.get(PATH, (req, res) => show(req, res));

  r.post(
    `${PATH}/passkeys/options`,
    passkeyOptionsRoute(
      s,
      'register',
      async (_req, res) => res.locals.operator,
      (operator) => s.operators.passkeys.registrationOptions(operator),
    ),
  );

  r.post(`${PATH}/passkeys`, (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const operator = res.locals.operator!;
        const expectedChallenge = takeChallenge(req, 'register', operatorScope(operator));
        if (!expectedChallenge) throw invalidRequest('This passkey request has expired. Try again.');
        const added = await s.operators.passkeys.register(operatorActor(req, res), operator, {
          name: field(req, 'name'),
          credential: field(req, 'credential'),
          expectedChallenge,
          firstFactor: false,
        });
        if (!added.ok) throw invalidRequest(`The passkey was not added. ${added.message}`);
        return { message: `Passkey “${added.passkey.name}” added.`, to: PATH };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  r.post(`${PATH}/passkeys/remove`, (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const removed = await s.operators.passkeys.remove(
          operatorActor(req, res),
          res.locals.operator!,
          field(req, 'passkey'),
        );
        return {
          message: `Passkey “${removed.name}” removed. Also remove it from your device or password manager.`,
          to: PATH,
        };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  /** The setup page: the session's secret (a reload shows the same QR code), or a new one. */
  const showSetup = async (req: Request, res: Response, error: string | null = null, status = 200) => {
    const operator = res.locals.operator!;
    const c = req.session.console!;
    let shown = c.totpSetup ? s.operators.accountTotpShown(operator, c.totpSetup) : undefined;
    if (!shown) {
      const setup = s.operators.accountTotpSetup(operator);
      c.totpSetup = setup.sealed;
      shown = setup;
    }
    renderConsole(
      req,
      res,
      'account-authenticator',
      { title: 'Set up authenticator app', accountPage: true, error, ...(await presentTotpSetup(shown)) },
      status,
    );
  };

  r.get(`${PATH}/authenticator`, async (req, res) => {
    if (res.locals.operator!.hasTotp) return res.redirect(303, PATH);
    await showSetup(req, res);
  });

  r.post(`${PATH}/authenticator`, (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        const c = req.session.console!;
        if (!c.totpSetup) throw invalidRequest('This setup has expired. Start again.');
        await s.operators.confirmAccountTotp(
          operatorActor(req, res),
          res.locals.operator!,
          c.totpSetup,
          field(req, 'code'),
        );
        delete c.totpSetup;
        return { message: 'Authenticator app set up. Sign-in now also accepts its code.', to: PATH };
      },
      (error, status) =>
        res.locals.operator!.hasTotp || !req.session.console?.totpSetup
          ? show(req, res, error, status)
          : showSetup(req, res, error, status),
    ),
  );

  r.post(`${PATH}/authenticator/remove`, (req, res) =>
    submitForm(
      req,
      res,
      async () => {
        await s.operators.removeTotp(operatorActor(req, res), res.locals.operator!);
        return { message: 'Authenticator app removed. Also remove this account from the app.', to: PATH };
      },
      (error, status) => show(req, res, error, status),
    ),
  );

  return r;
}
