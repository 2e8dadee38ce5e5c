import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { authorizeQuery, exchange, refresh, signInThrough } from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const AFTER = 'https://app.example/signed-out';

async function tenant(clientInput = {}) {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const c = await buildClient(t.services, p.id, { postLogoutRedirectUris: [AFTER], ...clientInput });
  const u = await buildUser(t.services, p.id, {
    email: `logout-${Math.random().toString(36).slice(2, 10)}@example.com`,
  });
  return { p, c, u };
}

const logout = (p: { id: string }, params: Record<string, string>) =>
  `/oauth/logout?${new URLSearchParams({ platform_guid: p.id, ...params })}`;

describe('RP-initiated logout', () => {
  it('is advertised in discovery with the platform_guid', async () => {
    const { p } = await tenant();
    const res = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`).expect(200);
    expect(res.body.end_session_endpoint).toBe(`http://issuer.test/oauth/logout?platform_guid=${p.id}`);
  });

  it("with a valid id_token_hint signs out at once, revokes this browser's refresh tokens and returns with state", async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    // Another browser of the same user keeps its session and tokens.
    const other = browser(t.app);
    const otherTokens = await exchange(t.app, p, c, await signInThrough(other, p, c, u.email));

    const res = await b.get(
      logout(p, { id_token_hint: tokens.id_token, post_logout_redirect_uri: AFTER, state: 'bye-1' }),
    );
    expect(res.res.status).toBe(302);
    expect(res.location).toBe(`${AFTER}?state=bye-1`);
    expect((await refresh(t.app, p, c, tokens.refresh_token!)).body.error).toBe('invalid_grant');
    expect((await refresh(t.app, p, c, otherTokens.refresh_token!)).status).toBe(200);
    const none = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(none.location!).searchParams.get('error')).toBe('login_required');
    const stillIn = await other.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(stillIn.location!).searchParams.get('code')).toBeTruthy();
  });

  it("accepts an expired id_token_hint and a public client's hint (platform key)", async () => {
    const { p, u } = await tenant();
    const pub = await buildClient(t.services, p.id, { type: 'public', postLogoutRedirectUris: [AFTER] });
    const b = browser(t.app);
    const verifier = 'v'.repeat(50);
    const challenge = require('node:crypto').createHash('sha256').update(verifier).digest('base64url');
    const cb = await signInThrough(b, p, pub, u.email, undefined, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const code = new URL(cb).searchParams.get('code');
    const tok = await request(t.app).post('/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      redirect_uri: pub.redirectUris[0],
      client_id: pub.id,
      code_verifier: verifier,
      platform_guid: p.id,
    });
    const later = await buildTestApp({}, () => new Date(Date.now() + 2 * 3600 * 1000));
    try {
      const res = await request(later.app).get(
        logout(p, { id_token_hint: tok.body.id_token, post_logout_redirect_uri: AFTER }),
      );
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(AFTER);
    } finally {
      await later.close();
    }
  });

  it("refuses an access token as id_token_hint (a public client's is signed with the platform key too): the 400 page, no sign-out", async () => {
    const { p, u } = await tenant();
    const pub = await buildClient(t.services, p.id, { type: 'public', postLogoutRedirectUris: [AFTER] });
    const b = browser(t.app);
    const verifier = 'v'.repeat(50);
    const challenge = require('node:crypto').createHash('sha256').update(verifier).digest('base64url');
    const cb = await signInThrough(b, p, pub, u.email, undefined, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const tok = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: new URL(cb).searchParams.get('code'),
        redirect_uri: pub.redirectUris[0],
        client_id: pub.id,
        code_verifier: verifier,
        platform_guid: p.id,
      });
    const res = await b.get(logout(p, { id_token_hint: tok.body.access_token, post_logout_redirect_uri: AFTER }));
    expect(res.res.status).toBe(400);
    expect(res.location).toBeUndefined();
    expect(res.res.text).toContain('id_token_hint is not an ID token');
    const again = await request(t.app).post('/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: tok.body.refresh_token,
      client_id: pub.id,
      platform_guid: p.id,
    });
    expect(again.status).toBe(200); // nothing was revoked
  });

  it('without an id_token_hint asks first; "Sign out" then returns to the registered URI with state', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const page = await b.get(logout(p, { client_id: c.id, post_logout_redirect_uri: AFTER, state: 'st' }));
    expect(page.res.status).toBe(200);
    expect(b.pageTitle()).toBe('Sign out of Acme Travel?');
    expect(b.html).toContain(u.email);
    expect((await refresh(t.app, p, c, tokens.refresh_token!)).status).toBe(200); // nothing happened yet
    const done = await b.submit(`/oauth/logout/confirm?platform_guid=${p.id}`, {
      decision: 'logout',
      client_id: c.id,
      post_logout_redirect_uri: AFTER,
      state: 'st',
    });
    expect(done.location).toBe(`${AFTER}?state=st`);
    const none = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(none.location!).searchParams.get('error')).toBe('login_required');
  });

  it('"Stay signed in" keeps the session; no hint and no redirect shows the signed-out page', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    await signInThrough(b, p, c, u.email);
    await b.get(logout(p, {}));
    expect(b.pageTitle()).toBe('Sign out of Acme Travel?');
    await b.submit(`/oauth/logout/confirm?platform_guid=${p.id}`, { decision: 'stay' });
    expect(b.pageTitle()).toBe('You are still signed in');
    const stillIn = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(stillIn.location!).searchParams.get('code')).toBeTruthy();
    await b.get(logout(p, {}));
    await b.submit(`/oauth/logout/confirm?platform_guid=${p.id}`, { decision: 'logout' });
    expect(b.pageTitle()).toBe('You are signed out');
  });

  it.each([
    [
      'an unregistered post_logout_redirect_uri',
      (c: { id: string }) => ({ client_id: c.id, post_logout_redirect_uri: 'https://evil.example/x' }),
    ],
    [
      'a post_logout_redirect_uri differing by a slash',
      (c: { id: string }) => ({ client_id: c.id, post_logout_redirect_uri: `${AFTER}/` }),
    ],
    ['a post_logout_redirect_uri without a client', () => ({ post_logout_redirect_uri: AFTER })],
    ['an unknown client', () => ({ client_id: '00000000-0000-4000-8000-000000000000' })],
    [
      'a forged id_token_hint',
      (c: { id: string }) => ({
        id_token_hint: `eyJhbGciOiJIUzUxMiJ9.${Buffer.from(JSON.stringify({ aud: c.id, sub: 'x', iss: 'http://issuer.test' })).toString('base64url')}.c2ln`,
      }),
    ],
    ['a malformed id_token_hint', () => ({ id_token_hint: 'not-a-jwt' })],
  ])('%s → 400 page, never a redirect', async (_label, params) => {
    const { p, c } = await tenant();
    const res = await request(t.app)
      .get(logout(p, params(c)))
      .set('Accept', 'text/html');
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });

  it('refuses a client_id that is not the audience of id_token_hint', async () => {
    const { p, c, u } = await tenant();
    const c2 = await buildClient(t.services, p.id, { postLogoutRedirectUris: [AFTER] });
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const res = await request(t.app).get(
      logout(p, { id_token_hint: tokens.id_token, client_id: c2.id, post_logout_redirect_uri: AFTER }),
    );
    expect(res.status).toBe(400);
  });

  it('answers POST as well as GET: a 303 to the same request as a GET, before any session work', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const fields = { platform_guid: p.id, id_token_hint: tokens.id_token, post_logout_redirect_uri: AFTER, state: 'p' };
    const res = await b.agent.post('/oauth/logout').type('form').send(fields);
    expect(res.status).toBe(303);
    expect(res.headers['set-cookie']).toBeUndefined();
    const get = new URL(res.headers.location, 'http://issuer.test');
    expect(get.pathname).toBe('/oauth/logout');
    expect(Object.fromEntries(get.searchParams)).toEqual(fields);
    const done = await b.agent.get(`${get.pathname}${get.search}`);
    expect(done.status).toBe(302); // a GET's redirect
    expect(done.headers.location).toBe(`${AFTER}?state=p`);
  });

  it('signs the browser out when the logout form is POSTed from another site (no cookie on the POST)', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    // SameSite=Lax: the cross-site POST arrives without the cookie, the GET it leads to carries it.
    const crossSite = await request(t.app)
      .post('/oauth/logout')
      .type('form')
      .send({ platform_guid: p.id, id_token_hint: tokens.id_token, post_logout_redirect_uri: AFTER, state: 'x' });
    expect(crossSite.status).toBe(303);
    const done = await b.agent.get(crossSite.headers.location);
    expect(done.headers.location).toBe(`${AFTER}?state=x`);
    const again = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(again.location!).searchParams.get('error')).toBe('login_required');
  });
});
