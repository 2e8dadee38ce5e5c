import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { basic } from '../support/account-flows';

// docs/decisions.md, "Agent-ready authorization": a standard platform's endpoints under its issuer
// (/platforms/G/oauth/…) serve what the query-string forms serve, and its metadata lists them
// without a query. A seed platform has no such paths.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const BASE = 'http://issuer.test';
const ENDPOINTS = [
  'authorization_endpoint',
  'token_endpoint',
  'userinfo_endpoint',
  'jwks_uri',
  'introspection_endpoint',
  'revocation_endpoint',
  'end_session_endpoint',
];
const standardPlatform = async () =>
  (await t.services.platforms.createPlatform(`Paths ${randomBytes(4).toString('hex')}`, undefined, 'standard'))
    .platform;

/** A standard platform, a confidential client, a user, and the path of its issuer. */
async function standardSetup() {
  const platform = await standardPlatform();
  const client = await buildClient(t.services, platform.id);
  const user = await buildUser(t.services, platform.id);
  return { platform, client, user, issuerPath: `/platforms/${platform.id}` };
}

/** The authorization request at the listed endpoint, signed in and allowed; the code. */
async function codeThroughPaths(issuerPath: string, client: { id: string; redirectUris: string[] }, email: string) {
  const b = browser(t.app);
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.id,
    redirect_uri: client.redirectUris[0],
    scope: 'openid email offline_access',
    state: 'st',
  });
  await b.get(`${issuerPath}/oauth/authorize?${query}`);
  expect(b.pageTitle()).toBe('Sign in');
  let step = await b.submit('/signin', { email, password: TEST_PASSWORD });
  if (!step.location) step = await b.submit('/consent', { decision: 'allow' });
  const callback = new URL(step.location!);
  expect(callback.searchParams.get('state')).toBe('st');
  return { b, code: callback.searchParams.get('code')! };
}

describe('discovery of a standard platform', () => {
  it('lists every endpoint under the issuer, without a query string, in both documents', async () => {
    const p = await standardPlatform();
    const issuer = `${BASE}/platforms/${p.id}`;
    for (const path of [
      `/platforms/${p.id}/.well-known/openid-configuration`,
      `/.well-known/oauth-authorization-server/platforms/${p.id}`,
    ]) {
      const doc = (await request(t.app).get(path).expect(200)).body as Record<string, unknown>;
      for (const name of ENDPOINTS) {
        const url = new URL(doc[name] as string);
        expect(url.search).toBe('');
        expect(url.href.startsWith(`${issuer}/oauth/`)).toBe(true);
      }
      // Every other member naming a URL of ours too.
      const urls = Object.values(doc).filter((v): v is string => typeof v === 'string' && v.startsWith(BASE));
      expect(urls.filter((u) => u.includes('?'))).toEqual([]);
    }
  });
});

describe('the path endpoints serve what the query-string forms serve', () => {
  it('authorize (GET, POST → 303), token (code and refresh), userinfo (GET, POST), introspect, revoke', async () => {
    const { platform, client, user, issuerPath } = await standardSetup();
    const { code } = await codeThroughPaths(issuerPath, client, user.email);

    const tokens = await request(t.app)
      .post(`${issuerPath}/oauth/token`)
      .set('Authorization', basic(client))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0] })
      .expect(200);
    expect(tokens.body).toMatchObject({
      token_type: 'Bearer',
      id_token: expect.any(String),
      refresh_token: expect.any(String),
    });
    expect(tokens.headers['cache-control']).toMatch(/no-store/);

    const refreshed = await request(t.app)
      .post(`${issuerPath}/oauth/token`)
      .set('Authorization', basic(client))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token })
      .expect(200);
    const accessToken = refreshed.body.access_token as string;

    const byQuery = await request(t.app)
      .get(`/oauth/userinfo?platform_guid=${platform.id}`)
      .set('Authorization', `Bearer ${accessToken}`)
      .expect(200);
    const got = await request(t.app)
      .get(`${issuerPath}/oauth/userinfo`)
      .set('Authorization', `Bearer ${accessToken}`)
      .expect(200);
    const posted = await request(t.app)
      .post(`${issuerPath}/oauth/userinfo`)
      .set('Authorization', `Bearer ${accessToken}`)
      .type('form')
      .send({})
      .expect(200);
    expect(got.body).toEqual(byQuery.body);
    expect(posted.body).toEqual(byQuery.body);
    expect(got.body).toMatchObject({ sub: user.id, email: user.email });

    const active = await request(t.app)
      .post(`${issuerPath}/oauth/introspect`)
      .set('Authorization', basic(client))
      .type('form')
      .send({ token: accessToken })
      .expect(200);
    expect(active.body).toMatchObject({ active: true, sub: user.id, client_id: client.id });
    await request(t.app)
      .post(`${issuerPath}/oauth/revoke`)
      .set('Authorization', basic(client))
      .type('form')
      .send({ token: accessToken })
      .expect(200);
    const revoked = await request(t.app)
      .post(`${issuerPath}/oauth/introspect`)
      .set('Authorization', basic(client))
      .type('form')
      .send({ token: accessToken })
      .expect(200);
    expect(revoked.body).toEqual({ active: false });
    expectOAuthError(
      await request(t.app).get(`${issuerPath}/oauth/userinfo`).set('Authorization', `Bearer ${accessToken}`),
      401,
      'invalid_token',
    );
  });

  it('authorize by POST answers 303 to the same request as a GET, which carries the platform', async () => {
    const { platform, client, issuerPath } = await standardSetup();
    const res = await request(t.app)
      .post(`${issuerPath}/oauth/authorize`)
      .type('form')
      .send({ response_type: 'code', client_id: client.id, redirect_uri: client.redirectUris[0], scope: 'openid' })
      .expect(303);
    const location = new URL(res.headers.location as string, BASE);
    expect(location.pathname).toBe('/oauth/authorize');
    expect(location.searchParams.get('platform_guid')).toBe(platform.id);
    expect(location.searchParams.get('client_id')).toBe(client.id);
  });

  it('a client appending ?response_type=… to the listed authorization endpoint reaches the sign-in page', async () => {
    const { platform, client } = await standardSetup();
    const doc = (await request(t.app).get(`/platforms/${platform.id}/.well-known/openid-configuration`).expect(200))
      .body as { authorization_endpoint: string };
    const url = new URL(doc.authorization_endpoint);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: client.id,
      redirect_uri: client.redirectUris[0],
      scope: 'openid',
    }))
      url.searchParams.set(k, v);
    const b = browser(t.app);
    await b.get(`${url.pathname}${url.search}`);
    expect(b.pageTitle()).toBe('Sign in');
  });

  it('jwks: the same document as the query form', async () => {
    const { platform, issuerPath } = await standardSetup();
    const byPath = await request(t.app).get(`${issuerPath}/oauth/jwks`).expect(200);
    const byQuery = await request(t.app).get(`/oauth/jwks?platform_guid=${platform.id}`).expect(200);
    expect(byPath.body).toEqual(byQuery.body);
    expect(byPath.body.keys.length).toBeGreaterThan(0);
    expect(byPath.headers['cache-control']).toBe('public, max-age=3600');
  });

  it('logout (GET, and POST → 303): the browser session middleware and the signed-out page', async () => {
    const { platform, client, user, issuerPath } = await standardSetup();
    const { b } = await codeThroughPaths(issuerPath, client, user.email);
    const confirm = await b.agent.get(`${issuerPath}/oauth/logout`).expect(200);
    expect(confirm.text).toContain(user.email); // the signed-in account, read from the session
    expect(confirm.text).toContain('name="_csrf"');
    const posted = await request(t.app)
      .post(`${issuerPath}/oauth/logout`)
      .type('form')
      .send({ client_id: client.id })
      .expect(303);
    expect(new URL(posted.headers.location as string, BASE).searchParams.get('platform_guid')).toBe(platform.id);
    const fresh = await request(t.app).get(`${issuerPath}/oauth/logout`).expect(200);
    expect(fresh.headers['content-type']).toMatch(/text\/html/);
  });

  it('refuses a platform_guid of the client that names another platform (query or body)', async () => {
    const { client, issuerPath } = await standardSetup();
    const other = await standardPlatform();
    expectOAuthError(
      await request(t.app).get(`${issuerPath}/oauth/jwks?platform_guid=${other.id}`),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await request(t.app)
        .post(`${issuerPath}/oauth/token`)
        .set('Authorization', basic(client))
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: 'rt_x', platform_guid: other.id }),
      400,
      'invalid_request',
    );
    const page = await request(t.app)
      .get(`${issuerPath}/oauth/authorize?platform_guid=${other.id}&client_id=${client.id}`)
      .expect(400);
    expect(page.headers['content-type']).toMatch(/text\/html/);
  });

  it('an unknown endpoint under the issuer is 404 and names the path asked for', async () => {
    const { issuerPath } = await standardSetup();
    const res = await request(t.app).get(`${issuerPath}/oauth/nope`);
    expectOAuthError(res, 404, 'not_found');
    expect(res.body.error_description).toContain(`${issuerPath}/oauth/nope`);
  });
});

describe('a seed platform, an unknown or a malformed guid under /platforms/G/oauth/…', () => {
  it.each([
    ['a seed platform', async () => (await buildPlatform(t.services)).id],
    ['an unknown platform', async () => '00000000-0000-4000-8000-000000000000'],
    ['a malformed guid', async () => 'not-a-guid'],
  ])('%s: 404, JSON on the API endpoints and the error page on the browser ones', async (_label, guidOf) => {
    const guid = await guidOf();
    for (const path of ['token', 'introspect', 'revoke'])
      expectOAuthError(
        await request(t.app).post(`/platforms/${guid}/oauth/${path}`).type('form').send({}),
        404,
        'not_found',
      );
    for (const path of ['jwks', 'userinfo'])
      expectOAuthError(
        await request(t.app).get(`/platforms/${guid}/oauth/${path}`).set('Accept', 'text/html'),
        404,
        'not_found',
      );
    for (const path of ['authorize?response_type=code', 'logout']) {
      const res = await request(t.app).get(`/platforms/${guid}/oauth/${path}`).expect(404);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.headers['content-security-policy']).toBeDefined();
    }
  });

  it('the seed platform keeps its query-string endpoints', async () => {
    const p = await buildPlatform(t.services);
    await request(t.app).get(`/oauth/jwks?platform_guid=${p.id}`).expect(200);
  });
});
