import * as client from 'openid-client';
import { codeFlow, discover, REDIRECT_URI, setup, signInAndConsent, startProvider, type Provider } from '../support/rp';

let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

const SCOPE = 'openid profile email offline_access';

it('a replayed authorization code is invalid_grant and revokes what the first exchange issued', async () => {
  const s = await setup(p, 'client_secret_basic');
  const { tokens, redirect, state, nonce, verifier } = await codeFlow(p, s, SCOPE);
  await expect(
    client.authorizationCodeGrant(s.config, redirect, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    }),
  ).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
  expect(await client.tokenIntrospection(s.config, tokens.access_token)).toEqual({ active: false });
  expect(await client.tokenIntrospection(s.config, tokens.refresh_token!)).toEqual({ active: false });
});

it('max_age: openid-client requires and accepts auth_time', async () => {
  const s = await setup(p, 'client_secret_post');
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(s.config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: 'st',
    max_age: '300',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const redirect = await signInAndConsent(p, url, s.user.email);
  const tokens = await client.authorizationCodeGrant(s.config, redirect, {
    pkceCodeVerifier: verifier,
    expectedState: 'st',
    maxAge: 300,
  });
  expect(typeof tokens.claims()!.auth_time).toBe('number');
});

it('a confidential client may skip PKCE (optional for confidential clients)', async () => {
  const s = await setup(p, 'client_secret_basic');
  const url = client.buildAuthorizationUrl(s.config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: 'st2',
    nonce: 'n2',
  });
  const redirect = await signInAndConsent(p, url, s.user.email);
  const tokens = await client.authorizationCodeGrant(s.config, redirect, { expectedState: 'st2', expectedNonce: 'n2' });
  expect(tokens.claims()!.nonce).toBe('n2');
});

it('a public client is refused at introspection (invalid_client)', async () => {
  const s = await setup(p, 'none');
  const { tokens } = await codeFlow(p, s, 'openid');
  await expect(client.tokenIntrospection(s.config, tokens.access_token)).rejects.toMatchObject({
    error: 'invalid_client',
    status: 401,
  });
});

it('a wrong client secret is invalid_client at the token endpoint (Basic: with a challenge)', async () => {
  const s = await setup(p, 'client_secret_basic');
  const wrong = await discover(p.base, s.platformId, s.clientId, 'client_secret_basic', 'x'.repeat(86));
  const { tokens } = await codeFlow(p, s, SCOPE);
  const err = await client.refreshTokenGrant(wrong, tokens.refresh_token!).catch((e: unknown) => e);
  // A 401 with WWW-Authenticate surfaces as a challenge error in openid-client.
  expect(err).toMatchObject({ status: 401 });
  expect(JSON.stringify((err as { cause: unknown }).cause)).toMatch(/basic/i);
});

it('a refresh token is bound to its client: another client gets invalid_grant', async () => {
  const s = await setup(p, 'client_secret_basic');
  const { tokens } = await codeFlow(p, s, SCOPE);
  const other = await p.t.services.platforms.createClient(s.platformId, {
    name: 'Other',
    type: 'confidential',
    redirectUris: ['https://other.example/cb'],
    scopes: SCOPE,
  });
  const otherConfig = await discover(p.base, s.platformId, other.client.id, 'client_secret_basic', other.secret);
  await expect(client.refreshTokenGrant(otherConfig, tokens.refresh_token!)).rejects.toMatchObject({
    error: 'invalid_grant',
    status: 400,
  });
  // Still usable by its own client.
  await expect(client.refreshTokenGrant(s.config, tokens.refresh_token!)).resolves.toMatchObject({
    refresh_token: expect.stringMatching(/^rt_/),
  });
});

it('a refresh may narrow the scope; the new access token releases only the narrowed claims', async () => {
  const s = await setup(p, 'client_secret_basic');
  const { tokens } = await codeFlow(p, s, SCOPE);
  const narrowed = await client.refreshTokenGrant(s.config, tokens.refresh_token!, {
    scope: 'openid email offline_access',
  });
  expect(narrowed.scope).toBe('openid email offline_access');
  const info = await client.fetchUserInfo(s.config, narrowed.access_token, s.user.id);
  expect(Object.keys(info).sort()).toEqual(['email', 'email_verified', 'human_guid', 'sub']);
});

it('within the reuse grace window, refreshing twice with one token yields the same refresh token and two valid access tokens (several tabs)', async () => {
  const s = await setup(p, 'client_secret_basic');
  const { tokens } = await codeFlow(p, s, SCOPE);
  const [a, b] = await Promise.all([
    client.refreshTokenGrant(s.config, tokens.refresh_token!),
    client.refreshTokenGrant(s.config, tokens.refresh_token!),
  ]);
  expect(a.refresh_token).toBe(b.refresh_token);
  expect(a.access_token).not.toBe(b.access_token);
  for (const t of [a, b])
    expect(await client.fetchUserInfo(s.config, t.access_token, s.user.id)).toMatchObject({ sub: s.user.id });
  await expect(client.refreshTokenGrant(s.config, a.refresh_token!)).resolves.toMatchObject({
    refresh_token: expect.stringMatching(/^rt_/),
  });
});
