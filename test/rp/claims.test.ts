import * as client from 'openid-client';
import { jwtVerify } from 'jose';
import { codeFlow, setup, startProvider, type Provider, type Setup } from '../support/rp';

let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

const ADDRESS = {
  formatted: '12 St James Square\nLondon SW1Y 4JH\nGB',
  street_address: '12 St James Square',
  locality: 'London',
  region: 'London',
  postal_code: 'SW1Y 4JH',
  country: 'GB',
};
const PHONE = '+14155552671';

/** A user with every scope-gated claim set (address has no factory field: set in the store). */
async function setupFullUser(clientScopes?: string): Promise<Setup> {
  const s = await setup(p, 'client_secret_basic', { clientScopes, user: { phoneNumber: PHONE } });
  await p.t.database
    .db('users')
    .where({ id: s.user.id })
    .update({ address: JSON.stringify(ADDRESS) });
  return s;
}

const idTokenClaims = async (s: Setup, idToken: string) =>
  (
    await jwtVerify(idToken, new TextEncoder().encode(s.secret!), {
      algorithms: ['HS512'],
      issuer: p.base,
      audience: s.clientId,
    })
  ).payload;

const PROFILE = ['name', 'given_name', 'family_name', 'preferred_username', 'birthdate', 'picture', 'updated_at']; // middle_name, nickname unset
const EMAIL = ['email', 'email_verified'];
const PHONE_CLAIMS = ['phone_number', 'phone_number_verified'];
const sorted = (keys: string[]) => [...keys].sort();

it('scope=openid: userinfo is exactly sub and human_guid; the ID token still has the rule 3 claims', async () => {
  const s = await setupFullUser();
  const { tokens } = await codeFlow(p, s, 'openid');
  expect(tokens.scope).toBe('openid');

  const info = await client.fetchUserInfo(s.config, tokens.access_token, s.user.id);
  expect(info).toEqual({ sub: s.user.id, human_guid: s.user.id });

  const c = await idTokenClaims(s, tokens.id_token!);
  for (const k of ['sub', 'name', 'given_name', 'family_name', 'email', 'picture']) expect(c).toHaveProperty(k);
  for (const k of ['birthdate', 'phone_number', 'address']) expect(c).not.toHaveProperty(k);
});

it('all claim scopes: userinfo has exactly their claims; ID token has birthdate, phone_number and address', async () => {
  const s = await setupFullUser();
  const { tokens } = await codeFlow(p, s, 'openid profile email phone address');
  expect(tokens.scope).toBe('openid profile email phone address');

  const info = await client.fetchUserInfo(s.config, tokens.access_token, s.user.id);
  expect(sorted(Object.keys(info))).toEqual(
    sorted(['sub', 'human_guid', ...PROFILE, ...EMAIL, ...PHONE_CLAIMS, 'address']),
  );
  expect(info).toMatchObject({
    sub: s.user.id,
    human_guid: s.user.id,
    name: 'Ada Lovelace',
    given_name: 'Ada',
    family_name: 'Lovelace',
    preferred_username: 'ada.lovelace',
    birthdate: '1990-12-10',
    email: s.user.email,
    email_verified: false,
    phone_number: PHONE,
    phone_number_verified: true,
    address: ADDRESS,
  });
  expect(typeof info.updated_at).toBe('number');
  expect(info.picture).toMatch(/^https?:\/\//);

  const c = await idTokenClaims(s, tokens.id_token!);
  expect(c).toMatchObject({
    sub: s.user.id,
    birthdate: '1990-12-10',
    phone_number: PHONE,
    address: ADDRESS,
    email: s.user.email,
    name: 'Ada Lovelace',
  });
});

it('scope=openid profile: email stays in the ID token (rule 3) but not in userinfo; phone and address in neither', async () => {
  const s = await setupFullUser();
  const { tokens } = await codeFlow(p, s, 'openid profile');

  const info = await client.fetchUserInfo(s.config, tokens.access_token, s.user.id);
  expect(sorted(Object.keys(info))).toEqual(sorted(['sub', 'human_guid', ...PROFILE]));

  const c = await idTokenClaims(s, tokens.id_token!);
  expect(c).toMatchObject({ email: s.user.email, birthdate: '1990-12-10', preferred_username: 'ada.lovelace' });
  expect(c).not.toHaveProperty('phone_number');
  expect(c).not.toHaveProperty('address');
});

it('a scope the client is not configured for is dropped silently; the token response reports the narrowed set', async () => {
  const s = await setupFullUser('openid profile email');
  const { tokens } = await codeFlow(p, s, 'openid profile email phone address offline_access');

  expect(tokens.scope).toBe('openid profile email');
  expect(tokens.refresh_token).toBeUndefined();

  const info = await client.fetchUserInfo(s.config, tokens.access_token, s.user.id);
  expect(sorted(Object.keys(info))).toEqual(sorted(['sub', 'human_guid', ...PROFILE, ...EMAIL]));

  const c = await idTokenClaims(s, tokens.id_token!);
  expect(c).toHaveProperty('birthdate');
  expect(c).not.toHaveProperty('phone_number');
  expect(c).not.toHaveProperty('address');
});

it('a user without a phone number: the phone scope is granted but releases nothing', async () => {
  const s = await setup(p, 'client_secret_post');
  const { tokens } = await codeFlow(p, s, 'openid phone');
  expect(tokens.scope).toBe('openid phone');
  const info = await client.fetchUserInfo(s.config, tokens.access_token, s.user.id);
  expect(info).toEqual({ sub: s.user.id, human_guid: s.user.id });
});

it('userinfo answers a forged access token with a Bearer invalid_token challenge', async () => {
  const s = await setup(p, 'none');
  const { tokens } = await codeFlow(p, s, 'openid email');
  const [h, pl] = tokens.access_token.split('.');
  const err = await client.fetchUserInfo(s.config, `${h}.${pl}.AAAA`, s.user.id).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(client.WWWAuthenticateChallengeError);
  expect(err).toMatchObject({
    status: 401,
    cause: [
      expect.objectContaining({ scheme: 'bearer', parameters: expect.objectContaining({ error: 'invalid_token' }) }),
    ],
  });
});

it('an unknown scope is dropped silently as well', async () => {
  const s = await setup(p, 'client_secret_basic');
  const { tokens } = await codeFlow(p, s, 'openid email frobnicate');
  expect(tokens.scope).toBe('openid email');
  expect(await client.fetchUserInfo(s.config, tokens.access_token, s.user.id)).toEqual({
    sub: s.user.id,
    human_guid: s.user.id,
    email: s.user.email,
    email_verified: false,
  });
});

it('the picture URL in the ID token is served by the provider at its own address', async () => {
  const s = await setup(p, 'client_secret_basic');
  const { tokens } = await codeFlow(p, s, 'openid');
  const picture = String(tokens.claims()!.picture);
  expect(picture.startsWith(`${p.base}/`)).toBe(true);
  const res = await fetch(picture);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^image\//);
});
