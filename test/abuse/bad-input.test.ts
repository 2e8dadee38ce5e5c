import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform } from '../factories';
import { browser } from '../support/browser';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function setup() {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  return { p, c };
}
const form = (path: string) => request(t.app).post(path).type('form');
const ENDPOINTS = ['/oauth/token', '/oauth/introspect', '/oauth/revoke'];

describe('body size and parameter limits', () => {
  it.each(ENDPOINTS)('%s: a body over 32 kB is 413 invalid_request JSON', async (path) => {
    const { p } = await setup();
    const res = await form(path).send(`platform_guid=${p.id}&token=${'A'.repeat(40_000)}`);
    expectOAuthError(res, 413, 'invalid_request');
  });

  it.each(ENDPOINTS)('%s: more than 100 parameters is 413 invalid_request JSON', async (path) => {
    const res = await form(path).send(Array.from({ length: 150 }, (_, i) => `p${i}=1`).join('&'));
    expectOAuthError(res, 413, 'invalid_request');
  });

  it('refuses overlong parameter values with invalid_request', async () => {
    const { p, c } = await setup();
    const code = await form('/oauth/token')
      .auth(c.id, c.secret!)
      .send({
        platform_guid: p.id,
        grant_type: 'authorization_code',
        code: 'x'.repeat(600),
        redirect_uri: c.redirectUris[0],
      });
    expectOAuthError(code, 400, 'invalid_request');
    expect(code.body.error_description).toBe('invalid parameter "code": must be at most 512 characters');
    const token = await form('/oauth/introspect')
      .auth(c.id, c.secret!)
      .send({ platform_guid: p.id, token: 'x'.repeat(9000) });
    expectOAuthError(token, 400, 'invalid_request');
    const state = await request(t.app).get(
      `/oauth/authorize?${new URLSearchParams({ platform_guid: p.id, client_id: c.id, redirect_uri: c.redirectUris[0], response_type: 'code', scope: 'openid', state: 's'.repeat(2000) })}`,
    );
    expect(new URL(state.headers.location).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('repeated parameters are invalid_request', () => {
  it.each([
    [
      'token: grant_type',
      '/oauth/token',
      (g: string) => `platform_guid=${g}&grant_type=refresh_token&grant_type=refresh_token&refresh_token=x`,
    ],
    [
      'token: refresh_token',
      '/oauth/token',
      (g: string) => `platform_guid=${g}&grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=c`,
    ],
    [
      'token: platform_guid',
      '/oauth/token',
      (g: string) => `platform_guid=${g}&platform_guid=${g}&grant_type=refresh_token`,
    ],
    ['introspect: token', '/oauth/introspect', (g: string) => `platform_guid=${g}&token=a&token=b`],
    ['revoke: token', '/oauth/revoke', (g: string) => `platform_guid=${g}&token=a&token=b`],
  ])('%s', async (_label, path, body) => {
    const { p, c } = await setup();
    const res = await form(path).auth(c.id, c.secret!).send(body(p.id));
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toMatch(/must not be repeated/);
  });

  it.each(['/.well-known/openid-configuration', '/oauth/jwks'])('%s: platform_guid twice', async (path) => {
    const { p } = await setup();
    expectOAuthError(
      await request(t.app).get(`${path}?platform_guid=${p.id}&platform_guid=${p.id}`),
      400,
      'invalid_request',
    );
  });

  it('hosted forms: a field twice is refused before anything else', async () => {
    const res = await form('/interaction/x/signin')
      .set('Accept', 'text/html')
      .send('email=a%40b.co&email=c%40d.co&password=x');
    expect(res.status).toBe(400);
    expect(res.type).toBe('text/html');
    expect(res.text).toMatch(/must not be repeated/);
  });
});

describe('wrong content types are invalid_request', () => {
  it.each([
    ['JSON', 'application/json', '{"grant_type":"refresh_token"}'],
    ['plain text', 'text/plain', 'grant_type=refresh_token'],
    [
      'multipart',
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nrefresh_token\r\n--x--',
    ],
    ['XML', 'application/xml', '<grant_type>refresh_token</grant_type>'],
    ['an unknown charset', 'application/x-www-form-urlencoded; charset=klingon', 'grant_type=refresh_token'],
  ])('%s', async (_label, type, body) => {
    const { p } = await setup();
    for (const path of ENDPOINTS) {
      const res = await request(t.app).post(`${path}?platform_guid=${p.id}`).set('Content-Type', type).send(body);
      expectOAuthError(res, 400, 'invalid_request');
    }
  });

  it('no body at all', async () => {
    const { p } = await setup();
    for (const path of ENDPOINTS)
      expectOAuthError(await request(t.app).post(`${path}?platform_guid=${p.id}`), 400, 'invalid_request');
  });

  it('an unknown Content-Encoding', async () => {
    const res = await form('/oauth/token').set('Content-Encoding', 'garbage').send('grant_type=refresh_token');
    expect(res.status).toBeLessThan(500);
    expect(res.body.error).toBe('invalid_request');
  });

  it('hosted forms refuse a non-form body', async () => {
    const res = await request(t.app)
      .post('/interaction/x/signin')
      .set('Accept', 'text/html')
      .set('Content-Type', 'application/json')
      .send('{"email":"a@b.co"}');
    expect([res.status, res.type]).toEqual([400, 'text/html']);
  });
});

describe('invalid UTF-8 and hostile values', () => {
  it.each(['%C3%28', '%FF', '%ED%A0%80', '%', '%zz'])('platform_guid=%s is invalid_request, not a 5xx', async (raw) => {
    for (const path of ['/.well-known/openid-configuration', '/oauth/jwks']) {
      expectOAuthError(await request(t.app).get(`${path}?platform_guid=${raw}`), 400, 'invalid_request');
    }
    expectOAuthError(await form('/oauth/revoke').send(`platform_guid=${raw}&token=${raw}`), 400, 'invalid_request');
  });

  it('an invalid escape in the path is a 400, not a 5xx', async () => {
    for (const path of ['/interaction/%FF', '/interaction/%E0%A4%A', '/avatars/%C3%28/x.svg', '/oauth/%']) {
      const res = await request(t.app).get(path);
      expect([path, res.status < 500]).toEqual([path, true]);
    }
  });

  it('never echoes markup into the HTML pages', async () => {
    const { p, c } = await setup();
    const hostile = '"><script>alert(1)</script>';
    const pages = [
      await request(t.app).get(`/oauth/authorize?platform_guid=${encodeURIComponent(hostile)}`),
      await request(t.app).get(`/oauth/authorize?platform_guid=${p.id}&client_id=${encodeURIComponent(hostile)}`),
      await request(t.app).get(
        `/oauth/authorize?${new URLSearchParams({ platform_guid: p.id, client_id: c.id, redirect_uri: hostile })}`,
      ),
      await request(t.app)
        .get(`/account/nothing/${encodeURIComponent(hostile)}`)
        .set('Accept', 'text/html'), // the 404 page
    ];
    for (const res of pages) {
      expect(res.type).toBe('text/html');
      expect(res.text).not.toContain('<script>alert(1)</script>');
    }
  });

  it('a typed email full of markup is escaped when the sign-in page comes back', async () => {
    const { p, c } = await setup();
    const b = browser(t.app);
    await b.get(
      `/oauth/authorize?${new URLSearchParams({ platform_guid: p.id, client_id: c.id, redirect_uri: c.redirectUris[0], response_type: 'code', scope: 'openid' })}`,
    );
    const back = await b.submit('/signin', { email: `"><script>alert(1)</script>' OR 1=1--`, password: 'x' });
    expect(back.res.status).toBe(400);
    expect(back.res.text).not.toContain('<script>alert(1)</script>');
    expect(back.res.text).not.toContain("' OR 1=1--");
    expect(back.res.text).toContain('&#34;&gt;&lt;script&gt;');
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    '/interaction/%s with a live session is the expired-page, not a 5xx',
    async (iid) => {
      const { p, c } = await setup();
      const start = await request(t.app).get(
        `/oauth/authorize?${new URLSearchParams({ platform_guid: p.id, client_id: c.id, redirect_uri: c.redirectUris[0], response_type: 'code', scope: 'openid' })}`,
      );
      const cookie = String(start.headers['set-cookie']?.[0]).split(';')[0];
      for (const req of [
        request(t.app).get(`/interaction/${iid}`),
        request(t.app).head(`/interaction/${iid}`),
        form(`/interaction/${iid}/signin`).send('email=a%40b.co'),
      ]) {
        const res = await req.set('Cookie', cookie).set('Accept', 'text/html');
        expect(res.status).toBe(400);
      }
    },
  );
});
