// POST /oauth/authorize answers 303 with the same request as a GET before any session
// work, so a cross-site POST (which arrives without the SameSite=Lax cookie) cannot replace the
// browser's session. The real cross-site case runs in Chromium: e2e/cross-site-authorize.e2e.ts.
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { authorizeQuery, signInThrough } from '../support/account-flows';

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

const postAuthorize = (body: string, path = '/oauth/authorize') => request(t.app).post(path).type('form').send(body);
const setCookies = (res: request.Response) => ([] as string[]).concat(res.headers['set-cookie'] ?? []);

it('a POST without the session cookie leaves a signed-in browser signed in: the GET it is sent to carries the cookie', async () => {
  const { p, c } = await setup();
  const u = await buildUser(t.services, p.id);
  const b = browser(t.app);
  await signInThrough(b, p, c, u.email);

  // The cross-site POST: no cookie, as a browser sends it for a SameSite=Lax session.
  const res = await postAuthorize(authorizeQuery(p, c).toString());
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe(`/oauth/authorize?${authorizeQuery(p, c)}`);
  expect(setCookies(res)).toEqual([]); // nothing that could replace the browser's cookie

  // The browser follows with its cookie: the chooser with its account, not a fresh sign-in page.
  await b.get(res.headers.location);
  expect(b.pageTitle()).toBe('Choose an account');
  expect(b.html).toContain(u.email);
});

it('a POST with the cookie is redirected the same way and touches nothing', async () => {
  const { p, c } = await setup();
  const u = await buildUser(t.services, p.id);
  const b = browser(t.app);
  await signInThrough(b, p, c, u.email);
  const res = await b.agent
    .post('/oauth/authorize')
    .type('form')
    .send(authorizeQuery(p, c, { prompt: 'none' }).toString());
  expect(res.status).toBe(303);
  expect(setCookies(res)).toEqual([]);
  const done = await b.get(res.headers.location);
  expect(new URL(done.location!).searchParams.get('code')).toBeTruthy();
});

it('keeps repeated parameters repeated, so the GET refuses them as it refuses its own', async () => {
  const { p, c } = await setup();
  const res = await postAuthorize(`${authorizeQuery(p, c)}&scope=openid`);
  expect(res.status).toBe(303);
  expect(new URLSearchParams(res.headers.location.split('?')[1]).getAll('scope')).toEqual([
    authorizeQuery(p, c).get('scope'),
    'openid',
  ]);
  const followed = await request(t.app).get(res.headers.location);
  expect(followed.status).toBe(302);
  expect(new URL(followed.headers.location).searchParams.get('error')).toBe('invalid_request');
});

it('takes platform_guid from the query too; a different one in the body is refused at the GET', async () => {
  const { p, c } = await setup();
  const body = authorizeQuery(p, c);
  body.delete('platform_guid');
  const fromQuery = await postAuthorize(body.toString(), `/oauth/authorize?platform_guid=${p.id}`);
  expect(new URLSearchParams(fromQuery.headers.location.split('?')[1]).get('platform_guid')).toBe(p.id);
  expect((await request(t.app).get(fromQuery.headers.location)).headers.location).toMatch(/^\/interaction\//);

  const same = await postAuthorize(authorizeQuery(p, c).toString(), `/oauth/authorize?platform_guid=${p.id}`);
  expect(new URLSearchParams(same.headers.location.split('?')[1]).getAll('platform_guid')).toEqual([p.id]);

  const other = await buildPlatform(t.services);
  const differ = await postAuthorize(authorizeQuery(p, c).toString(), `/oauth/authorize?platform_guid=${other.id}`);
  const refused = await request(t.app).get(differ.headers.location);
  expect(refused.status).toBe(400);
  expect(refused.type).toBe('text/html');
});

it('drops ignored parameters when the URL would be too long (a POST may carry 30 KB), and refuses what still does not fit', async () => {
  const { p, c } = await setup();
  const junk = new URLSearchParams(
    Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`junk${i}`, 'x'.repeat(500)])),
  );
  const res = await postAuthorize(`${authorizeQuery(p, c, { claims_locales: 'de' })}&${junk}`);
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe(`/oauth/authorize?${authorizeQuery(p, c)}`);

  const small = await postAuthorize(`${authorizeQuery(p, c)}&foo=bar`);
  expect(small.headers.location).toBe(`/oauth/authorize?${authorizeQuery(p, c)}&foo=bar`); // kept while it fits

  const huge = await postAuthorize(
    authorizeQuery(p, c, { id_token_hint: 'h'.repeat(8000), state: 's'.repeat(1000) }).toString(),
  );
  expect(huge.status).toBe(400);
  expect(huge.type).toBe('text/html');
  expect(huge.text).toMatch(/too large/);
  expect(setCookies(huge)).toEqual([]);
});
