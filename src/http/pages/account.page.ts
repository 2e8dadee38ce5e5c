import type { Request, Response } from 'express';
import type { Services } from '../../services';
import type { HttpDeps } from '../http-deps';
import type { User } from '../../domain/user';
import { ruleValues, type FieldError } from '../../services/user-rules';
import type { Translate } from '../../i18n/catalogs';
import { COUNTRY_OPTIONS } from '../../services/account/countries';
import { presentAccountUser, presentApps, presentProfileValues } from '../../presenters/account.presenter';
import { signedInAccounts, takeFlash } from '../session/account-session';
import { passkeySection } from './passkeys';
import { ACCOUNT_SECTIONS, accountSectionUrl, accountUrl, isAccountSection, type AccountSection } from '../urls';
import { renderPage } from './render';

export { ACCOUNT_SECTIONS, accountSectionUrl, isAccountSection, type AccountSection } from '../urls';

export interface AccountFormState {
  values?: Record<string, string>;
  fieldErrors?: Record<string, string>;
  /** A catalog key (or text) for the alert above the form. */
  formError?: string;
  /** The tab the form that came back is on (default: the request's `section`, else profile). */
  section?: AccountSection;
}

/** Translates a service's message key ('account:errors.pictureType'); text that is not a key passes through unchanged. */
export const translated = (t: Translate, message: string) => t(message);

/** Countries by their name in the page's language (Intl.DisplayNames), sorted for that language. */
function countryOptions(locale: string) {
  let names: Intl.DisplayNames | undefined;
  try {
    names = new Intl.DisplayNames([locale], { type: 'region' });
  } catch {
    names = undefined; // an ICU without the data: the English names
  }
  return COUNTRY_OPTIONS.map((c) => ({ code: c.code, name: names?.of(c.code) ?? c.name })).sort((a, b) =>
    a.name.localeCompare(b.name, locale),
  );
}

/** Renders the account page; forms that come back with errors pass their values and messages. */
export function accountPageRenderer(s: Services, deps: HttpDeps) {
  const { baseUrl } = deps.config;
  const platformOf = (res: Response) => res.locals.platform;
  return async function renderAccount(
    req: Request,
    res: Response,
    user: User,
    extra: AccountFormState = {},
    status = 200,
  ) {
    const p = platformOf(res);
    const t: Translate = res.locals.t;
    const locale: string = res.locals.locale ?? 'en';
    const section: AccountSection =
      extra.section ?? (isAccountSection(req.query.section) ? req.query.section : 'profile');
    const day = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
    const apps = await s.account.security.listApps(user.id);
    const [mfaPolicy, factors] = await Promise.all([s.mfa.policyOf(p.id), s.mfa.factorsOf(user.id)]);
    // Linked upstream accounts, and "Set a password" for an account created without one.
    const [identities, hasPassword, providers] = await Promise.all([
      s.federation.identities.list(p.id, user.id),
      s.federation.identities.hasPassword(p.id, user.id),
      s.federation.providers.enabledFor(p.id),
    ]);
    renderPage(
      res,
      'account',
      {
        title: t('account:title'),
        section,
        tabs: ACCOUNT_SECTIONS.map((id) => ({
          id,
          label: t(`account:tabs.${id}`),
          href: accountSectionUrl(p.id, id),
          current: id === section,
        })),
        user: presentAccountUser(user, baseUrl),
        values: { ...presentProfileValues(user), ...(extra.values ?? {}) },
        fieldErrors: Object.fromEntries(
          Object.entries(extra.fieldErrors ?? {}).map(([k, m]) => [k, t(m, ruleValues(deps.config.passwordMinLength))]),
        ), // the rules' keys name {{min}} and friends (user-rules.ts)
        formError: extra.formError ? translated(t, extra.formError) : null,
        flash: takeFlash(req, p.id),
        apps: presentApps(apps, t),
        countries: countryOptions(locale),
        passwordMinLength: deps.config.passwordMinLength,
        passkeys: section === 'security' ? await passkeySection(s, res, p.id, user.id, t, locale) : null, // ../interaction/passkeys.router.ts
        // Two-step verification (../account/account-mfa.router.ts); hidden when the platform turned it off and the user has none.
        mfa: {
          policy: mfaPolicy,
          totp: factors.totp,
          recoveryCodesLeft: factors.recoveryCodesLeft,
          show: mfaPolicy !== 'off' || factors.totp,
        },
        hasPassword,
        linked: {
          available: providers.length > 0,
          rows: identities.map((i) => ({
            ...i,
            linkedOn: day.format(i.createdAt),
            unlinkAction: accountUrl(p.id, `/identities/${encodeURIComponent(i.id)}/unlink`),
          })),
        },
        switchUrl: signedInAccounts(req, p.id).length > 1 ? accountUrl(p.id, '/choose') : accountUrl(p.id, '/signin'),
        actions: {
          verify: accountUrl(p.id, '/verify-email'),
          profile: accountUrl(p.id, '/profile'),
          pictureUpload: accountUrl(p.id, '/picture'),
          pictureUrl: accountUrl(p.id, '/picture-url'),
          pictureRemove: accountUrl(p.id, '/picture/remove'),
          password: accountUrl(p.id, '/password'),
          setPassword: accountUrl(p.id, '/password/set'),
          revokeApp: accountUrl(p.id, '/apps/revoke'),
          signout: accountUrl(p.id, '/signout'),
          signoutEverywhere: accountUrl(p.id, '/signout-everywhere'),
          totpSetup: accountUrl(p.id, '/totp/setup'),
          totpRemove: `${accountUrl(p.id, '/totp/remove')}&account=${encodeURIComponent(user.id)}`,
          recoveryCodes: `${accountUrl(p.id, '/recovery-codes')}&account=${encodeURIComponent(user.id)}`,
        },
      },
      status,
    );
  };
}

export const errorsByField = (errors: FieldError[]) => Object.fromEntries(errors.map((e) => [e.field, e.message]));
