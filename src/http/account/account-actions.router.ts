import { Router, type Response } from 'express';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { ProfileInput } from '../../services/account/profile.service';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { browserId, markSignedOut, regenerateKeepingData, rememberSignIn } from '../session/browser-session';
import { field, redirectSaved, setFlash, requireAccount } from '../session/account-session';
import { accountPageRenderer, accountSectionUrl, errorsByField, type AccountSection } from '../pages/account.page';
import { accountUrl } from '../urls';
import { securityOrigin } from '../request/security-origin';
import { frontchannelUrlsBeforeSignOut, stashFrontchannelFrames } from '../oauth/frontchannel-frames';

const PROFILE_FIELDS: (keyof ProfileInput)[] = [
  'given_name',
  'middle_name',
  'family_name',
  'nickname',
  'preferred_username',
  'phone_number',
  'street_address',
  'locality',
  'region',
  'postal_code',
  'country',
];

/** The forms of the account page; each answers with a redirect, or the page again with its errors (status 400). */
export function accountActionsRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const render = accountPageRenderer(s, deps);
  const form = [resolvePlatform(s), issueCsrf, requireCsrf, requireAccount(s)];
  const user = (res: Response) => res.locals.accountUser!;
  /** Back to the tab the form was on. */
  const back = (res: Response, section: AccountSection = 'profile') =>
    accountSectionUrl(res.locals.platform.id, section);
  const t = (res: Response) => res.locals.t;

  r.post('/account/profile', ...form, async (req, res) => {
    const input = Object.fromEntries(
      PROFILE_FIELDS.map((f) => [f, field(req.body, f, 400)]),
    ) as unknown as ProfileInput;
    const result = await s.account.profile.updateProfile(user(res), input);
    if (!result.ok)
      return render(
        req,
        res,
        user(res),
        { values: { ...input }, fieldErrors: errorsByField(result.errors), formError: 'account:errors.correctFields' },
        400,
      );
    setFlash(
      req,
      res.locals.platform.id,
      t(res)(result.changed ? 'account:flash.profileSaved' : 'account:flash.profileUnchanged'),
    );
    await redirectSaved(req, res, back(res));
  });

  r.post('/account/password', ...form, async (req, res) => {
    const p = res.locals.platform;
    const result = await s.account.security.changePassword(
      p,
      user(res),
      field(req.body, 'current_password', 300),
      field(req.body, 'new_password', 300),
      securityOrigin(req, p.id),
      res.locals.locale,
    );
    if (!result.ok)
      return render(
        req,
        res,
        user(res),
        {
          fieldErrors: errorsByField(result.errors),
          formError: 'account:errors.passwordNotChanged',
          section: 'security',
        },
        400,
      );
    // Every session ended; this browser proved the password just now, so it stays signed in.
    await regenerateKeepingData(req);
    rememberSignIn(
      req,
      p.id,
      { userId: user(res).id, email: user(res).email },
      Math.floor(deps.now().getTime() / 1000),
    );
    setFlash(req, p.id, t(res)('account:flash.passwordChanged'));
    await redirectSaved(req, res, back(res, 'security'));
  });

  // An account created through an upstream without a password sets one by the reset mail.
  r.post('/account/password/set', ...form, async (req, res) => {
    const p = res.locals.platform;
    await s.account.passwordReset.requestReset(p, user(res).email, securityOrigin(req, p.id), res.locals.locale);
    setFlash(req, p.id, t(res)('account:flash.setPasswordSent', { email: user(res).email }));
    await redirectSaved(req, res, back(res, 'security'));
  });

  // "Unlink" in Linked accounts: refused while it is the account's last way in.
  r.post('/account/identities/:id/unlink', ...form, async (req, res) => {
    const p = res.locals.platform;
    const result = await s.federation.identities.unlink(user(res), String(req.params.id), securityOrigin(req, p.id));
    if (!result.ok && result.reason === 'last_way_in') {
      return render(req, res, user(res), { formError: 'account:errors.lastWayIn', section: 'security' }, 400);
    }
    setFlash(
      req,
      p.id,
      result.ok
        ? t(res)('account:flash.unlinked', { provider: result.providerName })
        : t(res)('account:flash.alreadyUnlinked'),
    );
    await redirectSaved(req, res, back(res, 'security'));
  });

  r.post('/account/verify-email', ...form, async (req, res) => {
    const result = await s.account.emailVerification.sendLink(res.locals.platform, user(res), res.locals.locale);
    const message = result.sent
      ? t(res)('account:flash.verifySent', { email: user(res).email })
      : result.retryAfterSeconds > 0
        ? t(res)('account:flash.verifyWait', { count: Math.ceil(result.retryAfterSeconds / 60) })
        : t(res)('account:flash.alreadyVerified');
    setFlash(req, res.locals.platform.id, message);
    await redirectSaved(req, res, back(res));
  });

  r.post('/account/apps/revoke', ...form, async (req, res) => {
    const apps = await s.account.security.listApps(user(res).id);
    const app = apps.find((a) => a.clientId === field(req.body, 'client_id'));
    if (app)
      await s.account.security.revokeApp(
        user(res),
        app.clientId,
        securityOrigin(req, res.locals.platform.id, app.clientId),
      );
    setFlash(
      req,
      res.locals.platform.id,
      app ? t(res)('account:flash.appRevoked', { name: app.name }) : t(res)('account:flash.appNoAccess'),
    );
    await redirectSaved(req, res, back(res, 'apps'));
  });

  r.post('/account/signout', ...form, async (req, res) => {
    const p = res.locals.platform;
    // Front-Channel Logout: the apps' URLs are read before sign-out forgets them; the signed-out page frames them.
    stashFrontchannelFrames(req, p.id, await frontchannelUrlsBeforeSignOut(s, req, p, [user(res).id]));
    await s.authorize.signOut(p.id, user(res).id, browserId(req), securityOrigin(req, p.id), 'account_page');
    markSignedOut(req, p.id, user(res).id);
    await redirectSaved(req, res, accountUrl(p.id, '/signed-out'));
  });

  r.post('/account/signout-everywhere', ...form, async (req, res) => {
    const p = res.locals.platform;
    // Front channel: only this browser's apps can be reached (the back channel reaches the others).
    stashFrontchannelFrames(req, p.id, await frontchannelUrlsBeforeSignOut(s, req, p, [user(res).id]));
    await s.account.security.signOutEverywhere(user(res), securityOrigin(req, p.id));
    markSignedOut(req, p.id, user(res).id);
    await redirectSaved(req, res, `${accountUrl(p.id, '/signed-out')}&everywhere=1`);
  });

  return r;
}
