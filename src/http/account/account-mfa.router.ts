import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { User } from '../../domain/user';
import { normalizeTotpCode } from '../../domain/mfa';
import { presentTotpSetup } from '../../presenters/totp.presenter';
import { renderPage } from '../pages/render';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { attemptSource } from '../request/attempt-source';
import { lockedMessage } from '../../services/interaction/sign-in';
import { chooseAccount, field, redirectSaved, setFlash, signedInAccounts, takeFlash } from '../session/account-session';
import { regenerateKeepingData, rememberSignIn } from '../session/browser-session';
import { endAccountSecondFactor, pendingAccountSecondFactor } from '../session/mfa-session';
import { amrOf } from '../../domain/mfa';
import { allowScriptsFor, passkeyButton } from '../pages/passkeys';
import { securityOrigin } from '../request/security-origin';
import { accountSectionUrl } from '../urls';

const accountPath = (platformId: string, suffix = '') =>
  `/account${suffix}?platform_guid=${encodeURIComponent(platformId)}`;
const withAccount = (url: string, userId: string) => `${url}&account=${encodeURIComponent(userId)}`;
/** "Too many attempts. Try again in N minutes." in the page's language. */
const tooManyAttempts = (res: Response, seconds: number) => {
  const m = lockedMessage(seconds);
  return res.locals.t(m.error, m.errorValues);
};

/**
 * Two-step verification on the account page: set up an authenticator app (QR code and
 * setup key, confirmed with a first code), then see the recovery codes once; remove the app or get
 * new recovery codes after proving a current code or the password (both throttled like sign-in).
 */
export function accountMfaRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const user = (res: Response) => res.locals.accountUser!;
  // Two-step verification lives on the account page's Security tab.
  const back = (res: Response) => `${accountPath(res.locals.platform.id)}&section=security`;

  /** The account a form or page acts on (body or query `account`): signed in on this browser, else back to /account. */
  const requireAccount =
    (from: 'body' | 'query'): RequestHandler =>
    async (req, res, next) => {
      const p = res.locals.platform;
      const id = field(from === 'body' ? req.body : req.query, 'account');
      const account = signedInAccounts(req, p.id).find((a) => a.userId === id);
      const found = account && (await s.account.security.findUser(p.id, account.userId));
      if (!found) return redirectSaved(req, res, accountPath(p.id));
      res.locals.accountUser = found;
      next();
    };
  const form = [resolvePlatform(s), issueCsrf, requireCsrf, requireAccount('body')];
  const page = [resolvePlatform(s), issueCsrf, requireAccount('query')];

  async function renderSetup(req: Request, res: Response, u: User, error: string | null = null, status = 200) {
    const p = res.locals.platform;
    const enrolment = await s.mfa.totp.pendingEnrolment(u, p.name);
    if (!enrolment) return redirectSaved(req, res, back(res));
    renderPage(
      res,
      'totp-setup',
      {
        title: res.locals.t('security:totp.title'),
        intro: res.locals.t('security:totp.intro'),
        ...(await presentTotpSetup(enrolment)),
        error,
        action: accountPath(p.id, '/totp/confirm'),
        hiddenFields: { account: u.id },
        cancelUrl: back(res),
      },
      status,
    );
  }

  r.post('/account/totp/setup', ...form, async (req, res) => {
    const p = res.locals.platform;
    if ((await s.mfa.policyOf(p.id)) === 'off') return redirectSaved(req, res, back(res));
    const started = await s.mfa.totp.beginEnrolment(user(res), p.name);
    if (!started) {
      setFlash(req, p.id, res.locals.t('security:totp.alreadySetUp'));
      return redirectSaved(req, res, back(res));
    }
    await redirectSaved(req, res, withAccount(accountPath(p.id, '/totp'), user(res).id));
  });

  r.get('/account/totp', ...page, (req, res) => renderSetup(req, res, user(res)));

  r.post('/account/totp/confirm', ...form, async (req, res) => {
    const result = await s.mfa.confirmTotp(
      user(res).id,
      field(req.body, 'code', 20),
      securityOrigin(req, res.locals.platform.id),
    );
    if (!result.ok) return renderSetup(req, res, user(res), res.locals.t('security:totp.mismatch'), 400);
    renderPage(res, 'recovery-codes', {
      title: res.locals.t('security:recovery.title'),
      notice: res.locals.t('security:recovery.appSetUp'),
      codes: result.recoveryCodes,
      replacedEarlier: result.replacedEarlier,
      continueUrl: back(res),
    });
  });

  /** A page asking for a current code or the password before a change to the second factor. */
  function proofPage(
    path: string,
    keys: { title: string; message: string; submitLabel: string },
    act: (req: Request, res: Response) => Promise<void>,
  ) {
    const render = (req: Request, res: Response, error: string | null = null, status = 200) => {
      const p = res.locals.platform;
      const t = res.locals.t;
      renderPage(
        res,
        'mfa-proof',
        {
          title: t(keys.title),
          message: t(keys.message),
          submitLabel: t(keys.submitLabel),
          action: `${path}?platform_guid=${encodeURIComponent(p.id)}`,
          accountId: user(res).id,
          email: user(res).email,
          error,
          cancelUrl: back(res),
        },
        status,
      );
    };
    r.get(path, ...page, async (req, res) => {
      if (!(await s.mfa.totp.status(user(res).id)).enrolled) return redirectSaved(req, res, back(res));
      render(req, res);
    });
    r.post(path, ...form, async (req, res) => {
      const p = res.locals.platform;
      if (!(await s.mfa.totp.status(user(res).id)).enrolled) return redirectSaved(req, res, back(res));
      const proof = field(req.body, 'proof', 300);
      const source = attemptSource(req);
      const audit = { ...securityOrigin(req, p.id), purpose: 'confirm' as const }; // a proof, not a sign-in
      const outcome = normalizeTotpCode(proof)
        ? await s.mfa.verifySecondFactor(p.id, user(res), { method: 'totp', code: proof }, source, audit)
        : proof
          ? await s.throttle.attemptSignIn(p.id, user(res).email, proof, source, audit)
          : { ok: false as const, lockedSeconds: 0 };
      const proven = outcome.ok && (!('user' in outcome) || outcome.user.id === user(res).id);
      if (!proven) {
        const locked = outcome.ok ? 0 : outcome.lockedSeconds;
        if (locked) res.set('Retry-After', String(locked));
        return render(
          req,
          res,
          locked ? tooManyAttempts(res, locked) : res.locals.t('security:proof.wrong'),
          locked ? 429 : 400,
        );
      }
      await act(req, res);
    });
  }

  proofPage(
    '/account/totp/remove',
    {
      title: 'security:proof.removeTitle',
      message: 'security:proof.removeMessage',
      submitLabel: 'security:proof.removeSubmit',
    },
    async (req, res) => {
      await s.mfa.removeTotp(user(res).id, securityOrigin(req, res.locals.platform.id));
      setFlash(req, res.locals.platform.id, res.locals.t('security:totp.removed'));
      await redirectSaved(req, res, back(res));
    },
  );

  proofPage(
    '/account/recovery-codes',
    {
      title: 'security:proof.codesTitle',
      message: 'security:proof.codesMessage',
      submitLabel: 'security:proof.codesSubmit',
    },
    async (req, res) => {
      const fresh = await s.mfa.regenerateRecoveryCodes(user(res).id, securityOrigin(req, res.locals.platform.id));
      renderPage(res, 'recovery-codes', {
        title: res.locals.t('security:recovery.title'),
        codes: fresh.codes,
        replacedEarlier: fresh.replacedEarlier,
        continueUrl: back(res),
      });
    },
  );

  // The account page's own sign-in, second step: after the password (account.router.ts),
  // a user with an authenticator app gives a code or a recovery code before the browser is signed in.
  const renderSecondFactor = async (
    req: Request,
    res: Response,
    pending: { userId: string; email: string },
    error: string | null = null,
    status = 200,
  ) => {
    const p = res.locals.platform;
    const method =
      req.query.method === 'recovery_code' || field(req.body, 'method') === 'recovery_code' ? 'recovery_code' : 'totp';
    const here = accountPath(p.id, '/second-factor');
    // A user with passkeys may use one instead ("Use a passkey": ./passkeys.router.ts); without an app, only that.
    const [{ totp }, passkeyCount] = await Promise.all([
      s.mfa.factorsOf(pending.userId),
      s.passkeys.count(p.id, pending.userId),
    ]);
    const passkey =
      passkeyCount > 0
        ? passkeyButton(
            s,
            {
              action: accountPath(p.id, '/second-factor-passkey'),
              options: accountPath(p.id, '/second-factor-passkey-options'),
            },
            false,
            res.locals.t('security:secondFactor.usePasskey'),
          )
        : null;
    allowScriptsFor(res, { passkey });
    renderPage(
      res,
      'second-factor',
      {
        title: res.locals.t('security:secondFactor.title'),
        email: pending.email,
        action: here,
        method,
        error,
        codeForm: totp,
        passkey,
        otherMethods: !totp
          ? []
          : method === 'totp'
            ? [{ label: res.locals.t('security:secondFactor.useRecoveryCode'), url: `${here}&method=recovery_code` }]
            : [{ label: res.locals.t('security:secondFactor.useApp'), url: here }],
        cancelUrl: accountPath(p.id, '/signin'),
      },
      status,
    );
  };

  r.get('/account/second-factor', resolvePlatform(s), issueCsrf, async (req, res) => {
    const pending = pendingAccountSecondFactor(req, res.locals.platform.id);
    if (!pending) return redirectSaved(req, res, accountPath(res.locals.platform.id, '/signin'));
    await renderSecondFactor(req, res, pending, takeFlash(req, res.locals.platform.id)); // a refused passkey (./passkeys.router.ts) says why
  });

  r.post('/account/second-factor', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = res.locals.platform;
    const pending = pendingAccountSecondFactor(req, p.id);
    if (!pending) return redirectSaved(req, res, accountPath(p.id, '/signin'));
    const method = field(req.body, 'method') === 'recovery_code' ? 'recovery_code' : 'totp';
    const user = { id: pending.userId, email: pending.email };
    const result = await s.mfa.verifySecondFactor(
      p.id,
      user,
      { method, code: field(req.body, 'code', 64) },
      attemptSource(req),
      securityOrigin(req, p.id),
    );
    if (!result.ok) {
      if (result.lockedSeconds) res.set('Retry-After', String(result.lockedSeconds));
      const error = result.lockedSeconds
        ? tooManyAttempts(res, result.lockedSeconds)
        : res.locals.t(
            method === 'recovery_code' ? 'security:secondFactor.badRecoveryCode' : 'security:secondFactor.badCode',
          );
      return renderSecondFactor(req, res, pending, error, result.lockedSeconds ? 429 : 400);
    }
    endAccountSecondFactor(req);
    await regenerateKeepingData(req);
    rememberSignIn(
      req,
      p.id,
      { userId: user.id, email: user.email },
      Math.floor(deps.now().getTime() / 1000),
      amrOf([...(pending.firstFactor ?? ['pwd']), result.amr]),
    );
    chooseAccount(req, p.id, user.id);
    await redirectSaved(req, res, accountSectionUrl(p.id, pending.section));
  });

  return r;
}
