import { Router, type Request, type RequestHandler, type Response } from 'express';
import { wireClientId } from '../../domain/client';
import type { Services } from '../../services';
import type { LogoutParams, LogoutRequest } from '../../services/logout.service';
import { invalidRequest } from '../../errors';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { allowFormRedirectTo } from '../middleware/security-headers';
import { singleValued } from '../request/params';
import { browserId, markSignedOut } from '../session/browser-session';
import { field, signedInAccounts } from '../session/account-session';
import { accountUrl } from '../urls';
import { renderPage } from '../pages/render';
import { redirectPostToGet } from './post-to-get';
import { securityOrigin } from '../request/security-origin';
import { frontchannelUrlsBeforeSignOut, showFrontchannelFrames } from './frontchannel-frames';

const PARAMS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'] as const;

/** POST /oauth/logout (RP-Initiated Logout §2): 303 to the same request as a GET, before any session work. */
export const redirectLogoutPost = redirectPostToGet(
  '/oauth/logout',
  (name) => name === 'platform_guid' || (PARAMS as readonly string[]).includes(name),
  'The logout request is too large.',
);

function logoutParams(input: unknown): LogoutParams {
  const raw = singleValued(input); // a repeated parameter is invalid_request
  const out: LogoutParams = {};
  for (const k of PARAMS) {
    const v = raw[k];
    if (v === undefined || v === '') continue;
    if (v.length > 8192) throw invalidRequest(`parameter "${k}" is too long`);
    out[k] = v;
  }
  return out;
}

/** Where the signed-out page leads: back to the app when it registered its home page, and to the account page. */
function pageLinks(res: Response, lr: LogoutRequest): Array<{ href: string; label: string }> {
  const t = res.locals.t;
  const app =
    lr.client?.clientUri && /^https?:\/\//i.test(lr.client.clientUri)
      ? [{ href: lr.client.clientUri, label: t('logout:backToApp', { app: lr.client.name }) }]
      : [];
  return [...app, { href: accountUrl(res.locals.platform.id), label: t('logout:toAccount') }];
}

/**
 * OpenID Connect RP-Initiated Logout 1.0 at /oauth/logout (GET and POST, §2). A valid
 * id_token_hint signs its user out at once; any other request asks the user first (§6: the
 * request may come from anyone). Signing out revokes the refresh tokens issued through this
 * browser session, then the browser goes to the registered post_logout_redirect_uri with state.
 * Front-Channel Logout 1.0: the apps of the signed-out sessions that registered a frontchannel_logout_uri
 * are loaded in hidden iframes on the page that follows (with a redirect: an intermediate page first).
 */
export function logoutRouter(s: Services): Router {
  const r = Router();

  /** Signs the users out of this browser; the front-channel logout URLs of their apps (read first). */
  async function signOut(req: Request, res: Response, userIds: string[], lr: LogoutRequest): Promise<string[]> {
    if (userIds.length === 0) return []; // nothing signed in: no browser id, no session row
    const platformId = res.locals.platform.id;
    const frames = await frontchannelUrlsBeforeSignOut(s, req, res.locals.platform, userIds);
    await s.logout.endBrowserSessions(
      platformId,
      userIds,
      browserId(req),
      securityOrigin(req, platformId, lr.client?.id),
    );
    for (const id of userIds) markSignedOut(req, platformId, id);
    return frames;
  }

  async function finish(
    req: Request,
    res: Response,
    lr: LogoutRequest,
    signedOut: boolean,
    frontchannel: string[] = [],
  ) {
    res.set('Cache-Control', 'no-store');
    const p = res.locals.platform;
    const t = res.locals.t;
    const frames = showFrontchannelFrames(res, frontchannel);
    if (lr.redirectUri) {
      const url = new URL(lr.redirectUri);
      if (lr.state !== undefined) url.searchParams.set('state', lr.state);
      if (frames.length === 0) return res.redirect(req.method === 'POST' ? 303 : 302, url.toString());
      // Front-Channel Logout §3: the apps' frames load on this page, then on to the app (no script: CSP).
      return renderPage(res, 'frontchannel-logout', {
        title: t('logout:frontchannel.title'),
        platformName: p.name,
        heading: t('logout:frontchannel.heading', { count: frames.length }),
        message: t('logout:frontchannel.message', { platform: p.name }),
        continueUrl: url.toString(),
        refreshUrl: url.toString(),
      });
    }
    renderPage(res, 'signed-out', {
      title: signedOut ? t('logout:signedOut.title') : t('logout:stillIn.title'),
      platformName: p.name,
      heading: signedOut ? t('logout:signedOut.heading') : t('logout:stillIn.heading'),
      message: signedOut
        ? t('logout:signedOut.message', { platform: p.name })
        : t('logout:stillIn.message', { platform: p.name }),
      links: pageLinks(res, lr),
    });
  }

  const handle: RequestHandler = async (req, res) => {
    const p = res.locals.platform;
    const params = logoutParams(req.method === 'POST' ? req.body : req.query);
    const lr = await s.logout.validateLogout(p, params);
    const signedIn = signedInAccounts(req, p.id);
    if (lr.hintSub) {
      // Trusted: the app holds an ID token of this user; only that account is signed out.
      const frames = await signOut(
        req,
        res,
        signedIn.filter((a) => a.userId === lr.hintSub).map((a) => a.userId),
        lr,
      );
      return await finish(req, res, lr, true, frames);
    }
    if (signedIn.length === 0) return await finish(req, res, lr, true);
    if (lr.redirectUri) allowFormRedirectTo(res, lr.redirectUri); // "Sign out" ends there (CSP form-action)
    renderPage(res, 'logout-confirm', {
      title: res.locals.t('logout:confirm.title'),
      platformName: p.name,
      csrfToken: res.locals.csrfToken,
      clientName: lr.client?.name ?? null,
      action: `/oauth/logout/confirm?platform_guid=${encodeURIComponent(p.id)}`,
      accounts: signedIn.map((a) => ({ email: a.email })),
      hidden: Object.fromEntries(
        Object.entries({
          client_id: lr.client && wireClientId(lr.client),
          post_logout_redirect_uri: lr.redirectUri,
          state: lr.state,
        }).filter(([, v]) => v !== undefined),
      ),
    });
  };
  r.get('/oauth/logout', resolvePlatform(s), issueCsrf, handle);

  r.post('/oauth/logout/confirm', resolvePlatform(s), requireCsrf, async (req, res) => {
    const p = res.locals.platform;
    const hidden = Object.fromEntries(PARAMS.map((k) => [k, field(req.body, k, 8192)]));
    const lr = await s.logout.validateLogout(p, logoutParams(hidden)); // checked again: hidden fields are input too
    if (field(req.body, 'decision') !== 'logout')
      return await finish(req, res, { ...lr, redirectUri: undefined }, false);
    const frames = await signOut(
      req,
      res,
      signedInAccounts(req, p.id).map((a) => a.userId),
      lr,
    );
    // Signed-out accounts stay listed (the chooser offers them with the email pre-filled).
    await finish(req, res, lr, true, frames);
  });

  return r;
}
