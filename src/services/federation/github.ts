import * as oc from 'openid-client';
import type { UpstreamProvider } from '../../domain/upstream';
import type { OutboundFetch } from '../../net/outbound-fetch';
import { UpstreamUnavailable } from './upstream-http';

/**
 * GitHub: OAuth 2.0 (no ID token) at `{issuer}/login/oauth/…`, the person read from its REST API
 * (`GET /user`, `GET /user/emails`). The same shape serves GitHub Enterprise Server
 * (issuer https://HOST, API https://HOST/api/v3).
 */

/** openid-client's code grant over manual metadata; GitHub documents client_id/client_secret in the form body. */
export function githubConfiguration(provider: UpstreamProvider, clientSecret: string | null): oc.Configuration {
  const server: oc.ServerMetadata = {
    issuer: provider.issuer,
    authorization_endpoint: `${provider.issuer}/login/oauth/authorize`,
    token_endpoint: `${provider.issuer}/login/oauth/access_token`,
  };
  return new oc.Configuration(server, provider.clientId, undefined, oc.ClientSecretPost(clientSecret ?? ''));
}

interface GitHubUser {
  id?: unknown;
  login?: unknown;
  name?: unknown;
  avatar_url?: unknown;
}
interface GitHubEmail {
  email?: unknown;
  primary?: unknown;
  verified?: unknown;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

/** "Ada King Lovelace" → Ada / King Lovelace; one word → given name only. Best effort: the sign-up page lets the person correct it. */
function splitName(name: string | null): { givenName: string | null; familyName: string | null } {
  if (!name) return { givenName: null, familyName: null };
  const [first, ...rest] = name.split(/\s+/);
  return { givenName: first, familyName: rest.length ? rest.join(' ') : null };
}

/** The claims GitHub's API gives, under OIDC names (and GitHub's own fields, for claim_mapping). */
export async function githubClaims(
  outbound: OutboundFetch,
  apiBaseUrl: string,
  accessToken: string,
): Promise<Record<string, unknown>> {
  const headers = {
    authorization: `Bearer ${accessToken}`,
    accept: 'application/vnd.github+json',
    'x-github-api-version': '2022-11-28',
    'user-agent': 'Latchkey',
  };
  const get = async (path: string, optional = false): Promise<unknown> => {
    const res = await outbound(`${apiBaseUrl}${path}`, { headers });
    if (res.status >= 500) throw new UpstreamUnavailable(new URL(apiBaseUrl).host, res.status);
    // /user/emails needs the user:email scope: without it, no verified email rather than no sign-in.
    if (optional && (res.status === 403 || res.status === 404)) return [];
    if (res.status !== 200) throw new Error(`GitHub API ${path} answered ${res.status}`);
    return JSON.parse(res.body) as unknown;
  };
  const [user, emailList] = await Promise.all([get('/user') as Promise<GitHubUser>, get('/user/emails', true)]);
  if (!user || typeof user !== 'object') throw new Error('GitHub API /user: not an object');
  const emails = (Array.isArray(emailList) ? emailList : []) as GitHubEmail[];
  const verified = emails.filter((e) => e && e.verified === true && str(e.email));
  const chosen = verified.find((e) => e.primary === true) ?? verified[0];
  const name = str(user.name);
  const { givenName, familyName } = splitName(name);
  const id = typeof user.id === 'number' || typeof user.id === 'string' ? String(user.id) : null;
  return {
    ...user,
    sub: id,
    email: chosen ? str(chosen.email) : null,
    email_verified: !!chosen,
    name,
    given_name: givenName,
    family_name: familyName,
    picture: str(user.avatar_url),
  };
}
