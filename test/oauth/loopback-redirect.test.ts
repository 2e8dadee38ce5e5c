// Native apps (RFC 8252): a registered loopback IP redirect URI matches any port at request time
// (§7.3); `localhost` is refused at registration (§8.3); every other redirect URI matches exactly.
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { authorizeQuery, basic, signInThrough } from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function tenant(redirectUris: string[], postLogoutRedirectUris: string[] = []) {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id, { redirectUris, postLogoutRedirectUris });
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}

const authorize = (
  p: { id: string },
  c: { id: string; redirectUris: string[]; secret: string | null },
  redirectUri: string,
) => request(t.app).get(`/oauth/authorize?${authorizeQuery(p, c, { redirect_uri: redirectUri })}`);

const exchangeWith = (
  p: { id: string },
  c: { id: string; redirectUris: string[]; secret: string | null },
  code: string,
  redirectUri: string,
) =>
  request(t.app)
    .post('/oauth/token')
    .set('Authorization', basic(c))
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, platform_guid: p.id });

/** The request was accepted: on to the hosted pages, not the error page. */
const expectAccepted = (res: request.Response) => {
  expect(res.status).toBe(303);
  expect(res.headers.location).toMatch(/^\/interaction\//);
};
/** The request was refused before the client was trusted: a 400 page, never a redirect. */
const expectRefusedPage = (res: request.Response) => {
  expect(res.status).toBe(400);
  expect(res.headers.location).toBeUndefined();
  expect(res.text).toMatch(/redirect_uri is not registered/);
};

describe('authorize: loopback redirect URIs match any port (RFC 8252 §7.3)', () => {
  it('http://127.0.0.1 registered without a port: a code for another port, exchanged with that same URI', async () => {
    const { p, c, u } = await tenant(['http://127.0.0.1/cb']);
    const requested = 'http://127.0.0.1:51234/cb';
    const callback = new URL(
      await signInThrough(browser(t.app), p, c, u.email, undefined, { redirect_uri: requested }),
    );
    expect(`${callback.origin}${callback.pathname}`).toBe(requested);
    const code = callback.searchParams.get('code')!;
    expect(code).toBeTruthy();

    // The token endpoint keeps an exact comparison with the URI of the authorization request.
    for (const other of ['http://127.0.0.1/cb', 'http://127.0.0.1:51235/cb']) {
      const res = await exchangeWith(p, c, code, other);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    }
    const ok = await exchangeWith(p, c, code, requested);
    expect(ok.status).toBe(200);
    expect(ok.body.access_token).toEqual(expect.any(String));
  });

  it('http://[::1] works the same way', async () => {
    const { p, c, u } = await tenant(['http://[::1]/cb']);
    const requested = 'http://[::1]:4000/cb';
    const callback = new URL(
      await signInThrough(browser(t.app), p, c, u.email, undefined, { redirect_uri: requested }),
    );
    expect(callback.origin).toBe('http://[::1]:4000');
    expect((await exchangeWith(p, c, callback.searchParams.get('code')!, requested)).status).toBe(200);
  });

  it('a loopback URI registered with a port accepts another port, no port, and the registered one', async () => {
    const { p, c } = await tenant(['http://127.0.0.1:8080/cb?app=notes']);
    for (const uri of [
      'http://127.0.0.1:8080/cb?app=notes',
      'http://127.0.0.1:9999/cb?app=notes',
      'http://127.0.0.1/cb?app=notes',
      'http://127.0.0.1:65535/cb?app=notes',
    ]) {
      expectAccepted(await authorize(p, c, uri));
    }
  });

  it('errors after the client is trusted are redirected to the requested port', async () => {
    const { p, c } = await tenant(['http://127.0.0.1/cb']);
    const res = await request(t.app).get(
      `/oauth/authorize?${authorizeQuery(p, c, { redirect_uri: 'http://127.0.0.1:7000/cb', response_type: 'token' })}`,
    );
    expect(res.status).toBe(302);
    const url = new URL(res.headers.location);
    expect(`${url.origin}${url.pathname}`).toBe('http://127.0.0.1:7000/cb');
    expect(url.searchParams.get('error')).toBe('unsupported_response_type');
  });

  it.each([
    ['another path', 'http://127.0.0.1:5000/other'],
    ['a trailing slash', 'http://127.0.0.1:5000/cb/'],
    ['a path in another case', 'http://127.0.0.1:5000/CB'],
    ['an added query', 'http://127.0.0.1:5000/cb?x=1'],
    ['another loopback host', 'http://127.0.0.2:5000/cb'],
    ['the other loopback family', 'http://[::1]:5000/cb'],
    ['localhost', 'http://localhost:5000/cb'],
    ['https', 'https://127.0.0.1:5000/cb'],
    ['a scheme in capitals', 'HTTP://127.0.0.1:5000/cb'],
    ['userinfo that moves the host', 'http://127.0.0.1:5000@evil.example/cb'],
    ['port 0', 'http://127.0.0.1:0/cb'],
    ['a port out of range', 'http://127.0.0.1:65536/cb'],
    ['a port with a leading zero', 'http://127.0.0.1:08080/cb'],
    ['an empty port', 'http://127.0.0.1:/cb'],
    ['a fragment', 'http://127.0.0.1:5000/cb#x'],
  ])('refuses %s with the error page', async (_label, uri) => {
    const { p, c } = await tenant(['http://127.0.0.1/cb']);
    expectRefusedPage(await authorize(p, c, uri));
  });

  it("a self-registered public client's http://localhost redirect matches any port of localhost, never a loopback IP", async () => {
    const { p, c } = await tenant(['http://127.0.0.1/unused']);
    // Only registration by the client itself may store localhost (docs/decisions.md): written here directly.
    await t.database
      .db('clients')
      .where({ id: c.id })
      .update({ redirect_uris: ['http://localhost/callback'] });
    t.services.clientAuth.forget(c.id);
    const client = { ...c, redirectUris: ['http://localhost/callback'] };
    expectAccepted(await authorize(p, client, 'http://localhost:43123/callback'));
    expectAccepted(await authorize(p, client, 'http://localhost/callback'));
    expectRefusedPage(await authorize(p, client, 'http://127.0.0.1:43123/callback'));
    expectRefusedPage(await authorize(p, client, 'http://localhost:43123/other'));
  });

  it('keeps exact matching for other URIs: an https URI on another port is refused', async () => {
    const { p, c } = await tenant(['https://app.example/callback', 'https://app.example:8443/cb']);
    expectRefusedPage(await authorize(p, c, 'https://app.example:8443/callback'));
    expectRefusedPage(await authorize(p, c, 'https://app.example:443/callback'));
    expectRefusedPage(await authorize(p, c, 'https://app.example:9443/cb'));
    expectAccepted(await authorize(p, c, 'https://app.example:8443/cb'));
  });
});

describe('registration: localhost is refused (RFC 8252 §8.3)', () => {
  it.each([
    ['http://localhost/cb'],
    ['http://localhost:5173/cb'],
    ['http://LOCALHOST:5173/cb'],
    ['http://app.localhost/cb'],
  ])('%s → invalid_request naming the loopback IP literals', async (uri) => {
    const p = await buildPlatform(t.services);
    const before = await t.database.db('clients').where({ platform_id: p.id }).count('* as n').first();
    await expect(buildClient(t.services, p.id, { redirectUris: [uri] })).rejects.toMatchObject({
      code: 'invalid_request',
      description: expect.stringMatching(/localhost.*127\.0\.0\.1.*\[::1\].*RFC 8252/s),
    });
    await expect(buildClient(t.services, p.id, { postLogoutRedirectUris: [uri] })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect(await t.database.db('clients').where({ platform_id: p.id }).count('* as n').first()).toEqual(before);
  });

  it.each([
    ['http://127.0.0.2/cb'],
    ['http://0x7f000001/cb'],
    ['http://127.1/cb'],
    ['HTTP://127.0.0.1/cb'],
    ['http://[0:0:0:0:0:0:0:1]/cb'],
    ['http://127.0.0.1:0/cb'],
  ])('http other than the literal 127.0.0.1 or [::1] is refused: %s', async (uri) => {
    const p = await buildPlatform(t.services);
    await expect(buildClient(t.services, p.id, { redirectUris: [uri] })).rejects.toMatchObject({
      code: 'invalid_request',
      description: expect.stringMatching(/must use https/),
    });
  });

  it('accepts the loopback IP literals with or without a port', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id, {
      redirectUris: ['http://127.0.0.1/cb', 'http://127.0.0.1:8080/cb', 'http://[::1]/cb', 'http://[::1]:8080/cb'],
    });
    expect(c.redirectUris).toHaveLength(4);
  });
});

describe('RP-initiated logout: post-logout loopback URIs match any port too', () => {
  const logout = (p: { id: string }, params: Record<string, string>) =>
    `/oauth/logout?${new URLSearchParams({ platform_guid: p.id, ...params })}`;

  it('sends the browser to the requested port of a registered loopback URI', async () => {
    const { p, c } = await tenant(['http://127.0.0.1/cb'], ['http://127.0.0.1/signed-out']);
    const res = await request(t.app).get(
      logout(p, { client_id: c.id, post_logout_redirect_uri: 'http://127.0.0.1:6000/signed-out', state: 'bye' }),
    );
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('http://127.0.0.1:6000/signed-out?state=bye');
  });

  it.each([
    ['http://127.0.0.1:6000/elsewhere'],
    ['http://localhost:6000/signed-out'],
    ['https://127.0.0.1:6000/signed-out'],
  ])('refuses %s', async (uri) => {
    const { p, c } = await tenant(['http://127.0.0.1/cb'], ['http://127.0.0.1/signed-out']);
    const res = await request(t.app)
      .get(logout(p, { client_id: c.id, post_logout_redirect_uri: uri }))
      .set('Accept', 'text/html');
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });
});
