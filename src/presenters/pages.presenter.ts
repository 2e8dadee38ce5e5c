import type { User } from '../domain/user';
import type { KnownAccount } from '../domain/interaction';
import { avatarUrl } from '../domain/claims';
import { translatorFor, type Translate } from '../i18n/catalogs';
import { DEFAULT_LOCALE } from '../domain/locales';
import type { Resource } from '../domain/resource';
import type { ResourceGrant } from '../domain/authorization-request';

/** The scopes the consent page explains (locales/<lng>/scopes.json: a title and a description each). */
const EXPLAINED_SCOPES = new Set(['openid', 'profile', 'email', 'phone', 'address', 'offline_access']);

/** Consent wording: what each scope releases, in plain words, in the page's language; another scope by its name. */
export const presentConsentScopes = (scopes: string[], t: Translate = translatorFor(DEFAULT_LOCALE)) =>
  scopes.map((name) =>
    EXPLAINED_SCOPES.has(name)
      ? { name, title: String(t(`scopes:${name}.title`)), description: String(t(`scopes:${name}.description`)) }
      : { name },
  );

/** Scopes that release claims about the user (OIDC Core 5.4). */
const CLAIM_SCOPES = new Set(['openid', 'profile', 'email', 'phone', 'address']);

/**
 * The consent page's list. With openid, what each scope releases; without (an OAuth request on a
 * standard platform: no ID token, no UserInfo) nothing about the user is released, so a claim
 * scope is listed by its name only (docs/decisions.md, "Agent-ready authorization").
 */
export function presentConsentRequest(
  scopes: string[],
  t: Translate = translatorFor(DEFAULT_LOCALE),
  resources: ConsentResource[] = [],
) {
  const releasesClaims = scopes.includes('openid');
  const ofResources = new Set(resources.flatMap((r) => r.scopes.map((s) => s.name)));
  const explained = presentConsentScopes(
    scopes.filter((s) => !ofResources.has(s)),
    t,
  );
  return {
    releasesClaims,
    scopes: releasesClaims ? explained : explained.map((s) => (CLAIM_SCOPES.has(s.name) ? { name: s.name } : s)),
    resources,
  };
}

/** A named RFC 8707 resource on the consent page: its name and the granted scopes with the descriptions it registered. */
export interface ConsentResource {
  name: string;
  scopes: { name: string; description: string }[];
}

/** The request's resources as consent shows them, in the order named; one no longer registered is left out (its code is refused at the token endpoint). */
export function presentConsentResources(
  grants: readonly ResourceGrant[],
  registered: readonly (Resource | undefined)[],
): ConsentResource[] {
  return grants.flatMap((g, i) => {
    const r = registered[i];
    return r
      ? [
          {
            name: r.name,
            scopes: r.scopes
              .filter((s) => g.scopes.includes(s.name))
              .map((s) => ({ name: s.name, description: s.description })),
          },
        ]
      : [];
  });
}

/** Chooser rows: signed-in accounts first, as the session lists them. */
export function presentChooserAccounts(accounts: KnownAccount[], users: User[], baseUrl: string) {
  return accounts
    .map((a) => {
      const user = users.find((u) => u.id === a.userId);
      if (!user) return undefined;
      return {
        id: a.userId,
        email: user.email,
        name: `${user.givenName} ${user.familyName}`.trim(),
        picture: user.pictureUrl ?? avatarUrl(baseUrl, user),
        signedIn: a.authTime !== null,
      };
    })
    .filter((a) => a !== undefined);
}
