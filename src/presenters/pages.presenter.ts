import type { User } from '../domain/user';
import type { KnownAccount } from '../domain/interaction';
import { avatarUrl } from '../domain/claims';

// Consent wording: what each scope releases, in plain words.
const SCOPE_TEXT: Record<string, { title: string; description: string }> = {
  openid: { title: 'Know who you are', description: 'A unique identifier for your account' },
  profile: { title: 'Your profile', description: 'Your name, nickname, username, date of birth and profile picture' },
  email: { title: 'Your email address', description: 'Your email address and whether it has been verified' },
  phone: { title: 'Your phone number', description: 'The phone number on your account, if you added one' },
  address: { title: 'Your address', description: 'The postal address on your account, if you added one' },
  offline_access: { title: 'Stay connected', description: 'Keep access to this information when you are not using the app' },
};

export const presentConsentScopes = (scopes: string[]) => scopes.map((name) => ({ name, ...SCOPE_TEXT[name] }));

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
