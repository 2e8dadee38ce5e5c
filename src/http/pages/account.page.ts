import type { Request, Response } from 'express';
import type { Services } from '../../services';
import type { User } from '../../domain/user';
import type { FieldError } from '../../services/user-rules';
import { COUNTRY_OPTIONS } from '../../services/account/countries';
import { presentAccountUser, presentApps, presentProfileValues } from '../../presenters/account.presenter';
import { signedInAccounts, takeFlash } from '../account-session';
import { PASSKEYS_NEED_HOST_NAME, passkeySection } from '../passkeys-page';
import { accountUrl } from '../urls';
import { renderPage } from './render';

export interface AccountFormState {
  values?: Record<string, string>;
  fieldErrors?: Record<string, string>;
  formError?: string;
}

/** Renders the account page; forms that come back with errors pass their values and messages. */
export function accountPageRenderer(s: Services) {
  const { baseUrl } = s.deps.config;
  const platformOf = (res: Response) => res.locals.platform;
  return async function renderAccount(req: Request, res: Response, user: User, extra: AccountFormState = {}, status = 200) {
    const p = platformOf(res);
    const apps = await s.account.security.listApps(user.id);
    const [mfaPolicy, factors] = await Promise.all([s.mfa.policyOf(p.id), s.mfa.factorsOf(user.id)]);
    // DESIGN §17: linked upstream accounts, and "Set a password" for an account created without one.
    const [identities, hasPassword, providers] = await Promise.all([s.federation.identities.list(p.id, user.id), s.federation.identities.hasPassword(p.id, user.id), s.federation.providers.enabledFor(p.id)]);
    renderPage(res, 'account', {
      title: 'Your account',
      user: presentAccountUser(user, baseUrl),
      values: { ...presentProfileValues(user), ...(extra.values ?? {}) },
      fieldErrors: extra.fieldErrors ?? {},
      formError: extra.formError ?? null,
      flash: takeFlash(req, p.id),
      apps: presentApps(apps),
      countries: COUNTRY_OPTIONS,
      passwordMinLength: s.deps.config.passwordMinLength,
      passkeys: await passkeySection(s, res, p.id, user.id), // ../routers/passkeys.router.ts
      passkeysNeedHostName: PASSKEYS_NEED_HOST_NAME,
      // Two-step verification (../routers/account-mfa.router.ts); hidden when the platform turned it off and the user has none.
      mfa: { policy: mfaPolicy, totp: factors.totp, recoveryCodesLeft: factors.recoveryCodesLeft, show: mfaPolicy !== 'off' || factors.totp },
      hasPassword,
      linked: {
        available: providers.length > 0,
        rows: identities.map((i) => ({ ...i, linkedOn: i.createdAt.toISOString().slice(0, 10), unlinkAction: accountUrl(p.id, `/identities/${encodeURIComponent(i.id)}/unlink`) })),
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
    }, status);
  };
}

export const errorsByField = (errors: FieldError[]) => Object.fromEntries(errors.map((e) => [e.field, e.message]));
