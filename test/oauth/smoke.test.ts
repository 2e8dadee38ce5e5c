import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

it('runs the code flow through the hosted pages', async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  const b = browser(t.app);
  const q = new URLSearchParams({
    platform_guid: p.id,
    response_type: 'code',
    client_id: c.id,
    redirect_uri: c.redirectUris[0],
    scope: 'openid profile email offline_access',
    state: 'xyz',
    nonce: 'n1',
  });
  let step = await b.get(`/oauth/authorize?${q}`);
  expect(step.res.status).toBe(200);
  expect(b.pageTitle()).toBe('Sign in');
  await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
  expect(b.pageTitle()).toMatch(/wants to access your account/);
  step = await b.submit('/consent', { decision: 'allow' });
  const redirect = new URL(step.location!);
  expect(redirect.searchParams.get('state')).toBe('xyz');
  const code = redirect.searchParams.get('code')!;
  const tokenRes = await request(t.app)
    .post('/oauth/token')
    .auth(c.id, c.secret!)
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id });
  expect(tokenRes.status).toBe(200);
  expect(tokenRes.body.refresh_token).toMatch(/^rt_/);
  const ui = await request(t.app)
    .get(`/oauth/userinfo?platform_guid=${p.id}`)
    .set('Authorization', `Bearer ${tokenRes.body.access_token}`);
  expect(ui.status).toBe(200);
  expect(ui.body.email).toBe(u.email);
});
