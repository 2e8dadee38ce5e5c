import { randomBytes } from 'node:crypto';
import type { Services } from '../src/services';
import type { NewClientInput } from '../src/services/platforms.service';

const unique = () => randomBytes(5).toString('hex');

export async function buildPlatform(s: Services, name = `Platform ${unique()}`) {
  return (await s.platforms.createPlatform(name)).platform;
}

/** A platform with the standard signing profile (asymmetric keys; resources, path endpoints). */
export async function buildStandardPlatform(s: Services, name = `Platform ${unique()}`) {
  return (await s.platforms.createPlatform(name, undefined, 'standard')).platform;
}

export async function buildClient(s: Services, platformId: string, input: Partial<NewClientInput> = {}) {
  const { client, secret } = await s.platforms.createClient(platformId, {
    name: 'Test app',
    type: 'confidential',
    redirectUris: ['https://app.example/callback'],
    scopes: 'openid profile email phone address offline_access',
    ...input,
  });
  return { ...client, secret };
}

export const TEST_PASSWORD = 'correct horse battery staple';

export async function buildUser(
  s: Services,
  platformId: string,
  input: Partial<Parameters<Services['users']['createUser']>[1]> = {},
) {
  const result = await s.users.createUser(platformId, {
    email: `user-${unique()}@example.com`,
    password: TEST_PASSWORD,
    givenName: 'Ada',
    familyName: 'Lovelace',
    birthdate: '1990-12-10',
    ...input,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.user;
}

/** A code issued as a completed authorization would issue it (through the real service). */
export async function buildCode(
  s: Services,
  input: {
    platformId: string;
    client: { id: string; name: string; redirectUris: string[] };
    user: { id: string };
    scopes?: string[];
    nonce?: string;
    codeChallenge?: string;
    authTime?: number;
    /** RFC 8707 resources the request named (standard platforms), each with the scopes granted for it. */
    resources?: { uri: string; scopes: string[] }[];
  },
) {
  const user = (await s.users.findById(input.platformId, input.user.id))!;
  const ar = {
    id: 'test',
    platformId: input.platformId,
    clientId: input.client.id,
    clientName: input.client.name,
    redirectUri: input.client.redirectUris[0],
    scopes: input.scopes ?? ['openid', 'profile', 'email', 'offline_access'],
    nonce: input.nonce,
    codeChallenge: input.codeChallenge,
    resources: input.resources,
    prompts: [],
    prefill: {},
    createdAt: 0,
  };
  return s.authorize.issueCode(ar, user, input.authTime ?? Math.floor(Date.now() / 1000), 'test-browser');
}
