// Every hosted page is `Cache-Control: no-store` and carries a CSP form-action; the pages
// whose forms may end at the client allow exactly that client's redirect origin. The browser side
// (Chromium applying form-action to the redirect after a POST) is e2e/form-action.e2e.ts.
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { accountSignIn, authorizeQuery, signInThrough } from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const formAction = (res: request.Response) =>
  /(?:^|;)\s*form-action ([^;]*)/.exec(String(res.headers['content-security-policy']))?.[1];

function expectHostedPage(label: string, res: request.Response, status: number, action = "'self'") {
  expect({
    label,
    status: res.status,
    type: res.type,
    cache: res.headers['cache-control'],
    formAction: formAction(res),
  }).toEqual({ label, status, type: 'text/html', cache: 'no-store', formAction: action });
}

it("the authorization pages: no-store, and form-action 'self' plus the origin of this request's redirect_uri", async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id, {
    redirectUris: ['https://app.example/callback', 'http://127.0.0.1/cb', 'http://[::1]/cb'],
  });
  const u = await buildUser(t.services, p.id);
  const app = "'self' https://app.example";

  const b = browser(t.app);
  const signin = await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
  expectHostedPage('sign-in', signin.res, 200, app);
  const wrong = await b.submit('/signin', { email: u.email, password: 'not the password' });
  expectHostedPage('sign-in again, with an error', wrong.res, 400, app);
  const signup = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { action: 'register' })}`);
  expect(b.pageTitle()).toBe('Create your account');
  expectHostedPage('sign-up', signup.res, 200, app);

  // A native app's loopback redirect (any port, RFC 8252 §7.3): that port's origin; an IPv6 literal
  // cannot be a CSP host source, so its scheme.
  const loopback = await b.get(
    `/oauth/authorize?${authorizeQuery(p, c, { redirect_uri: 'http://127.0.0.1:8080/cb' })}`,
  );
  expectHostedPage('sign-in for a loopback redirect', loopback.res, 200, "'self' http://127.0.0.1:8080");
  const ipv6 = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { redirect_uri: 'http://[::1]:8080/cb' })}`);
  expectHostedPage('sign-in for an IPv6 loopback redirect', ipv6.res, 200, "'self' http:");

  const signedIn = browser(t.app);
  await signedIn.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
  const consent = await signedIn.submit('/signin', { email: u.email, password: TEST_PASSWORD });
  expect(signedIn.pageTitle()).toMatch(/wants to access/);
  expectHostedPage('consent (after the sign-in redirect)', consent.res, 200, app);
  await signedIn.submit('/consent', { decision: 'allow' });
  const chooser = await signedIn.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
  expect(signedIn.pageTitle()).toBe('Choose an account');
  expectHostedPage('chooser', chooser.res, 200, app);
});

it("the account, password, email-verification, logout and error pages: no-store, form-action 'self'", async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id, { postLogoutRedirectUris: ['https://app.example/bye'] });
  const [u1, u2] = [await buildUser(t.services, p.id), await buildUser(t.services, p.id)];
  const q = `platform_guid=${p.id}`;
  const anonymous = browser(t.app);
  const pages: [string, string, number][] = [
    ['account sign-in', `/account/signin?${q}`, 200],
    ['signed out', `/account/signed-out?${q}`, 200],
    ['forgot password', `/password/forgot?${q}`, 200],
    ['forgot password sent', `/password/forgot/sent?${q}`, 200],
    ['reset link not valid', `/password/reset?${q}&token=nope`, 400],
    ['password changed', `/password/reset/done?${q}`, 200],
    ['verification link not valid', `/verify-email?${q}&token=nope`, 400],
    ['logout, nothing signed in', `/oauth/logout?${q}`, 200],
    ['authorize error page', `/oauth/authorize?${q}&client_id=nope`, 400],
    ['lost interaction', '/interaction/7d3c1f52-0d5e-4b7e-9a51-3f0b8c6f2a10', 400],
    ['page not found', '/account/no/such/page', 404],
  ];
  for (const [label, path, status] of pages)
    expectHostedPage(label, await request(t.app).get(path).accept('html'), status);
  const wrongPassword = await anonymous
    .get(`/account/signin?${q}`)
    .then(() => anonymous.submit(`/account/signin?${q}`, { email: u1.email, password: 'nope nope nope' }));
  expectHostedPage('account sign-in again, with an error', wrongPassword.res, 400);

  const b = browser(t.app);
  await signInThrough(b, p, c, u1.email);
  expectHostedPage('account page', (await b.get(`/account?${q}`)).res, 200);
  await accountSignIn(b, p, u2.email);
  const choose = await b.get(`/account/choose?${q}`);
  expect(b.pageTitle()).toBe('Choose an account');
  expectHostedPage('account chooser', choose.res, 200);
  const confirm = await b.get(
    `/oauth/logout?${q}&client_id=${c.id}&post_logout_redirect_uri=${encodeURIComponent('https://app.example/bye')}`,
  );
  expect(b.pageTitle()).toMatch(/^Sign out of/);
  expectHostedPage(
    'logout confirmation (its "Sign out" ends at the app)',
    confirm.res,
    200,
    "'self' https://app.example",
  );
  expectHostedPage('logout confirmation without a redirect', (await b.get(`/oauth/logout?${q}`)).res, 200);
});

it("Back to a finished interaction's page (fetched again, since it is no-store) starts the request over instead of an error", async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  const b = browser(t.app);
  await b.get(`/oauth/authorize?${authorizeQuery(p, c, { state: 'back' })}`);
  const iid = /action="\/interaction\/([^/"]+)\/signin"/.exec(b.html)![1];
  await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
  expect((await b.submit('/consent', { decision: 'allow' })).location).toMatch(
    /^https:\/\/app\.example\/callback\?code=/,
  );

  const back = await b.agent.get(`/interaction/${iid}`);
  expect(back.status).toBe(303);
  expect(back.headers.location).toBe(`/oauth/authorize?${authorizeQuery(p, c, { state: 'back' })}`);
  await b.get(back.headers.location);
  expect(b.pageTitle()).toBe('Choose an account');
  // Another browser cannot use the id: still the plain "expired" page.
  expect((await request(t.app).get(`/interaction/${iid}`)).status).toBe(400);
});

it('leaves what may be cached alone: static files', async () => {
  const res = await request(t.app).get('/static/app.css');
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('public, max-age=3600');
});
