import { Router, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../../errors';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import { CHALLENGE_TTL_SECONDS } from '../../services/mfa/passkeys.service';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { chooseAccount, field, redirectSaved, setFlash, signedInAccounts } from '../session/account-session';
import { startCeremony, takeChallenge } from '../session/passkey-session';
import { renderAccountSignIn } from '../pages/passkeys';
import { endAccountSecondFactor, pendingAccountSecondFactor } from '../session/mfa-session';
import { regenerateKeepingData, rememberSignIn } from '../session/browser-session';
import { amrOf, type AuthMethod } from '../../domain/mfa';
import { securityOrigin } from '../request/security-origin';
import { accountSectionUrl, requestedSection } from '../urls';
import { sendJsonError } from '../errors/error-handler';

const accountUrl = (platformId: string, suffix = '') =>
  `/account${suffix}?platform_guid=${encodeURIComponent(platformId)}`;
/** Passkeys are listed on the account page's Security tab. */
const securityTab = (platformId: string) => `${accountUrl(platformId)}&section=security`;
/** A refusal public/passkeys.js shows (its error_description), in the page's language. */
const refuse = (res: Response, status: number, messageKey: string) =>
  sendJsonError(res, new OAuthError('invalid_request', res.locals.t(messageKey), { status }));

/**
 * The account page's passkeys: options for navigator.credentials.create (JSON, for
 * public/passkeys.js), the registration form the script submits with the browser's answer, and
 * removal. Adding needs JavaScript (WebAuthn has no other way); listing and removing do not.
 */
export function passkeysRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const user = (res: Response) => res.locals.passkeyUser!;
  const scope = (res: Response) => `${res.locals.platform.id}:${user(res).id}`;

  /** The account a form acts on: signed in on this browser; else JSON 401 or back to the account page. */
  const signedInUser =
    (json: boolean): RequestHandler =>
    async (req, res, next) => {
      const p = res.locals.platform;
      const account = signedInAccounts(req, p.id).find((a) => a.userId === field(req.body, 'account'));
      const found = account && (await s.account.security.findUser(p.id, account.userId));
      if (found) {
        res.locals.passkeyUser = found;
        return next();
      }
      if (json) return refuse(res, 401, 'security:passkeys.errors.signInAgain');
      await redirectSaved(req, res, accountUrl(p.id));
    };
  const form = (json: boolean) => [resolvePlatform(s), issueCsrf, requireCsrf, signedInUser(json)];

  r.post('/account/passkeys/options', ...form(true), async (req, res) => {
    if (!s.passkeys.relyingParty.isAvailable) return refuse(res, 400, 'security:passkeys.errors.hostName');
    const options = await s.passkeys.registrationOptions(res.locals.platform, user(res));
    startCeremony(req, 'register', scope(res), options.challenge, CHALLENGE_TTL_SECONDS);
    res.json({ options });
  });

  r.post('/account/passkeys', ...form(false), async (req, res) => {
    const p = res.locals.platform;
    const expectedChallenge = takeChallenge(req, 'register', scope(res));
    const result = expectedChallenge
      ? await s.passkeys.register(
          p,
          user(res),
          { name: field(req.body, 'name', 200), credential: field(req.body, 'credential', 16_384), expectedChallenge },
          securityOrigin(req, p.id),
        )
      : { ok: false as const, message: 'security:passkeys.errors.expired' };
    const t = res.locals.t;
    setFlash(
      req,
      p.id,
      result.ok
        ? t('security:passkeys.addedFlash', { name: result.passkey.name })
        : t('security:passkeys.notAdded', { reason: t(result.message) }),
    );
    await redirectSaved(req, res, securityTab(p.id));
  });

  r.post('/account/passkeys/remove', ...form(false), async (req, res) => {
    const p = res.locals.platform;
    const id = field(req.body, 'passkey', 64);
    const passkey = (await s.passkeys.list(p.id, user(res).id)).find((k) => k.id === id);
    const removed =
      passkey !== undefined && (await s.passkeys.remove(p.id, user(res).id, id, securityOrigin(req, p.id)));
    setFlash(
      req,
      p.id,
      removed
        ? res.locals.t('security:passkeys.removedFlash', { name: passkey.name })
        : res.locals.t('security:passkeys.alreadyRemoved'),
    );
    await redirectSaved(req, res, securityTab(p.id));
  });

  // The account page's own sign-in with a passkey alone (user verification required, as on the
  // authorization's sign-in page); the browser then counts as signed in with amr hwk/swk + user.
  r.post('/account/passkey-signin-options', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    if (!s.passkeys.relyingParty.isAvailable) return refuse(res, 409, 'security:passkeys.errors.reload');
    const options = await s.passkeys.authenticationOptions(res.locals.platform);
    startCeremony(req, 'signin', `account:${res.locals.platform.id}`, options.challenge, CHALLENGE_TTL_SECONDS);
    res.json({ options });
  });

  r.post('/account/passkey-signin', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = res.locals.platform;
    const expectedChallenge = takeChallenge(req, 'signin', `account:${p.id}`);
    const result = expectedChallenge
      ? await s.passkeys.authenticate(
          p,
          { credential: field(req.body, 'credential', 16_384), expectedChallenge },
          securityOrigin(req, p.id),
        )
      : { ok: false as const, message: 'security:passkeys.errors.signinExpired' };
    if (!result.ok) return renderAccountSignIn(s, res, { email: '', error: res.locals.t(result.message) }, 400);
    await regenerateKeepingData(req);
    rememberSignIn(
      req,
      p.id,
      { userId: result.user.id, email: result.user.email },
      Math.floor(deps.now().getTime() / 1000),
      amrOf(result.amr as AuthMethod[]),
    );
    chooseAccount(req, p.id, result.user.id);
    await redirectSaved(req, res, accountSectionUrl(p.id, requestedSection(req.query)));
  });

  // The account page's own sign-in, second step (account-mfa.router.ts): "Use a passkey" after the password.
  const pendingSignIn: RequestHandler = (req, res, next) => {
    const pending = pendingAccountSecondFactor(req, res.locals.platform.id);
    if (!pending) return refuse(res, 409, 'security:passkeys.errors.signInAgainShort');
    res.locals.pendingSignIn = pending;
    next();
  };
  const scopeOf = (res: Response) => `${res.locals.platform.id}:${res.locals.pendingSignIn!.userId}`;

  r.post(
    '/account/second-factor-passkey-options',
    resolvePlatform(s),
    issueCsrf,
    requireCsrf,
    pendingSignIn,
    async (req, res) => {
      if (!s.passkeys.relyingParty.isAvailable) return refuse(res, 400, 'security:passkeys.errors.hostName');
      const options = await s.passkeys.authenticationOptions(res.locals.platform, {
        id: res.locals.pendingSignIn!.userId,
      });
      startCeremony(req, 'second-factor', scopeOf(res), options.challenge, CHALLENGE_TTL_SECONDS);
      res.json({ options });
    },
  );

  r.post('/account/second-factor-passkey', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = res.locals.platform;
    const pending = pendingAccountSecondFactor(req, p.id);
    if (!pending) return redirectSaved(req, res, accountUrl(p.id, '/signin'));
    const expectedChallenge = takeChallenge(req, 'second-factor', `${p.id}:${pending.userId}`);
    const result = expectedChallenge
      ? await s.passkeys.authenticate(
          p,
          { credential: field(req.body, 'credential', 16_384), expectedChallenge, forUser: { id: pending.userId } },
          securityOrigin(req, p.id),
        )
      : { ok: false as const, message: 'security:passkeys.errors.signinExpired' };
    if (!result.ok) {
      setFlash(req, p.id, res.locals.t(result.message));
      return redirectSaved(req, res, accountUrl(p.id, '/second-factor'));
    }
    endAccountSecondFactor(req);
    await regenerateKeepingData(req);
    rememberSignIn(
      req,
      p.id,
      { userId: pending.userId, email: pending.email },
      Math.floor(deps.now().getTime() / 1000),
      amrOf([...(pending.firstFactor ?? ['pwd']), ...result.amr] as AuthMethod[]),
    );
    chooseAccount(req, p.id, pending.userId);
    await redirectSaved(req, res, accountSectionUrl(p.id, pending.section));
  });

  return r;
}
