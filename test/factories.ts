import { randomBytes } from 'node:crypto';
import type { Services } from '../src/services';
import type { NewClientInput } from '../src/services/platforms.service';

const unique = () => randomBytes(5).toString('hex');

export async function buildPlatform(s: Services, name = `Platform ${unique()}`) {
  return (await s.platforms.createPlatform(name)).platform;
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

export async function buildUser(s: Services, platformId: string, input: Partial<Parameters<Services['users']['createUser']>[1]> = {}) {
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
