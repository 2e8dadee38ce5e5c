import request from 'supertest';
import { SignJWT } from 'jose';
import { buildTestApp, expectOAuthError, TEST_ENV } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser, type Browser } from '../support/browser';
import { accountSignIn, authorizeQuery, basic } from '../support/account-flows';

// Identifiers from outside are checked strictly before any query. A near-valid one
// (36 dashes passed the old /^[0-9a-f-]{36}$/i and reached Postgres: 22P02 → 500) gets the same
// answer as any unknown identifier. Each variant bends a real id of the tenant below; upper case
// too: one identifier has one spelling (src/domain/ids.ts).
let t: Awaited<ReturnType<typeof buildTestApp>>;
let p: { id: string };
let c: Awaited<ReturnType<typeof buildClient>>;
let u: { id: string; email: string };
let signedIn: Browser;
beforeAll(async () => {
  t = await buildTestApp();
  p = await buildPlatform(t.services);
  c = await buildClient(t.services, p.id);
  u = await buildUser(t.services, p.id);
  signedIn = browser(t.app);
  await accountSignIn(signedIn, p, u.email);
});
afterAll(() => t.close());

const NEAR: [string, (id: string) => string][] = [
  ['36 dashes', () => '-'.repeat(36)],
  [
    'dashes in the wrong places',
    (id) => `${id.replace(/-/g, '').slice(0, 12)}-${id.replace(/-/g, '').slice(12, 32)}---`,
  ],
  ['a non-hex character', (id) => `g${id.slice(1)}`],
  ['upper case', (id) => id.toUpperCase()],
  ['braces', (id) => `{${id}}`],
  ['no dashes', (id) => id.replace(/-/g, '')],
  ['a leading space', (id) => ` ${id}`],
  ['a trailing newline', (id) => `${id}\n`],
  ['one character too many', (id) => `${id}0`],
  ['a NUL byte', (id) => `${id.slice(0, 8)}\0${id.slice(9)}`],
  ['a Cyrillic lookalike', (id) => id.replace(/[ace]/, (ch) => ({ a: '\u0430', c: '\u0441', e: '\u0435' })[ch]!)],
  ['a full-width digit', (id) => id.replace(/[0-9]/, (d) => String.fromCharCode(0xff10 + Number(d)))],
  ['a non-breaking hyphen', (id) => id.replace('-', '\u2011')],
];

const enc = encodeURIComponent;
const form = (path: string) => request(t.app).post(path).type('form');
const html = (res: request.Response, status: number) => expect([res.status, res.type]).toEqual([status, 'text/html']);
const idToken = (key: Uint8Array, claims: Record<string, unknown>) =>
  new SignJWT({
    iss: TEST_ENV.BASE_URL,
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 600,
    ...claims,
  })
    .setProtectedHeader({ alg: 'HS512' })
    .sign(key);

describe.each(NEAR)('platform_guid with %s is an unknown platform, never a 500', (_label, bend) => {
  const g = () => enc(bend(p.id));

  it.each(['/.well-known/openid-configuration', '/oauth/jwks', '/oauth/userinfo'])(
    'GET %s → 400 invalid_request',
    async (path) => {
      expectOAuthError(await request(t.app).get(`${path}?platform_guid=${g()}`), 400, 'invalid_request');
    },
  );

  it.each(['/oauth/token', '/oauth/introspect', '/oauth/revoke'])(
    'POST %s (body and query) → 400 invalid_request',
    async (path) => {
      expectOAuthError(
        await form(path).send(`platform_guid=${g()}&grant_type=refresh_token&refresh_token=rt_x&token=x`),
        400,
        'invalid_request',
      );
      expectOAuthError(
        await form(`${path}?platform_guid=${g()}`).send('token=x&grant_type=refresh_token'),
        400,
        'invalid_request',
      );
    },
  );

  it.each(['/oauth/authorize', '/oauth/logout', '/account', '/account/signin', '/password/forgot', '/verify-email'])(
    'GET %s → the 400 error page',
    async (path) => {
      html(await request(t.app).get(`${path}?platform_guid=${g()}`).set('Accept', 'text/html'), 400);
    },
  );
});

describe.each(NEAR)('client_id with %s is an unknown client, never a 500', (_label, bend) => {
  const id = () => bend(c.id);

  it('authorize: the 400 error page, no redirect', async () => {
    const res = await request(t.app).get(`/oauth/authorize?${authorizeQuery(p, { ...c, id: id() })}`);
    html(res, 400);
    expect(res.text).toContain('not registered');
  });

  it('token, introspect, revoke: 401 invalid_client (Basic, client_secret_post, none)', async () => {
    const params = `platform_guid=${p.id}&grant_type=refresh_token&refresh_token=rt_x&token=x`;
    for (const path of ['/oauth/token', '/oauth/introspect', '/oauth/revoke']) {
      expectOAuthError(
        await form(path)
          .set('Authorization', basic({ ...c, id: id() }))
          .send(params),
        401,
        'invalid_client',
      );
      expectOAuthError(
        await form(path).send(`${params}&client_id=${enc(id())}&client_secret=${enc(c.secret!)}`),
        401,
        'invalid_client',
      );
    }
    expectOAuthError(await form('/oauth/token').send(`${params}&client_id=${enc(id())}`), 401, 'invalid_client');
  });

  it('logout: the 400 error page', async () => {
    html(await request(t.app).get(`/oauth/logout?platform_guid=${p.id}&client_id=${enc(id())}`), 400);
  });

  it('account page: revoking that app is answered like an unknown app', async () => {
    const csrf = /name="_csrf" value="([^"]+)"/.exec(
      (await signedIn.get(`/account?platform_guid=${p.id}`)).res.text,
    )![1];
    const res = await signedIn.agent
      .post(`/account/apps/revoke?platform_guid=${p.id}`)
      .type('form')
      .send(`_csrf=${enc(csrf)}&account=${u.id}&client_id=${enc(id())}`);
    expect(res.status).toBe(303);
    expect((await signedIn.get(res.headers.location)).res.text).toContain('That app had no access to your account.');
  });

  it('account page: removing that passkey is answered like one already removed', async () => {
    const csrf = /name="_csrf" value="([^"]+)"/.exec(
      (await signedIn.get(`/account?platform_guid=${p.id}`)).res.text,
    )![1];
    const res = await signedIn.agent
      .post(`/account/passkeys/remove?platform_guid=${p.id}`)
      .type('form')
      .send(`_csrf=${enc(csrf)}&account=${u.id}&passkey=${enc(id())}`);
    expect(res.status).toBe(303);
    expect((await signedIn.get(res.headers.location)).res.text).toContain('That passkey was already removed.');
  });
});

describe.each(NEAR)('a picture URL with %s in a user or platform id is 404', (_label, bend) => {
  it('avatars and uploaded pictures', async () => {
    for (const path of [
      `/avatars/${enc(bend(p.id))}/${u.id}.svg`,
      `/avatars/${p.id}/${enc(bend(u.id))}.svg`,
      `/pictures/${enc(bend(p.id))}/${u.id}/1`,
      `/pictures/${p.id}/${enc(bend(u.id))}/1`,
    ]) {
      expectOAuthError(await request(t.app).get(path), 404, 'not_found');
    }
  });
});

describe.each(NEAR)('a signed token whose sub or kid has %s', (_label, bend) => {
  it('authorize: an id_token_hint whose sub is no id of ours is invalid_request, redirected', async () => {
    // A confidential client holds the key of its own ID tokens, so it can sign any sub.
    const hint = await idToken(new TextEncoder().encode(c.secret!), { sub: bend(u.id), aud: c.id });
    for (const prompt of ['none', 'login']) {
      const res = await request(t.app).get(`/oauth/authorize?${authorizeQuery(p, c, { id_token_hint: hint, prompt })}`);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.location).searchParams.get('error')).toBe('invalid_request');
    }
  });

  it('logout: an id_token_hint whose sub is no id of ours is the 400 page', async () => {
    const hint = await idToken(new TextEncoder().encode(c.secret!), { sub: bend(u.id), aud: c.id });
    html(await request(t.app).get(`/oauth/logout?platform_guid=${p.id}&id_token_hint=${hint}`), 400);
  });

  it('userinfo: a forged access token with that kid is 401 invalid_token', async () => {
    const kid = bend(u.id);
    const forged = await new SignJWT({ sub: kid, jti: 'x' })
      .setProtectedHeader({ alg: 'HS512', kid })
      .sign(new Uint8Array(64));
    expectOAuthError(
      await request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${forged}`),
      401,
      'invalid_token',
    );
  });
});

describe('the ids themselves, unbent, still work', () => {
  it('platform, client and user ids as issued', async () => {
    expect((await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`)).status).toBe(200);
    expect((await request(t.app).get(`/oauth/authorize?${authorizeQuery(p, c)}`)).headers.location).toMatch(
      /^\/interaction\//,
    );
    expect((await request(t.app).get(`/avatars/${p.id}/${u.id}.svg`)).status).toBe(200);
  });
});
