import type { Request, Response } from 'express';
import type { AuthorizationRequest } from '../../domain/authorization-request';
import { isPageStep, type PageStep, type Step } from '../../domain/interaction';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import {
  presentChooserAccounts,
  presentConsentRequest,
  presentConsentResources,
} from '../../presenters/pages.presenter';
import { createStepAnswer } from '../oauth/authorize-response';
import { accountsOf } from '../session/browser-session';
import { allowFormRedirectTo } from '../middleware/security-headers';
import { interactionUrl } from '../urls';
import { renderPage } from './render';
import { presentTotpSetup } from '../../presenters/totp.presenter';
import { presentSelfRegisteredClient } from '../../presenters/self-registered-client.presenter';
import { signinPage } from './signin.page';
import { allowScriptsFor, passkeyButton } from './passkeys';
import { upstreamButtons } from './upstream.page';
import { allowPageScript } from '../middleware/security-headers';
import { MIN_AGE_YEARS, ruleValues } from '../../services/user-rules';
import { translateMessage } from './messages';
import { LINK_MAIL_TTL_MINUTES } from '../../services/interaction/transitions';

/** What a refused form adds to its page: the message, per-field messages, the values typed. */
export interface PageExtra {
  error?: string | null;
  /** The values of the error's placeholders (a catalog key's {{count}}, {{email}}). */
  errorValues?: Record<string, string | number>;
  fieldErrors?: Record<string, string>;
  values?: Record<string, string | undefined>;
  /** A message that is no error ("We sent a link …"). */
  notice?: string;
}

type Builder<K extends PageStep['kind']> = (c: {
  req: Request;
  res: Response;
  ar: AuthorizationRequest;
  step: Extract<PageStep, { kind: K }>;
  extra: PageExtra;
}) => Promise<Record<string, unknown>> | Record<string, unknown>;

/**
 * The pages of an authorization, one builder per step, and `show`, the one place that
 * chooses the page for a step. A step that is not a page (the code, an error) is answered to the
 * client instead. Typed over every page step, so a new step needs its builder here.
 */
export function createInteractionPages(s: Services, deps: HttpDeps) {
  const { baseUrl, passwordMinLength } = deps.config;
  const answerStep = createStepAnswer(s, deps);
  const url = interactionUrl;

  const builders: { [K in PageStep['kind']]: { view: string; build: Builder<K> } } = {
    signin: {
      view: 'signin',
      build: async ({ req, res, ar, step, extra }) =>
        signinPage(res, {
          action: url(ar.id, '/signin'),
          email: step.email ?? '',
          emailLocked: step.emailLocked,
          signupUrl: url(ar.id, '/signup'),
          forgotUrl: url(ar.id, '/forgot'),
          chooserUrl: accountsOf(req, ar.platformId).length > 0 && !step.emailLocked ? url(ar.id, '/chooser') : null,
          error: extra.error ?? null,
          errorValues: extra.errorValues,
          // The page names the app it signs in to; a pinned email can still go back to it for another account.
          app: ar.clientName,
          anotherEmailAction: step.emailLocked ? url(ar.id, '/another-email') : null,
          // A passwordless first factor; autofill (conditional UI) unless the email is pinned.
          passkey: passkeyButton(
            s,
            { action: url(ar.id, '/passkey'), options: url(ar.id, '/passkey-options') },
            !step.emailLocked,
          ),
          // "Continue with …" for each enabled upstream provider.
          upstreams: await upstreamButtons(s, res, ar.platformId, (slug) => url(ar.id, `/upstream/${slug}`)),
        }),
    },
    signup: {
      view: 'signup',
      build: async ({ res, ar, step, extra }) => {
        const t = res.locals.t;
        const locale = res.locals.locale ?? 'en';
        // After an upstream sign-in, pre-filled from what it gave; the password is optional.
        const up = ar.upstream && !ar.upstream.link ? ar.upstream : undefined;
        const prefill = up
          ? {
              email: up.email ?? '',
              given_name: up.givenName ?? '',
              family_name: up.familyName ?? '',
              birthdate: '',
              phone_number: '',
            }
          : {
              email: step.email ?? '',
              given_name: ar.prefill.givenName ?? '',
              family_name: ar.prefill.familyName ?? '',
              birthdate: '',
              phone_number: ar.prefill.phoneNumber ?? '',
            };
        allowPageScript(res, 'password-toggle');
        // The rules' messages are catalog keys (user-rules.ts) naming the limits ({{min}}, {{minAge}}).
        const values = ruleValues(passwordMinLength);
        return {
          title: t('signup:title'),
          app: ar.clientName,
          action: url(ar.id, '/signup'),
          emailLocked: step.emailLocked,
          signinUrl: url(ar.id, '/signin'),
          passwordMinLength,
          minAge: MIN_AGE_YEARS,
          error: translateMessage(t, extra.error, extra.errorValues ?? {}),
          fieldErrors: Object.fromEntries(
            Object.entries(extra.fieldErrors ?? {}).map(([k, m]) => [k, translateMessage(t, m, values)]),
          ),
          // An unambiguous example date in the page's language ("31 December 1990", "31. Dezember 1990").
          birthdateExample: new Intl.DateTimeFormat(locale, {
            day: 'numeric',
            month: 'long',
            year: 'numeric',
            timeZone: 'UTC',
          }).format(Date.UTC(1990, 11, 31)),
          values: extra.values ? { ...extra.values, ...(up?.email ? { email: up.email } : {}) } : prefill,
          viaProvider: up?.providerName ?? null,
          passwordOptional: Boolean(up),
          upstreams: up ? [] : await upstreamButtons(s, res, ar.platformId, (slug) => url(ar.id, `/upstream/${slug}`)),
        };
      },
    },
    // The account with the upstream's email proves it is theirs before the link.
    link_account: {
      view: 'link-account',
      build: async ({ res, ar, step, extra }) => {
        const t = res.locals.t;
        const [hasPassword, passkeyCount] = await Promise.all([
          s.federation.identities.hasPassword(ar.platformId, step.user.id),
          s.passkeys.count(ar.platformId, step.user.id),
        ]);
        // The link's messages name the account, the provider and how long the mailed link works.
        const params = { email: step.user.email, provider: step.providerName, minutes: LINK_MAIL_TTL_MINUTES };
        return {
          title: t('link:title', { provider: step.providerName }),
          providerName: step.providerName,
          email: step.user.email,
          hasPassword,
          passwordAction: url(ar.id, '/link-account/password'),
          mailAction: url(ar.id, '/link-account/email'),
          passkey:
            passkeyCount > 0
              ? passkeyButton(
                  s,
                  { action: url(ar.id, '/link-account/passkey'), options: url(ar.id, '/link-account/passkey-options') },
                  false,
                  t('link:usePasskey'),
                )
              : null,
          error: translateMessage(t, extra.error, { ...params, ...extra.errorValues }),
          notice: translateMessage(t, extra.notice, params),
          cancelUrl: url(ar.id, '/signin'),
        };
      },
    },
    chooser: {
      view: 'chooser',
      build: async ({ req, res, ar }) => {
        const accounts = accountsOf(req, ar.platformId);
        const users = await s.users.findManyByIds(
          ar.platformId,
          accounts.map((x) => x.userId),
        );
        return {
          title: res.locals.t('chooser:title'),
          action: url(ar.id, '/chooser'),
          clientName: ar.clientName,
          accounts: presentChooserAccounts(accounts, users, baseUrl),
        };
      },
    },
    // Other second factors (passkeys) add an entry to `otherMethods` (/work on second-factor.ejs).
    second_factor: {
      view: 'second-factor',
      build: async ({ res, ar, step, extra }) => {
        const t = res.locals.t;
        const method = ar.secondFactorMethod ?? 'totp';
        const [{ totp }, passkeyCount] = await Promise.all([
          s.mfa.factorsOf(step.user.id),
          s.passkeys.count(ar.platformId, step.user.id),
        ]);
        return {
          // "Use a passkey" (the user's own passkeys; src/http/pages/passkeys.ts, views/partials/second-factor-passkey.ejs).
          passkey:
            passkeyCount > 0
              ? passkeyButton(
                  s,
                  {
                    action: url(ar.id, '/second-factor-passkey'),
                    options: url(ar.id, '/second-factor-passkey-options'),
                  },
                  false,
                  t('mfa:secondFactor.usePasskey'),
                )
              : null,
          title: t('mfa:secondFactor.title'),
          email: step.user.email,
          action: url(ar.id, '/second-factor'),
          method,
          codeForm: totp,
          error: translateMessage(t, extra.error, extra.errorValues),
          otherMethods: !totp
            ? []
            : method === 'totp'
              ? [{ label: t('mfa:secondFactor.useRecoveryCode'), url: url(ar.id, '/second-factor/recovery_code') }]
              : [{ label: t('mfa:secondFactor.useAuthenticator'), url: url(ar.id, '/second-factor/totp') }],
          cancelUrl: url(ar.id, '/signin'),
        };
      },
    },
    totp_setup: {
      view: 'totp-setup',
      build: async ({ res, ar, step, extra }) => {
        const t = res.locals.t;
        const issuer = (await s.platforms.findPlatform(ar.platformId))?.name ?? 'Latchkey';
        const enrolment =
          (await s.mfa.totp.pendingEnrolment(step.user, issuer)) ??
          (await s.mfa.totp.beginEnrolment(step.user, issuer));
        if (!enrolment) throw new Error('totp_setup step for a user with a confirmed authenticator app');
        return {
          title: t('mfa:totpSetup.title'),
          intro: t('mfa:totpSetup.intro'),
          ...(await presentTotpSetup(enrolment)),
          action: url(ar.id, '/totp-setup'),
          error: translateMessage(t, extra.error, extra.errorValues),
          cancelUrl: url(ar.id, '/signin'),
        };
      },
    },
    consent: {
      view: 'consent',
      build: async ({ res, ar, step }) => ({
        title: res.locals.t('consent:title'),
        action: url(ar.id, '/consent'),
        clientName: ar.clientName,
        userEmail: step.user.email,
        ...presentConsentRequest(
          ar.scopes,
          res.locals.t,
          presentConsentResources(
            ar.resources ?? [],
            await Promise.all((ar.resources ?? []).map((r) => s.resources.findByUri(ar.platformId, r.uri))),
          ),
        ),
        // The app's logo and its homepage, privacy policy and terms, as it registered them.
        app: await s.authorize.clientBranding(ar.platformId, ar.clientId),
        ...presentSelfRegisteredClient(
          await s.authorize.selfRegisteredClient(ar.platformId, ar.clientId),
          ar.device ? '' : ar.redirectUri, // a device's interaction redirects nowhere: its "redirect" is our own page
        ),
        // RFC 8628: the code to compare with the device, the warning, Approve (views/consent.ejs).
        device: ar.device ? { userCode: ar.device.userCode } : null,
        // "Not you?": the chooser (nothing granted), to continue as another account.
        notYouUrl: url(ar.id, '/chooser'),
      }),
    },
  };

  /** Shows the step's page (a refused form: with its messages and status), or answers a final step. */
  async function show(
    req: Request,
    res: Response,
    ar: AuthorizationRequest,
    step: Step,
    extra: PageExtra = {},
    status = 200,
  ): Promise<void> {
    if (!isPageStep(step)) return answerStep(req, res, ar, step);
    allowFormRedirectTo(res, ar.redirectUri); // every form here may end at the client (CSP form-action)
    const page = builders[step.kind] as { view: string; build: Builder<PageStep['kind']> };
    const model = await page.build({ req, res, ar, step, extra });
    allowScriptsFor(res, model);
    renderPage(res, page.view, { restart: ar.restart, ...model }, status);
  }

  return { show, answerStep };
}

export type InteractionPages = ReturnType<typeof createInteractionPages>;
