/** Scope → claims (OIDC Core 5.4 and the spec's scope rules): pure rules on the domain's User. */
import type { User } from './user';

/** The provider-served avatar, until the user sets a picture. */
export const avatarUrl = (baseUrl: string, user: Pick<User, 'platformId' | 'id'>) =>
  `${baseUrl}/avatars/${user.platformId}/${user.id}.svg`;

const fullName = (u: User) => [u.givenName, u.middleName, u.familyName].filter(Boolean).join(' ');

type Claims = Record<string, unknown>;

const omitUnset = (claims: Claims): Claims =>
  Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== null && v !== undefined && v !== ''));

/**
 * Claims per scope (spec "Scopes and the claims they release"); unset claims are absent. With
 * `profile`, only middle_name and nickname may be unset (spec): every user has a
 * preferred_username from creation on (a default from the name).
 */
export function scopeClaims(user: User, scopes: readonly string[], baseUrl: string): Claims {
  const claims: Claims = { sub: user.id, human_guid: user.id };
  if (scopes.includes('profile')) {
    Object.assign(claims, {
      name: fullName(user),
      given_name: user.givenName,
      family_name: user.familyName,
      middle_name: user.middleName,
      nickname: user.nickname,
      preferred_username: user.preferredUsername,
      birthdate: user.birthdate,
      picture: user.pictureUrl ?? avatarUrl(baseUrl, user),
      updated_at: Math.floor(user.updatedAt.getTime() / 1000),
    });
  }
  if (scopes.includes('email')) Object.assign(claims, { email: user.email, email_verified: user.emailVerified });
  // The service does not verify phones; the spec has phone_number_verified always true.
  if (scopes.includes('phone') && user.phoneNumber)
    Object.assign(claims, { phone_number: user.phoneNumber, phone_number_verified: true });
  if (scopes.includes('address') && user.address && Object.keys(user.address).length) claims.address = user.address;
  return omitUnset(claims);
}

/** ID-token user claims: scope claims plus the always-present ones of scope rule 3. */
export function idTokenUserClaims(user: User, scopes: readonly string[], baseUrl: string): Claims {
  return {
    ...scopeClaims(user, scopes, baseUrl),
    name: fullName(user),
    given_name: user.givenName,
    family_name: user.familyName,
    email: user.email,
    picture: user.pictureUrl ?? avatarUrl(baseUrl, user),
  };
}
