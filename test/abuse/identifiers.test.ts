import request from 'supertest';
import { SignJWT } from 'jose';
import { buildTestApp, expectOAuthError, TEST_ENV } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { accountSignIn, authorizeQuery, basic } from '../support/account-flows';

// Issue 10 §3: identifiers from outside are checked strictly before any query. A near-valid one
// (36 dashes passed the old /^[0-9a-f-]{36}$/i and reached Postgres: 22P02 → 500) gets the same
// answer as any unknown identifier.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(() => t.close());

const DASHES = '-'.repeat(36);
const NEAR = [
  DASHES,
  '0123456789ab-cdef-0123-4567-89abcdef0123', // the right length, dashes in the wrong places
  'g0000000-0000-0000-0000-000000000000', // a non-hex character
];

async function tenant() {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}
const form = (path: string) => request(t.app).post(path).type('form');
const html = (res: request.Response, status: number) => expect([res.status, res.type]).toEqual([status, 'text/html']);

describe.each(NEAR)('platform_guid=%s is an unknown platform, never a 500', (id) => {
  it.each(['/.well-known/openid-configuration', '/oauth/jwks', '/oauth/userinfo'])('GET %s → 400 invalid_request', async (path) => {
    expectOAuthError(await request(t.app).get(`${path}?platform_guid=${id}`), 400, 'invalid_request');
  });

  it.each(['/oauth/token', '/oauth/introspect', '/oauth/revoke'])('POST %s (body and query) → 400 invalid_request', async (path) => {
    expectOAuthError(await form(path).send({ platform_guid: id, grant_type: 'refresh_token', refresh_token: 'rt_x', token: 'x' }), 400, 'invalid_request');
    expectOAuthError(await form(`${path}?platform_guid=${id}`).send({ token: 'x', grant_type: 'refresh_token' }), 400, 'invalid_request');
  });

  it.each(['/oauth/authorize', '/oauth/logout', '/account', '/account/signin', '/password/forgot', '/verify-email'])('GET %s → the 400 error page', async (path) => {
    html(await request(t.app).get(`${path}?platform_guid=${id}`).set('Accept', 'text/html'), 400);
  });
});

describe.each(NEAR)('client_id=%s is an unknown client, never a 500', (id) => {
  it('authorize: the 400 error page, no redirect', async () => {
    const { p, c } = await tenant();
    const res = await request(t.app).get(`/oauth/authorize?${authorizeQuery(p, { ...c, id })}`);
    html(res, 400);
    expect(res.text).toContain('not registered');
  });

  it('token, introspect, revoke: 401 invalid_client (Basic, and client_secret_post)', async () => {
    const { p, c } = await tenant();
    const params = { platform_guid: p.id, grant_type: 'refresh_token', refresh_token: 'rt_x', token: 'x' };
    for (const path of ['/oauth/token', '/oauth/introspect', '/oauth/revoke']) {
      expectOAuthError(await form(path).set('Authorization', basic({ ...c, id })).send(params), 401, 'invalid_client');
      expectOAuthError(await form(path).send({ ...params, client_id: id, client_secret: c.secret }), 401, 'invalid_client');
    }
    // A public client sends its client_id alone.
    expectOAuthError(await form('/oauth/token').send({ ...params, client_id: id }), 401, 'invalid_client');
  });

  it('logout: the 400 error page', async () => {
    const { p } = await tenant();
    html(await request(t.app).get(`/oauth/logout?platform_guid=${p.id}&client_id=${id}`), 400);
  });

  it('account page: revoking that app is refused like an unknown app', async () => {
    const { p, u } = await tenant();
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    expect(b.pageTitle()).toBe('Your account');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(b.html)![1];
    const res = await b.agent.post(`/account/apps/revoke?platform_guid=${p.id}`).type('form').send({ _csrf: csrf, account: u.id, client_id: id });
    expect(res.status).toBeLessThan(500);
  });
});

describe.each(NEAR)('a user or platform id %s in a picture URL is 404, never a 500', (id) => {
  it('avatars and uploaded pictures', async () => {
    const { p, u } = await tenant();
    for (const path of [`/avatars/${id}/${u.id}.svg`, `/avatars/${p.id}/${id}.svg`, `/pictures/${id}/${u.id}/1`, `/pictures/${p.id}/${id}/1`]) {
      expectOAuthError(await request(t.app).get(path), 404, 'not_found');
    }
  });
});

describe.each(NEAR)('a signed token naming %s', (id) => {
  const idToken = (key: Uint8Array, claims: Record<string, unknown>) =>
    new SignJWT({ iss: TEST_ENV.BASE_URL, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 600, ...claims }).setProtectedHeader({ alg: 'HS512' }).sign(key);

  it('authorize: an id_token_hint whose sub is no id of ours is invalid_request, redirected', async () => {
    const { p, c } = await tenant();
    // A confidential client holds the key of its own ID tokens, so it can sign any sub.
    const hint = await idToken(new TextEncoder().encode(c.secret!), { sub: id, aud: c.id });
    for (const prompt of ['none', 'login']) {
      const res = await request(t.app).get(`/oauth/authorize?${authorizeQuery(p, c, { id_token_hint: hint, prompt })}`);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.location).searchParams.get('error')).toBe('invalid_request');
    }
  });

  it('logout: an id_token_hint whose sub is no id of ours is the 400 page', async () => {
    const { p, c } = await tenant();
    const hint = await idToken(new TextEncoder().encode(c.secret!), { sub: id, aud: c.id });
    html(await request(t.app).get(`/oauth/logout?platform_guid=${p.id}&id_token_hint=${hint}`), 400);
  });

  it('userinfo: a forged access token with that kid is 401 invalid_token', async () => {
    const forged = await new SignJWT({ sub: id, jti: 'x' }).setProtectedHeader({ alg: 'HS512', kid: id }).sign(new Uint8Array(64));
    expectOAuthError(await request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${forged}`), 401, 'invalid_token');
  });
});
