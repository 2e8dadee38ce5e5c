import * as client from 'openid-client';
import { codeFlow, decodeJwt, discover, setup, startProvider, type Provider, type Setup } from '../support/rp';

let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

const INTROSPECTION_FIELDS = ['active', 'sub', 'human_guid', 'client_id', 'scope', 'token_type', 'exp', 'iat'].sort();

/** The spec's active introspection object, exactly. */
function expectActive(res: Record<string, unknown>, s: Setup, scope: string) {
  expect(Object.keys(res).sort()).toEqual(INTROSPECTION_FIELDS);
  expect(res).toEqual({
    active: true,
    sub: s.user.id,
    human_guid: s.user.id,
    client_id: s.clientId,
    scope,
    token_type: 'Bearer',
    exp: expect.any(Number),
    iat: expect.any(Number),
  });
  expect(Number.isInteger(res.exp) && Number.isInteger(res.iat)).toBe(true);
  expect(res.exp as number).toBeGreaterThan(res.iat as number);
}

const expectInactive = (res: Record<string, unknown>) => expect(res).toEqual({ active: false });

async function expectUserinfoDead(s: Setup, accessToken: string) {
  const err = await client.fetchUserInfo(s.config, accessToken, s.user.id).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(client.WWWAuthenticateChallengeError);
  expect(err).toMatchObject({
    status: 401,
    cause: [expect.objectContaining({ parameters: expect.objectContaining({ error: 'invalid_token' }) })],
  });
}

const SCOPE = 'openid profile email offline_access';

describe.each(['client_secret_basic', 'none'] as const)('refresh (%s)', (method) => {
  it('refreshTokenGrant returns a working access token and rotates the refresh token', async () => {
    const s = await setup(p, method);
    const { tokens } = await codeFlow(p, s, SCOPE);
    expect(tokens.scope).toBe(SCOPE);
    expect(tokens.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43,}$/);

    const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toMatch(/^rt_/);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.scope).toBe(SCOPE);
    expect(refreshed.expires_in).toBe(p.t.config.accessTokenTtlSeconds);

    const info = await client.fetchUserInfo(s.config, refreshed.access_token, s.user.id);
    expect(info).toMatchObject({ sub: s.user.id, human_guid: s.user.id, email: s.user.email });

    // A refreshed ID token keeps iss, sub, aud and auth_time (OIDC Core 12.2); openid-client already checked it.
    expect(typeof refreshed.id_token).toBe('string');
    const before = tokens.claims()!;
    const after = refreshed.claims()!;
    expect({ iss: after.iss, sub: after.sub, aud: after.aud, auth_time: after.auth_time }).toEqual({
      iss: before.iss,
      sub: before.sub,
      aud: before.aud,
      auth_time: before.auth_time,
    });

    // The new refresh token rotates again.
    const again = await client.refreshTokenGrant(s.config, refreshed.refresh_token!);
    expect(again.refresh_token).toMatch(/^rt_/);
    expect(new Set([tokens.refresh_token, refreshed.refresh_token, again.refresh_token]).size).toBe(3);
  });
});

describe('introspection (confidential clients)', () => {
  it('returns exactly the spec fields for an access token, matching the JWT', async () => {
    const s = await setup(p, 'client_secret_basic');
    const { tokens } = await codeFlow(p, s, SCOPE);
    const res = await client.tokenIntrospection(s.config, tokens.access_token);
    expectActive(res, s, SCOPE);
    const jwt = decodeJwt(tokens.access_token).payload;
    expect(res.exp).toBe(jwt.exp);
    expect(res.iat).toBe(jwt.iat);
  });

  it('returns exactly the spec fields for a refresh token', async () => {
    const s = await setup(p, 'client_secret_basic');
    const { tokens } = await codeFlow(p, s, SCOPE);
    expectActive(await client.tokenIntrospection(s.config, tokens.refresh_token!), s, SCOPE);
  });

  it('works with client_secret_post (advertised introspection auth method)', async () => {
    const s = await setup(p, 'client_secret_post');
    const { tokens } = await codeFlow(p, s, 'openid email');
    expectActive(await client.tokenIntrospection(s.config, tokens.access_token), s, 'openid email');
  });

  it('a rotated refresh token is no longer active; its successor is', async () => {
    const s = await setup(p, 'client_secret_basic');
    const { tokens } = await codeFlow(p, s, SCOPE);
    const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    expectInactive(await client.tokenIntrospection(s.config, tokens.refresh_token!));
    expectActive(await client.tokenIntrospection(s.config, refreshed.refresh_token!), s, SCOPE);
  });

  it('an unknown token is {active:false} alone', async () => {
    const s = await setup(p, 'client_secret_basic');
    expectInactive(await client.tokenIntrospection(s.config, 'rt_not-a-token'));
    expectInactive(await client.tokenIntrospection(s.config, 'not.a.jwt'));
  });
});

describe('revocation', () => {
  it('revoking an access token: introspection {active:false} alone, userinfo 401', async () => {
    const s = await setup(p, 'client_secret_basic');
    const { tokens } = await codeFlow(p, s, SCOPE);
    expectActive(await client.tokenIntrospection(s.config, tokens.access_token), s, SCOPE);

    await expect(client.tokenRevocation(s.config, tokens.access_token)).resolves.toBeUndefined();

    expectInactive(await client.tokenIntrospection(s.config, tokens.access_token));
    await expectUserinfoDead(s, tokens.access_token);
    // The refresh token is a separate credential and survives.
    expectActive(await client.tokenIntrospection(s.config, tokens.refresh_token!), s, SCOPE);
  });

  it('revoking the refresh token kills its family: every access token it produced, and the refresh grant', async () => {
    const s = await setup(p, 'client_secret_basic');
    const { tokens } = await codeFlow(p, s, SCOPE);
    const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    for (const at of [tokens.access_token, refreshed.access_token])
      expectActive(await client.tokenIntrospection(s.config, at), s, SCOPE);

    await client.tokenRevocation(s.config, refreshed.refresh_token!);

    expectInactive(await client.tokenIntrospection(s.config, refreshed.refresh_token!));
    for (const at of [tokens.access_token, refreshed.access_token]) {
      expectInactive(await client.tokenIntrospection(s.config, at));
      await expectUserinfoDead(s, at);
    }
    await expect(client.refreshTokenGrant(s.config, refreshed.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
      status: 400,
    });
  });

  it('a public client revokes its refresh token without credentials (client_id only)', async () => {
    const s = await setup(p, 'none');
    const { tokens } = await codeFlow(p, s, SCOPE);
    await expect(client.tokenRevocation(s.config, tokens.refresh_token!)).resolves.toBeUndefined();
    await expectUserinfoDead(s, tokens.access_token);
    await expect(client.refreshTokenGrant(s.config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('an unknown or already revoked token still answers 200 (openid-client resolves)', async () => {
    const s = await setup(p, 'client_secret_post');
    const { tokens } = await codeFlow(p, s, SCOPE);
    await expect(client.tokenRevocation(s.config, 'rt_unknown')).resolves.toBeUndefined();
    await client.tokenRevocation(s.config, tokens.refresh_token!);
    await expect(client.tokenRevocation(s.config, tokens.refresh_token!)).resolves.toBeUndefined();
  });

  it("another client of the platform cannot revoke this client's refresh token", async () => {
    const s = await setup(p, 'client_secret_basic');
    const { tokens } = await codeFlow(p, s, SCOPE);
    const other = await p.t.services.platforms.createClient(s.platformId, {
      name: 'Other',
      type: 'confidential',
      redirectUris: ['https://other.example/cb'],
      scopes: 'openid',
    });
    const otherConfig = await discover(p.base, s.platformId, other.client.id, 'client_secret_basic', other.secret);
    await expect(client.tokenRevocation(otherConfig, tokens.refresh_token!)).resolves.toBeUndefined();
    expectActive(await client.tokenIntrospection(s.config, tokens.refresh_token!), s, SCOPE);
  });
});
