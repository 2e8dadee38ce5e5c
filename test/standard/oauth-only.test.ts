import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser, type Browser } from '../support/browser';
import { basic, jwtPayload } from '../support/account-flows';

// docs/decisions.md, "Agent-ready authorization": on a standard platform an authorization request
// may omit `scope` (the client's registered scopes) or leave out openid (an OAuth request: an
// access token, no ID token, no UserInfo, no claims on consent). A seed platform keeps the spec's
// rules: scope required, openid required.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const CALLBACK = 'https://app.example/callback';

async function standardSetup(clientScopes?: string) {
  const platform = (
    await t.services.platforms.createPlatform(`OAuth ${randomBytes(4).toString('hex')}`, undefined, 'standard')
  ).platform;
  const client = await buildClient(t.services, platform.id, clientScopes ? { scopes: clientScopes } : {});
  const user = await buildUser(t.services, platform.id);
  return { platform, client, user, issuerPath: `/platforms/${platform.id}` };
}

type Setup = Awaited<ReturnType<typeof standardSetup>>;
const authorizePath = (s: Setup, params: Record<string, string | undefined>) => {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: s.client.id,
    redirect_uri: CALLBACK,
    state: 'st',
  });
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
  return `${s.issuerPath}/oauth/authorize?${query}`;
};

/** Authorize, sign in; the consent page's HTML (when shown) and the callback after allowing. */
async function authorizeAndAllow(s: Setup, params: Record<string, string | undefined>, b: Browser = browser(t.app)) {
  let step = await b.get(authorizePath(s, params));
  if (!step.location && b.pageTitle() === 'Sign in')
    step = await b.submit('/signin', { email: s.user.email, password: TEST_PASSWORD });
  const consent = step.location ? undefined : b.html;
  if (!step.location) step = await b.submit('/consent', { decision: 'allow' });
  if (!step.location) throw new Error(`no callback:\n${b.html.slice(0, 2000)}`);
  return { b, consent, callback: new URL(step.location) };
}

const exchange = (s: Setup, callback: URL) =>
  request(t.app)
    .post(`${s.issuerPath}/oauth/token`)
    .set('Authorization', basic(s.client))
    .type('form')
    .send({ grant_type: 'authorization_code', code: callback.searchParams.get('code'), redirect_uri: CALLBACK });

describe('standard platform: an OAuth request without openid', () => {
  it('gets an access token and a refresh token but no ID token, on the code exchange and on refresh', async () => {
    const s = await standardSetup();
    const { callback } = await authorizeAndAllow(s, { scope: 'email offline_access' });
    const tokens = (await exchange(s, callback).expect(200)).body;
    expect(tokens).toMatchObject({
      token_type: 'Bearer',
      scope: 'email offline_access',
      refresh_token: expect.any(String),
    });
    expect(tokens.id_token).toBeUndefined();
    expect(jwtPayload(tokens.access_token)).toMatchObject({
      sub: s.user.id,
      client_id: s.client.id,
      scope: 'email offline_access',
    });

    const refreshed = await request(t.app)
      .post(`${s.issuerPath}/oauth/token`)
      .set('Authorization', basic(s.client))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
      .expect(200);
    expect(refreshed.body.id_token).toBeUndefined();
  });

  it('without offline_access: no refresh token either', async () => {
    const s = await standardSetup();
    const { callback } = await authorizeAndAllow(s, { scope: 'profile' });
    const tokens = (await exchange(s, callback).expect(200)).body;
    expect(Object.keys(tokens).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
  });

  it('UserInfo refuses its access token: 403 insufficient_scope with the RFC 6750 challenge (GET and POST)', async () => {
    const s = await standardSetup();
    const { callback } = await authorizeAndAllow(s, { scope: 'email' });
    const { access_token: accessToken } = (await exchange(s, callback).expect(200)).body;
    for (const res of [
      await request(t.app).get(`${s.issuerPath}/oauth/userinfo`).set('Authorization', `Bearer ${accessToken}`),
      await request(t.app)
        .post(`/oauth/userinfo?platform_guid=${s.platform.id}`)
        .set('Authorization', `Bearer ${accessToken}`)
        .type('form')
        .send({}),
      await request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${accessToken}`), // platform found by the token's key
    ]) {
      expectOAuthError(res, 403, 'insufficient_scope');
      expect(res.headers['www-authenticate']).toMatch(
        /^Bearer error="insufficient_scope", error_description="[^"]+", scope="openid"$/,
      );
    }
    // Introspection still reports it: the token is good, only not for UserInfo.
    const active = await request(t.app)
      .post(`${s.issuerPath}/oauth/introspect`)
      .set('Authorization', basic(s.client))
      .type('form')
      .send({ token: accessToken })
      .expect(200);
    expect(active.body).toMatchObject({ active: true, scope: 'email' });
  });

  it('the consent page lists the scopes as permissions, without the claims they would release', async () => {
    const s = await standardSetup();
    const { consent } = await authorizeAndAllow(s, { scope: 'email offline_access' });
    expect(consent).toContain('asks for access to your account with these permissions');
    expect(consent).toContain('It will not receive your name, email address or any other profile information.');
    expect(consent).toMatch(/<p class="scope-title">email<\/p>/);
    expect(consent).not.toContain('Your email address and whether it has been verified'); // the claims of email
    expect(consent).toContain('Stay connected'); // offline_access releases no claim: still explained
    expect(consent).not.toContain('This will allow');

    const withOpenId = await authorizeAndAllow(await standardSetup(), { scope: 'openid email' });
    expect(withOpenId.consent).toContain('Your email address and whether it has been verified');
    expect(withOpenId.consent).not.toContain('It will not receive your name');
  });

  it('prompt=none, max_age and login_hint keep working', async () => {
    const s = await standardSetup();
    const { b } = await authorizeAndAllow(s, { scope: 'email', login_hint: s.user.email, max_age: '600' });
    const silent = await b.get(
      authorizePath(s, { scope: 'email', prompt: 'none', max_age: '600', login_hint: s.user.email }),
    );
    const callback = new URL(silent.location!);
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
    expect((await exchange(s, callback).expect(200)).body.id_token).toBeUndefined();

    const other = await browser(t.app).get(authorizePath(s, { scope: 'email', prompt: 'none' }));
    expect(new URL(other.location!).searchParams.get('error')).toBe('login_required');
  });

  it('a scope the client does not hold, leaving nothing to grant, is invalid_scope', async () => {
    const s = await standardSetup('openid email');
    const res = await request(t.app)
      .get(authorizePath(s, { scope: 'phone' }))
      .expect(302);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_scope');
  });
});

describe('standard platform: a request with no scope', () => {
  it.each([
    ['omitted', undefined],
    ['empty', ''],
  ])("%s: the client's registered scopes, openid included, so an ID token too", async (_label, scope) => {
    const s = await standardSetup('openid email offline_access');
    const { callback } = await authorizeAndAllow(s, { scope });
    const tokens = (await exchange(s, callback).expect(200)).body;
    expect(tokens).toMatchObject({
      scope: 'openid email offline_access',
      id_token: expect.any(String),
      refresh_token: expect.any(String),
    });
  });
});

describe("a seed platform keeps the spec's rules", () => {
  it.each([
    ['no scope', 'invalid_request', undefined],
    ['a scope without openid', 'invalid_scope', 'email'],
  ])('%s: %s', async (_label, code, scope) => {
    const platform = await buildPlatform(t.services);
    const client = await buildClient(t.services, platform.id);
    const query = new URLSearchParams({
      platform_guid: platform.id,
      response_type: 'code',
      client_id: client.id,
      redirect_uri: CALLBACK,
      state: 'st',
    });
    if (scope) query.set('scope', scope);
    const res = await request(t.app).get(`/oauth/authorize?${query}`).expect(302);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe(code);
  });
});
