import { Router, type Request, type Response } from 'express';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import { isUuid } from '../../domain/ids';
import type { AuthMethod } from '../../domain/mfa';
import { isPageStep } from '../../domain/interaction';
import { UpstreamSignInError } from '../../services/federation/upstream-client';
import { OAuthError } from '../../errors';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { resolvePlatform } from '../middleware/resolve-platform';
import { hostedFormBody } from '../request/hosted-forms';
import { browserAccounts, findInteraction, regenerateKeepingData, rememberSignIn } from '../session/browser-session';
import { chooseAccount, field, redirectSaved } from '../session/account-session';
import { auditContext } from '../request/audit-context';
import { securityOrigin } from '../request/security-origin';
import { startAccountSecondFactor } from '../session/mfa-session';
import { createInteractionPages } from '../pages/interaction.pages';
import { renderUpstreamFailure } from '../pages/upstream.page';
import { renderContinuePage } from '../pages/continue.page';
import { renderAccountSignIn } from '../pages/passkeys';
import { rememberUpstream, takeUpstream, type PendingUpstreamEntry } from '../session/upstream-session';
import { accountSectionUrl, accountUrl, interactionUrl, requestedSection, upstreamCallbackUrl } from '../urls';
import { useUiLocales } from '../middleware/locale';

/**
 * Signing in through an upstream identity provider: "Continue with …" on an
 * authorization's sign-in and sign-up pages and on the account page's sign-in sends the browser to
 * the upstream (s.federation.client.begin, the pending sign-in kept in this browser's session by its
 * state); the platform's one callback finishes it (s.federation.client.finish) and hands the
 * verified profile to the interaction (s.interaction.upstreamVerified) or signs the account page in.
 * Every failure ends on the page that names the provider and leads back to the other ways in.
 */
export function upstreamRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const flow = s.interaction;
  const pages = createInteractionPages(s, deps);
  const { baseUrl } = deps.config;

  /** The interaction of this browser (as interaction.router.ts loads it), or restart / the expired message. */
  const loadInteraction = async (
    req: Request,
    res: Response,
    iid: string,
  ): Promise<AuthorizationRequest | undefined> => {
    const ar = findInteraction(req, iid);
    if (ar) {
      res.locals.platform = (await s.platforms.findPlatform(ar.platformId))!;
      res.locals.restart = ar.restart;
      useUiLocales(req, res, ar.uiLocales); // the authorization's language, as on its other pages
      return ar;
    }
    const restart = field(req.body, 'restart');
    if (restart) {
      res.redirect(303, `/oauth/authorize?${restart}`);
      return undefined;
    }
    throw new OAuthError(
      'invalid_request',
      'This sign-in page has expired. Go back to the app you came from and start again.',
    );
  };

  /** The upstream answered with an error, could not be reached or did not verify: audited, then the failure page. */
  async function failed(
    req: Request,
    res: Response,
    platformId: string,
    err: UpstreamSignInError | { reason: 'state_mismatch'; providerName: null },
    slug: string | null,
    signinUrl: string | null,
  ) {
    await s.federation.identities.failed(securityOrigin(req, platformId), slug, err.reason);
    deps.logger.info(
      {
        platformId,
        provider: slug,
        reason: err.reason,
        upstreamError: err instanceof UpstreamSignInError ? err.upstreamError : undefined,
      },
      'upstream sign-in failed',
    );
    renderUpstreamFailure(res, { providerName: err.providerName, reason: err.reason, signinUrl });
  }

  /** begin() toward the upstream, remembered in this session; undefined: no such enabled provider (or it failed: the page is sent). */
  async function begin(
    req: Request,
    res: Response,
    platformId: string,
    slug: string,
    purpose: PendingUpstreamEntry['purpose'],
    opts: { prompt?: string; maxAge?: number; loginHint?: string },
    signinUrl: string,
  ) {
    try {
      const started = await s.federation.client.begin(platformId, slug, {
        redirectUri: upstreamCallbackUrl(baseUrl, platformId),
        ...opts,
      });
      if (!started) return renderUpstreamFailure(res, { providerName: null, reason: 'unknown_provider', signinUrl });
      rememberUpstream(req, { platformId, purpose, pending: started.pending });
      // The page's form-action lists the issuer's origin only (upstream.page.ts: upstreamButtons).
      if (new URL(started.authorizationUrl).origin !== new URL(started.provider.issuer).origin)
        return renderContinuePage(res, started.provider.displayName, started.authorizationUrl);
      res.redirect(303, started.authorizationUrl);
    } catch (err) {
      if (!(err instanceof UpstreamSignInError)) throw err;
      await failed(req, res, platformId, err, slug, signinUrl);
    }
  }

  // "Continue with …" on an authorization's sign-in or sign-up page.
  r.post('/interaction/:iid/upstream/:slug', hostedFormBody, issueCsrf, async (req, res, next) => {
    const ar = await loadInteraction(req, res, String(req.params.iid));
    if (!ar) return;
    try {
      requireCsrf(req, res, () => undefined);
    } catch (err) {
      const restart = field(req.body, 'restart');
      if (restart) return res.redirect(303, `/oauth/authorize?${restart}`);
      return next(err);
    }
    const browser = browserAccounts(req, ar.platformId);
    const at = await flow.current(ar, browser);
    if (at.kind !== 'signin' && at.kind !== 'signup') return pages.show(req, res, ar, at);
    const opts = flow.upstreamStarted(ar, at);
    await begin(
      req,
      res,
      ar.platformId,
      String(req.params.slug),
      { kind: 'interaction', iid: ar.id },
      opts,
      interactionUrl(ar.id, '/signin'),
    );
  });

  // The account page's sign-in through an upstream: only an identity already linked signs in.
  r.post('/account/upstream/:slug', resolvePlatform(s), issueCsrf, requireCsrf, async (req, res) => {
    const p = res.locals.platform;
    const section = requestedSection(req.query);
    await begin(
      req,
      res,
      p.id,
      String(req.params.slug),
      { kind: 'account', ...(section ? { section } : {}) },
      {},
      accountUrl(p.id, '/signin'),
    );
  });

  // The platform's one callback (the redirect_uri registered at every upstream).
  r.get('/platforms/:guid/upstream/callback', async (req, res) => {
    const guid = String(req.params.guid);
    const state = typeof req.query.state === 'string' ? req.query.state : undefined;
    const entry = takeUpstream(req, state);
    const platform = isUuid(guid) ? await s.platforms.findPlatform(guid) : undefined;
    if (!platform) throw new OAuthError('not_found', `unknown platform "${guid}"`);
    res.locals.platform = platform;
    const interaction = entry?.purpose.kind === 'interaction' ? findInteraction(req, entry.purpose.iid) : undefined;
    if (interaction) useUiLocales(req, res, interaction.uiLocales); // the failure page and the next step speak the authorization's language
    const signinUrl = interaction
      ? interactionUrl(interaction.id, '/signin')
      : entry?.purpose.kind === 'account'
        ? accountUrl(platform.id, '/signin')
        : null;
    if (!entry || entry.platformId !== platform.id || (entry.purpose.kind === 'interaction' && !interaction)) {
      return failed(
        req,
        res,
        platform.id,
        { reason: 'state_mismatch', providerName: null },
        entry?.pending.slug ?? null,
        signinUrl,
      );
    }
    let profile;
    try {
      profile = await s.federation.client.finish(platform.id, entry.pending, new URL(req.originalUrl, baseUrl));
    } catch (err) {
      if (!(err instanceof UpstreamSignInError)) throw err;
      return failed(req, res, platform.id, err, entry.pending.slug, signinUrl);
    }
    const provider = (await s.federation.providers.forSignIn(platform.id, entry.pending.slug))?.provider;
    if (!provider || provider.id !== profile.providerId)
      return failed(
        req,
        res,
        platform.id,
        new UpstreamSignInError('state_mismatch', entry.pending.slug),
        entry.pending.slug,
        signinUrl,
      );

    if (interaction) {
      res.locals.restart = interaction.restart;
      const browser = browserAccounts(req, interaction.platformId);
      const at = await flow.current(interaction, browser);
      // Reached by a redirect of the upstream's sign-in or consent form: the code goes on to the app by a page (ClientHop).
      if (at.kind !== 'signin' && at.kind !== 'signup') {
        // signed in meanwhile (another tab)
        return isPageStep(at)
          ? pages.show(req, res, interaction, at)
          : pages.answerStep(req, res, interaction, at, 'page');
      }
      const outcome = await flow.upstreamVerified(
        interaction,
        browser,
        at,
        provider,
        profile,
        auditContext(req, { type: 'user' }),
      );
      if (outcome.kind !== 'refused') return pages.answerStep(req, res, interaction, outcome, 'page');
      return pages.show(
        req,
        res,
        interaction,
        outcome.step,
        { error: outcome.error, errorValues: outcome.errorValues },
        outcome.status,
      );
    }

    // The account page: a linked identity of an enabled account signs in, as the password form does.
    const identities = s.federation.identities;
    const resolved = await identities.resolve(platform.id, profile);
    if (resolved.kind !== 'linked' || resolved.disabled) {
      await identities.failed(
        securityOrigin(req, platform.id),
        provider.slug,
        resolved.kind === 'linked' ? 'disabled' : 'not_linked',
        resolved.kind === 'new' ? null : resolved.user.id,
      );
      const error =
        resolved.kind === 'linked'
          ? res.locals.t('upstream:errors.cannotSignIn')
          : res.locals.t('upstream:errors.notLinked', { provider: provider.displayName });
      return renderAccountSignIn(s, res, { email: '', error }, 400);
    }
    const amr = identities.amrFor(provider, profile);
    await identities.signedIn(resolved.identity, provider, profile, amr, securityOrigin(req, platform.id));
    const { user } = resolved;
    const section = entry.purpose.kind === 'account' ? entry.purpose.section : undefined;
    // The account's second factor before this browser counts as signed in (account-mfa.router.ts).
    if ((await s.mfa.secondFactorNeed(platform.id, user.id, amr)) === 'second_factor') {
      startAccountSecondFactor(req, platform.id, user, amr as AuthMethod[], section);
      return redirectSaved(req, res, accountUrl(platform.id, '/second-factor'));
    }
    await regenerateKeepingData(req);
    rememberSignIn(
      req,
      platform.id,
      { userId: user.id, email: user.email },
      Math.floor(deps.now().getTime() / 1000),
      amr,
    );
    chooseAccount(req, platform.id, user.id);
    await redirectSaved(req, res, accountSectionUrl(platform.id, section));
  });

  return r;
}
