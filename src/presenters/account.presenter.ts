import type { User } from '../domain/user';
import type { ProfileInput } from '../services/account/profile.service';
import { avatarUrl } from '../domain/claims';
import { presentConsentScopes } from './pages.presenter';
import { translatorFor, type Translate } from '../i18n/catalogs';
import { DEFAULT_LOCALE } from '../domain/locales';

/** The header of the account page. */
export const presentAccountUser = (user: User, baseUrl: string) => ({
  id: user.id,
  name: [user.givenName, user.middleName, user.familyName].filter(Boolean).join(' '),
  email: user.email,
  emailVerified: user.emailVerified,
  picture: user.pictureUrl ?? avatarUrl(baseUrl, user),
  hasOwnPicture: user.pictureUrl !== null,
});

/** The profile form filled from the stored claims. */
export function presentProfileValues(user: User): ProfileInput & { picture_url: string } {
  const a = user.address ?? {};
  const uploaded = user.pictureUrl?.includes(`/pictures/${user.platformId}/`) ?? false;
  return {
    given_name: user.givenName,
    middle_name: user.middleName ?? '',
    family_name: user.familyName,
    nickname: user.nickname ?? '',
    preferred_username: user.preferredUsername,
    phone_number: user.phoneNumber ?? '',
    street_address: a.street_address ?? '',
    locality: a.locality ?? '',
    region: a.region ?? '',
    postal_code: a.postal_code ?? '',
    country: a.country ?? '',
    picture_url: user.pictureUrl && !uploaded ? user.pictureUrl : '',
  };
}

/** Apps holding consent, with what they may see in plain words (in the page's language with `t`). */
export const presentApps = (
  apps: { clientId: string; name: string; scopes: string[] }[],
  t: Translate = translatorFor(DEFAULT_LOCALE),
) =>
  apps.map((a) => ({
    clientId: a.clientId,
    name: a.name,
    access:
      presentConsentScopes(
        a.scopes.filter((s) => s !== 'openid'),
        t,
      )
        .map((s) => s.title)
        .filter(Boolean)
        .join(' · ') || t('account:apps.knowsWhoYouAre'),
  }));

export const presentChooserRows = (users: User[], baseUrl: string) =>
  users.map((u) => ({
    id: u.id,
    email: u.email,
    name: `${u.givenName} ${u.familyName}`.trim(),
    picture: u.pictureUrl ?? avatarUrl(baseUrl, u),
  }));
