import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { buildTestApp, TEST_MASTER_KEY } from '../helpers';
import { browser } from '../support/browser';
import { createDemo } from '../../src/cli/demo-seed';

// GET / and the demo client's own callback page.
describe('the home page and the development demo', () => {
  it('says what the server is, with no demo links when there is no demo', async () => {
    const t = await buildTestApp({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-home-')) });
    try {
      const res = await request(t.app).get('/').expect(200);
      expect(res.headers['cache-control']).toMatch(/no-store/);
      expect(res.text).toContain('A self-hosted OpenID Connect identity provider.');
      expect(res.text).toContain('http://issuer.test/.well-known/openid-configuration?platform_guid=');
      expect(res.text).not.toContain('Sign in to the demo app');
    } finally {
      await t.close();
    }
  });

  it('links the demo sign-in, which ends on a provider page showing the code, and the code exchanges', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-home-'));
    const t = await buildTestApp({ DATA_DIR: dataDir });
    try {
      await createDemo(t.services, t.config, t.services.deps.logger);
      const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-client.json'), 'utf8'));
      expect(demo.redirect_uri).toBe(`http://127.0.0.1:${t.config.port}/dev/callback`);

      const b = browser(t.app);
      await b.get('/');
      const signIn = /href="(\/oauth\/authorize\?[^"]+)">Sign in to the demo app/
        .exec(b.html)![1]
        .replace(/&amp;/g, '&');
      expect(b.html).toContain(`href="${demo.account_page}"`);
      expect(b.html).toContain('href="/dev/outbox"');

      await b.get(`${signIn}&action=register`);
      await b.submit('/signup', {
        email: 'demo-user@example.com',
        given_name: 'Demo',
        family_name: 'User',
        birthdate: '1990-01-01',
        phone_number: '',
        password: 'a long pass phrase',
      });
      const done = await b.submit('/consent', { decision: 'allow' });
      const callback = new URL(done.location!);
      expect(`${callback.origin}${callback.pathname}`).toBe(demo.redirect_uri);

      await b.get(`${callback.pathname}${callback.search}`);
      const code = callback.searchParams.get('code')!;
      expect(b.pageTitle()).toBe('Signed in: here is the code');
      expect(b.html).toContain(`-d code=${code}`);
      expect(b.html).not.toContain(demo.client_secret);

      const tokens = await request(t.app)
        .post('/oauth/token')
        .auth(demo.client_id, demo.client_secret)
        .type('form')
        .send({
          grant_type: 'authorization_code',
          code,
          redirect_uri: demo.redirect_uri,
          platform_guid: demo.platform_guid,
        });
      expect(tokens.status).toBe(200);
      expect(tokens.body.refresh_token).toMatch(/^rt_/);
    } finally {
      await t.close();
    }
  });

  it('shows no demo and serves no callback page in production', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-home-'));
    fs.writeFileSync(
      path.join(dataDir, 'demo-client.json'),
      JSON.stringify({ platform_guid: 'p', client_id: 'c', redirect_uri: 'r', discovery: 'd', account_page: 'a' }),
    );
    const t = await buildTestApp({
      NODE_ENV: 'production',
      BASE_URL: 'https://id.example.com',
      SMTP_URL: 'smtp://127.0.0.1:1',
      MASTER_KEY: TEST_MASTER_KEY,
      DATA_DIR: dataDir,
    });
    try {
      const home = await request(t.app).get('/').expect(200);
      expect(home.text).toContain('Latchkey');
      expect(home.text).not.toContain('Sign in to the demo app');
      expect((await request(t.app).get('/dev/callback?code=x').set('Accept', 'text/html')).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});

// `npm start` in development: BASE_URL http://localhost:3000, while the demo client's redirect URI
// must name the loopback IP (RFC 8252 §8.3). A page on 127.0.0.1 would have its own session cookie,
// so every hosted page opened there goes to the same path on BASE_URL's host.
describe('one host for the pages in development', () => {
  const BASE = 'http://localhost:3000';
  const OTHER_HOST = '127.0.0.1:3000';
  let t: Awaited<ReturnType<typeof buildTestApp>>;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-home-'));
    t = await buildTestApp({ NODE_ENV: 'development', BASE_URL: BASE, PORT: '3000', DATA_DIR: dataDir });
  });
  afterAll(() => t.close());

  it.each([
    '/',
    '/dev/callback?code=abc&state=demo',
    '/dev/outbox',
    '/account?platform_guid=p&section=security',
    '/account/signin?platform_guid=p',
    '/oauth/authorize?client_id=c&state=s',
    '/oauth/logout?client_id=c',
    '/interaction/abc',
    '/password/forgot?platform_guid=p',
    '/verify-email?platform_guid=p&token=x',
    '/platforms/p/upstream/callback?code=c&state=s',
  ])("GET and HEAD %s on 127.0.0.1 go to the same path and query on BASE_URL's host", async (pathAndQuery) => {
    for (const method of ['get', 'head'] as const) {
      const res = await request(t.app)[method](pathAndQuery).set('Host', OTHER_HOST);
      expect({ method, status: res.status, location: res.headers.location }).toEqual({
        method,
        status: 302,
        location: `${BASE}${pathAndQuery}`,
      });
    }
  });

  it('the other loopback names of this listener go there too: [::1], 127.0.0.2, a *.localhost name', async () => {
    for (const host of ['[::1]:3000', '127.0.0.2:3000', 'app.localhost:3000']) {
      const res = await request(t.app).get('/account?platform_guid=p').set('Host', host);
      expect({ host, status: res.status, location: res.headers.location }).toEqual({
        host,
        status: 302,
        location: `${BASE}/account?platform_guid=p`,
      });
    }
  });

  it("leaves BASE_URL's own host, other addresses and ports (a proxy, the LAN), the API endpoints and form posts alone", async () => {
    expect((await request(t.app).get('/').set('Host', 'localhost:3000')).status).toBe(200);
    // A proxy on another port, or one that rewrites Host, would be sent round in a loop; a LAN address is another machine's localhost.
    for (const host of ['127.0.0.1:8080', '192.0.2.10:3000', 'dev.example.com'])
      expect((await request(t.app).get('/').set('Host', host)).status).toBe(200);
    const p = await t.services.platforms.createPlatform('Elsewhere');
    const discovery = await request(t.app)
      .get(`/.well-known/openid-configuration?platform_guid=${p.platform.id}`)
      .set('Host', OTHER_HOST);
    expect(discovery.status).toBe(200);
    expect(discovery.body.issuer).toContain(BASE);
    expect((await request(t.app).get('/readyz').set('Host', OTHER_HOST)).status).toBe(200);
    const token = await request(t.app)
      .post('/oauth/token')
      .set('Host', OTHER_HOST)
      .type('form')
      .send({ grant_type: 'authorization_code', platform_guid: p.platform.id });
    expect(token.status).not.toBe(302);
  });

  it("the demo sign-in ends on a code page on BASE_URL's host, whose links stay there", async () => {
    await createDemo(t.services, t.config, t.services.deps.logger);
    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-client.json'), 'utf8'));
    const b = browser(t.app);
    b.agent.set('Host', 'localhost:3000'); // the browser opened http://localhost:3000/ (README)
    await b.get('/');
    const signIn = /href="(\/oauth\/authorize\?[^"]+)">Sign in to the demo app/.exec(b.html)![1].replace(/&amp;/g, '&');
    await b.get(`${signIn}&action=register`);
    await b.submit('/signup', {
      email: 'demo-host@example.com',
      given_name: 'Demo',
      family_name: 'User',
      birthdate: '1990-01-01',
      phone_number: '',
      password: 'a long pass phrase',
    });
    const done = await b.submit('/consent', { decision: 'allow' });
    const callback = new URL(done.location!);
    expect(`${callback.origin}${callback.pathname}`).toBe(demo.redirect_uri); // http://127.0.0.1:3000/dev/callback

    // The browser follows the redirect to 127.0.0.1, and from there back to localhost.
    const onLoopback = await request(t.app).get(`${callback.pathname}${callback.search}`).set('Host', callback.host);
    expect(onLoopback.status).toBe(302);
    expect(onLoopback.headers.location).toBe(`${BASE}${callback.pathname}${callback.search}`);
    await b.get(`${callback.pathname}${callback.search}`);
    expect(b.pageTitle()).toBe('Signed in: here is the code');
    expect(b.html).toContain('href="/">Back to the home page');

    // The next sign-in on this browser offers the account just used (one session, one cookie).
    await b.get(`${signIn}&prompt=select_account`);
    expect(b.pageTitle()).toBe('Choose an account');
    expect(b.html).toContain('demo-host@example.com');
    // The post-logout redirect URI (http://127.0.0.1:3000/) lands on the home page of BASE_URL's host too.
    const afterLogout = new URL(demo.post_logout_redirect_uri);
    const home = await request(t.app).get(afterLogout.pathname).set('Host', afterLogout.host);
    expect(home.headers.location).toBe(`${BASE}/`);
  });
});
