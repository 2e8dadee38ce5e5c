import { Router, type Request, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../../errors';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import type { BrowserAccounts, PageStep, Step } from '../../domain/interaction';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { Refused } from '../../services/interaction/transitions';
import { issueCsrf, requireCsrf } from '../middleware/csrf';
import { useUiLocales } from '../middleware/locale';
import { browserAccounts, findInteraction, restartOfEnded, saveInteraction } from '../session/browser-session';
import { attemptSource } from '../request/attempt-source';
import { field } from '../session/account-session';
import { hostedFormBody } from '../request/hosted-forms';
import { createInteractionPages } from '../pages/interaction.pages';
import { interactionUrl, linkAccountMailUrl } from '../urls';
import { renderPage } from '../pages/render';
import { allowFormRedirectTo } from '../middleware/security-headers';
import { startCeremony, takeChallenge, type CeremonyPurpose } from '../session/passkey-session';
import { CHALLENGE_TTL_SECONDS } from '../../services/mfa/passkeys.service';
import { auditContext } from '../request/audit-context';
import { sendJsonError } from '../errors/error-handler';
import {
  frontchannelUrlsBeforeSignOut,
  stashFrontchannelFrames,
  takeFrontchannelFrames,
} from '../oauth/frontchannel-frames';

/**
 * The hosted pages of an authorization: each route maps the request to one transition
 * of the interaction service (src/services/interaction/transitions.ts) and answers the step it
 * returns — its page (src/http/pages/interaction.pages.ts), or the client.
 */
/** The passkey options of a step this browser is no longer on: JSON public/passkeys.js shows. */
const passkeyConflict = (res: Response, message: string) =>
  sendJsonError(res, new OAuthError('invalid_request', message, { status: 409 }));

export function interactionRouter(s: Services, deps: HttpDeps): Router {
  const r = Router();
  const flow = s.interaction;
  const pages = createInteractionPages(s, deps);

  /** Loads the interaction into res.locals; a lost one restarts from its original query or explains. */
  const loadInteraction: RequestHandler = async (req, res, next) => {
    const ar = findInteraction(req, String(req.params.iid));
    if (ar) {
      res.locals.ar = ar;
      res.locals.platform = (await s.platforms.findPlatform(ar.platformId))!;
      res.locals.restart = ar.restart;
      useUiLocales(req, res, ar.uiLocales);
      ar.locale = res.locals.locale;
      return next();
    }
    const restart = req.method === 'POST' ? field(req.body, 'restart') : restartOfEnded(req, String(req.params.iid)); // GET: Back to a finished page
    if (restart) return res.redirect(303, `/oauth/authorize?${restart}`);
    throw new OAuthError(
      'invalid_request',
      'This sign-in page has expired. Go back to the app you came from and start again.',
      { pageMessage: 'errors:page.expired' },
    );
  };

  /** A lost or mismatched CSRF token on a known interaction restarts it rather than failing. */
  const csrfOrRestart: RequestHandler = (req, res, next) => {
    try {
      requireCsrf(req, res, next);
    } catch (err) {
      const restart = field(req.body, 'restart');
      if (restart) return res.redirect(303, `/oauth/authorize?${restart}`);
      throw err;
    }
  };

  const form = [loadInteraction, issueCsrf, csrfOrRestart];
  /** The request as the audit log records it (the services add who, once known). */
  const audit = (req: Request) => auditContext(req, { type: 'user' });
  const interaction = (req: Request, res: Response) => {
    const ar = res.locals.ar as AuthorizationRequest;
    return { ar, browser: browserAccounts(req, ar.platformId) };
  };
  /** A transition's step (its page or the client), or the page again with the refused form's messages. */
  const answer = async (req: Request, res: Response, outcome: Step | Refused, values?: Record<string, string>) => {
    const { ar } = interaction(req, res);
    if (outcome.kind !== 'refused') return pages.answerStep(req, res, ar, outcome);
    if (outcome.retryAfterSeconds) res.set('Retry-After', String(outcome.retryAfterSeconds));
    const extra = {
      error: outcome.error,
      errorValues: outcome.errorValues,
      fieldErrors: outcome.fieldErrors,
      values: values && { ...values, ...outcome.values },
    };
    return pages.show(req, res, ar, outcome.step, extra, outcome.status);
  };

  /**
   * A form of one step: it acts only while the interaction is at one of `kinds`; a form sent from
   * an older page (another tab, Back) shows the current step instead, or `elsewhere` answers.
   */
  const atStep =
    <K extends PageStep['kind']>(
      kinds: readonly K[],
      handle: (
        req: Request,
        res: Response,
        c: { ar: AuthorizationRequest; browser: BrowserAccounts; at: Extract<PageStep, { kind: K }> },
      ) => Promise<unknown>,
      elsewhere: (req: Request, res: Response, ar: AuthorizationRequest, at: Step) => unknown = pages.show,
    ): RequestHandler =>
    async (req, res) => {
      const { ar, browser } = interaction(req, res);
      const at = await flow.current(ar, browser);
      if (!(kinds as readonly string[]).includes(at.kind)) return elsewhere(req, res, ar, at);
      await handle(req, res, { ar, browser, at: at as Extract<PageStep, { kind: K }> });
    };

  /**
   * Options for navigator.credentials.get at one step (JSON, for public/passkeys.js); the challenge
   * is this browser's, used once. A page out of date, or no relying party (an IP BASE_URL): 409.
   */
  const passkeyOptions = (
    kind: 'signin' | 'second_factor' | 'link_account',
    purpose: CeremonyPurpose,
    scope: (ar: AuthorizationRequest) => string,
    reload: string,
  ) => {
    const stale = (_req: Request, res: Response) => passkeyConflict(res, reload);
    return atStep(
      [kind],
      async (req, res, { ar, at }) => {
        if (!s.passkeys.relyingParty.isAvailable) return stale(req, res);
        const options = await s.passkeys.authenticationOptions(res.locals.platform, 'user' in at ? at.user : undefined);
        startCeremony(req, purpose, scope(ar), options.challenge, CHALLENGE_TTL_SECONDS);
        res.json({ options });
      },
      stale,
    );
  };
  const credential = (req: Request, purpose: CeremonyPurpose, scope: string) => ({
    credential: field(req.body, 'credential', 16_384),
    expectedChallenge: takeChallenge(req, purpose, scope),
  });

  // Every form POST below: a form body, each field once and bounded (zod), before anything else.
  r.post('/interaction/:iid/:form', hostedFormBody);

  r.get('/interaction/:iid', loadInteraction, issueCsrf, async (req, res) => {
    const { ar, browser } = interaction(req, res);
    takeFrontchannelFrames(req, res, ar.platformId); // after the chooser's "Sign out": the apps' logout iframes
    await pages.show(req, res, ar, await flow.current(ar, browser));
  });

  // Links between the forms: remembered so a reload stays on the chosen form.
  for (const link of ['signin', 'signup', 'chooser'] as const) {
    r.get(`/interaction/:iid/${link}`, loadInteraction, (req, res) => {
      const { ar } = interaction(req, res);
      flow.switchForm(ar, link);
      saveInteraction(req, ar);
      res.redirect(303, interactionUrl(ar.id));
    });
  }

  r.post(
    '/interaction/:iid/signin',
    ...form,
    atStep(['signin'], async (req, res, { ar, browser, at }) => {
      const credentials = { email: field(req.body, 'email').trim(), password: field(req.body, 'password') };
      await answer(
        req,
        res,
        await flow.passwordSubmitted(ar, browser, at, credentials, attemptSource(req), audit(req)),
      );
    }),
  );

  // "Use another email" on a sign-in pinned by login_hint/id_token_hint: back to the app,
  // which hears account_selection_required and may ask again without the hint.
  r.post(
    '/interaction/:iid/another-email',
    ...form,
    atStep(
      ['signin'],
      async (req, res, { at }) => {
        await answer(req, res, flow.anotherEmailChosen(at) || at);
      },
      (req, res, _ar, at) => answer(req, res, at),
    ),
  );

  // "Sign in with a passkey": options for the browser, then the form the script submits with its answer.
  r.post(
    '/interaction/:iid/passkey-options',
    ...form,
    passkeyOptions('signin', 'signin', (ar) => ar.id, 'Reload the page to sign in with a passkey.'),
  );
  r.post(
    '/interaction/:iid/passkey',
    ...form,
    atStep(['signin'], async (req, res, { ar, browser, at }) => {
      await answer(
        req,
        res,
        await flow.passkeySubmitted(ar, browser, at, res.locals.platform, credential(req, 'signin', ar.id), audit(req)),
      );
    }),
  );

  // The second factor: the code form, its two methods, and setting up an authenticator
  // app when the platform requires a second factor (or the client asked for acr mfa) and the user has none.
  r.post(
    '/interaction/:iid/second-factor',
    ...form,
    atStep(['second_factor'], async (req, res, { ar, browser, at }) => {
      const submitted = { method: field(req.body, 'method'), code: field(req.body, 'code', 64) };
      await answer(
        req,
        res,
        await flow.secondFactorSubmitted(ar, browser, at, submitted, attemptSource(req), audit(req)),
      );
    }),
  );

  // "Use a passkey" as the second factor: options listing this user's passkeys, then the form.
  r.post(
    '/interaction/:iid/second-factor-passkey-options',
    ...form,
    passkeyOptions('second_factor', 'second-factor', (ar) => ar.id, 'Reload the page to use a passkey.'),
  );
  r.post(
    '/interaction/:iid/second-factor-passkey',
    ...form,
    atStep(['second_factor'], async (req, res, { ar, browser, at }) => {
      await answer(
        req,
        res,
        await flow.passkeySecondFactorSubmitted(
          ar,
          browser,
          at,
          res.locals.platform,
          credential(req, 'second-factor', ar.id),
          audit(req),
        ),
      );
    }),
  );

  for (const method of ['totp', 'recovery_code'] as const) {
    r.get(`/interaction/:iid/second-factor/${method}`, loadInteraction, (req, res) => {
      const { ar } = interaction(req, res);
      flow.chooseSecondFactorMethod(ar, method);
      saveInteraction(req, ar);
      res.redirect(303, interactionUrl(ar.id));
    });
  }

  r.post(
    '/interaction/:iid/totp-setup',
    ...form,
    atStep(['totp_setup'], async (req, res, { ar, browser, at }) => {
      const outcome = await flow.totpSetupConfirmed(ar, browser, at, field(req.body, 'code', 64), audit(req));
      if (outcome.kind === 'refused') return answer(req, res, outcome);
      // The recovery codes are shown once, in this answer (never kept in clear); "Continue" goes on.
      saveInteraction(req, ar);
      allowFormRedirectTo(res, ar.redirectUri);
      renderPage(res, 'recovery-codes', {
        title: res.locals.t('mfa:recoveryCodes.title'),
        notice: res.locals.t('mfa:recoveryCodes.notice'),
        codes: outcome.recoveryCodes,
        replacedEarlier: outcome.replacedEarlier,
        continueAction: interactionUrl(ar.id, '/continue'),
        restart: ar.restart,
      });
    }),
  );

  r.post('/interaction/:iid/continue', ...form, async (req, res) => {
    const { ar, browser } = interaction(req, res);
    await pages.show(req, res, ar, await flow.current(ar, browser));
  });

  r.post(
    '/interaction/:iid/signup',
    ...form,
    atStep(['signup', 'signin'], async (req, res, { ar, browser, at }) => {
      const values = {
        email: field(req.body, 'email').trim(),
        given_name: field(req.body, 'given_name'),
        family_name: field(req.body, 'family_name'),
        birthdate: field(req.body, 'birthdate'),
        phone_number: field(req.body, 'phone_number'),
      };
      const outcome = await flow.signUpSubmitted(
        ar,
        browser,
        at,
        res.locals.platform,
        { ...values, password: field(req.body, 'password') },
        attemptSource(req),
        audit(req),
      );
      await answer(req, res, outcome, values);
    }),
  );

  // "Link your {provider} account" — proof by the account's password, one of its passkeys, or a mailed link.
  r.post('/interaction/:iid/link-account/:proof', hostedFormBody);
  r.post(
    '/interaction/:iid/link-account/password',
    ...form,
    atStep(['link_account'], async (req, res, { ar, browser, at }) => {
      await answer(
        req,
        res,
        await flow.linkPasswordSubmitted(ar, browser, at, field(req.body, 'password'), attemptSource(req), audit(req)),
      );
    }),
  );

  r.post(
    '/interaction/:iid/link-account/passkey-options',
    ...form,
    passkeyOptions('link_account', 'second-factor', (ar) => `link:${ar.id}`, 'Reload the page to use a passkey.'),
  );
  r.post(
    '/interaction/:iid/link-account/passkey',
    ...form,
    atStep(['link_account'], async (req, res, { ar, browser, at }) => {
      await answer(
        req,
        res,
        await flow.linkPasskeySubmitted(
          ar,
          browser,
          at,
          res.locals.platform,
          credential(req, 'second-factor', `link:${ar.id}`),
          audit(req),
        ),
      );
    }),
  );

  r.post(
    '/interaction/:iid/link-account/email',
    ...form,
    atStep(['link_account'], async (req, res, { ar, at }) => {
      const sent = await flow.linkMailRequested(
        ar,
        at,
        res.locals.platform,
        (token) => `${deps.config.baseUrl}${linkAccountMailUrl(ar.id, token)}`,
      );
      saveInteraction(req, ar);
      await pages.show(req, res, ar, sent.step, { notice: sent.notice });
    }),
  );

  // The mailed link, opened in the browser that asked (its secret is checked against this interaction).
  r.get('/interaction/:iid/link-account/email', loadInteraction, issueCsrf, async (req, res) => {
    const { ar, browser } = interaction(req, res);
    const token = typeof req.query.token === 'string' ? req.query.token.slice(0, 128) : '';
    await answer(req, res, await flow.linkMailOpened(ar, browser, token, audit(req)));
  });

  r.post(
    '/interaction/:iid/consent',
    ...form,
    atStep(['consent'], async (req, res, { ar, browser, at }) => {
      await answer(
        req,
        res,
        field(req.body, 'decision') === 'allow'
          ? await flow.consentGiven(ar, browser, at, audit(req))
          : flow.consentDenied(),
      );
    }),
  );

  r.post('/interaction/:iid/chooser', ...form, async (req, res) => {
    const { ar, browser } = interaction(req, res);
    const known = (name: string) => browser.list().some((a) => a.userId === field(req.body, name));
    // Front-Channel Logout: the apps of the accounts about to be signed out, read before sign-out forgets them.
    const leaving =
      known('account') || field(req.body, 'another')
        ? []
        : known('signout')
          ? [field(req.body, 'signout')]
          : field(req.body, 'signout_all')
            ? browser.list().map((a) => a.userId)
            : [];
    const frames = await frontchannelUrlsBeforeSignOut(
      s,
      req,
      res.locals.platform,
      browser
        .list()
        .filter((a) => a.authTime !== null && leaving.includes(a.userId))
        .map((a) => a.userId),
    );
    const step = known('account')
      ? await flow.pickAccount(ar, browser, field(req.body, 'account'))
      : field(req.body, 'another')
        ? await flow.useAnotherAccount(ar, browser)
        : known('signout')
          ? await flow.signOutAccount(ar, browser, field(req.body, 'signout'), audit(req))
          : field(req.body, 'signout_all')
            ? await flow.signOutAll(ar, browser, audit(req))
            : await flow.current(ar, browser);
    stashFrontchannelFrames(req, ar.platformId, frames); // the page after the redirect carries them
    await answer(req, res, step);
  });

  return r;
}
