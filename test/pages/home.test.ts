import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { buildTestApp, TEST_MASTER_KEY } from '../helpers';
import { browser } from '../support/browser';
import { createDemo } from '../../src/cli/demo-seed';

// GET / and the demo client's own callback page (issue 11 §9).
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
      await createDemo(t.services, t.services.deps.logger);
      const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-client.json'), 'utf8'));
      expect(demo.redirect_uri).toBe(`http://127.0.0.1:${t.config.port}/dev/callback`);

      const b = browser(t.app);
      await b.get('/');
      const signIn = /href="(\/oauth\/authorize\?[^"]+)">Sign in to the demo app/.exec(b.html)![1].replace(/&amp;/g, '&');
      expect(b.html).toContain(`href="${demo.account_page}"`);
      expect(b.html).toContain('href="/dev/outbox"');

      await b.get(`${signIn}&action=register`);
      await b.submit('/signup', { email: 'demo-user@example.com', given_name: 'Demo', family_name: 'User', birthdate: '1990-01-01', phone_number: '', password: 'a long pass phrase' });
      const done = await b.submit('/consent', { decision: 'allow' });
      const callback = new URL(done.location!);
      expect(`${callback.origin}${callback.pathname}`).toBe(demo.redirect_uri);

      await b.get(`${callback.pathname}${callback.search}`);
      const code = callback.searchParams.get('code')!;
      expect(b.pageTitle()).toBe('Signed in: here is the code');
      expect(b.html).toContain(`-d code=${code}`);
      expect(b.html).not.toContain(demo.client_secret);

      const tokens = await request(t.app).post('/oauth/token').auth(demo.client_id, demo.client_secret).type('form')
        .send({ grant_type: 'authorization_code', code, redirect_uri: demo.redirect_uri, platform_guid: demo.platform_guid });
      expect(tokens.status).toBe(200);
      expect(tokens.body.refresh_token).toMatch(/^rt_/);
    } finally {
      await t.close();
    }
  });

  it('shows no demo and serves no callback page in production', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-home-'));
    fs.writeFileSync(path.join(dataDir, 'demo-client.json'), JSON.stringify({ platform_guid: 'p', client_id: 'c', redirect_uri: 'r', discovery: 'd', account_page: 'a' }));
    const t = await buildTestApp({ NODE_ENV: 'production', BASE_URL: 'https://id.example.com', SMTP_URL: 'smtp://127.0.0.1:1', MASTER_KEY: TEST_MASTER_KEY, DATA_DIR: dataDir });
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
