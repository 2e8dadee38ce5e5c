import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser, type Browser } from '../support/browser';
import { authorizeQuery, exchange, signInThrough } from '../support/account-flows';
import * as clientRepo from '../../src/repositories/client.repository';
import * as sessionClients from '../../src/repositories/session-client.repository';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const AFTER = 'https://app.example/signed-out';
const FC = 'https://app.example/frontchannel?tenant=7';
const unescape = (s: string) => s.replace(/&amp;/g, '&').replace(/&#34;/g, '"').replace(/&#39;/g, "'");
const logout = (p: { id: string }, params: Record<string, string>) =>
  `/oauth/logout?${new URLSearchParams({ platform_guid: p.id, ...params })}`;

async function tenant(frontchannelLogoutUri: string | null = FC) {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const c = await buildClient(t.services, p.id, { postLogoutRedirectUris: [AFTER] });
  if (frontchannelLogoutUri) await clientRepo.update(t.services.deps.db, p.id, c.id, { frontchannelLogoutUri });
  const u = await buildUser(t.services, p.id, { email: `fcl-${Math.random().toString(36).slice(2, 10)}@example.com` });
  return { p, c, u };
}

/** The iframes of the page: src (unescaped) and title. */
const iframes = (html: string) =>
  [...html.matchAll(/<iframe src="([^"]*)" title="([^"]*)"[^>]*hidden><\/iframe>/g)].map((m) => ({
    src: unescape(m[1]),
    title: m[2],
  }));
const frameSrc = (res: request.Response) =>
  /(?:^|;)frame-src ([^;]*)/.exec(String(res.headers['content-security-policy']))?.[1];

/** The sid this browser's sign-in of the user was recorded with (the ID token's sid). */
async function sidOf(p: { id: string }, userId: string) {
  const rows = await sessionClients.listByUser(t.services.deps.db, p.id, userId);
  expect(new Set(rows.map((r) => r.sid)).size).toBe(1);
  return rows[0].sid;
}

async function signedIn(
  p: { id: string },
  c: Parameters<typeof signInThrough>[2],
  email: string,
): Promise<{ b: Browser; idToken: string }> {
  const b = browser(t.app);
  const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, email));
  return { b, idToken: tokens.id_token };
}

describe('Front-Channel Logout 1.0', () => {
  it("RP-initiated logout with id_token_hint and no redirect: the signed-out page frames the app's URI with iss and sid; CSP frame-src allows its origin", async () => {
    const { p, c, u } = await tenant();
    const { b, idToken } = await signedIn(p, c, u.email);
    const sid = await sidOf(p, u.id);
    const res = await b.get(logout(p, { id_token_hint: idToken }));
    expect(res.res.status).toBe(200);
    expect(b.pageTitle()).toBe('You are signed out');
    const frames = iframes(b.html);
    expect(frames).toHaveLength(1);
    const src = new URL(frames[0].src);
    expect(`${src.origin}${src.pathname}`).toBe('https://app.example/frontchannel');
    expect(Object.fromEntries(src.searchParams)).toEqual({ tenant: '7', iss: 'http://issuer.test', sid });
    expect(frames[0].title).toBeTruthy();
    expect(frameSrc(res.res)).toBe('https://app.example');
    expect(res.res.headers['content-security-policy']).toContain("script-src 'none'");
    // Signed out for real: prompt=none now needs a sign-in.
    const none = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(none.location!).searchParams.get('error')).toBe('login_required');
  });

  it('with a post_logout_redirect_uri: an intermediate page with the iframe, a meta refresh to the URI with state and a Continue link', async () => {
    const { p, c, u } = await tenant();
    const { b, idToken } = await signedIn(p, c, u.email);
    const sid = await sidOf(p, u.id);
    const res = await b.get(logout(p, { id_token_hint: idToken, post_logout_redirect_uri: AFTER, state: 'bye-1' }));
    expect(res.res.status).toBe(200);
    expect(res.location).toBeUndefined();
    expect(res.res.headers['cache-control']).toBe('no-store');
    expect(b.pageTitle()).toBe('Signing you out of 1 app…');
    expect(unescape(b.html)).toContain(`<meta http-equiv="refresh" content="0;url=${AFTER}?state=bye-1">`);
    expect(unescape(b.html)).toContain(`<a href="${AFTER}?state=bye-1"`);
    expect(iframes(b.html).map((f) => new URL(f.src).searchParams.get('sid'))).toEqual([sid]);
    expect(frameSrc(res.res)).toBe('https://app.example');
  });

  it('the confirm path ("Sign out" without a hint) frames every signed-out account\'s apps, then goes on to the URI', async () => {
    const { p, c, u } = await tenant();
    const { b } = await signedIn(p, c, u.email);
    const sid = await sidOf(p, u.id);
    await b.get(logout(p, { client_id: c.id, post_logout_redirect_uri: AFTER, state: 'st' }));
    expect(b.pageTitle()).toBe('Sign out of Acme Travel?');
    expect(iframes(b.html)).toEqual([]); // nothing is sent before the user confirms
    const done = await b.submit(`/oauth/logout/confirm?platform_guid=${p.id}`, {
      decision: 'logout',
      client_id: c.id,
      post_logout_redirect_uri: AFTER,
      state: 'st',
    });
    expect(done.res.status).toBe(200);
    expect(unescape(b.html)).toContain(`content="0;url=${AFTER}?state=st"`);
    expect(iframes(b.html).map((f) => new URL(f.src).searchParams.get('sid'))).toEqual([sid]);
    expect(frameSrc(done.res)).toBe('https://app.example');
  });

  it('frames only the apps with a frontchannel_logout_uri, one per app this sign-in reached', async () => {
    const { p, c, u } = await tenant('http://127.0.0.1:4567/fc');
    const other = await buildClient(t.services, p.id, { postLogoutRedirectUris: [AFTER] }); // no front-channel URI
    const third = await buildClient(t.services, p.id, { redirectUris: ['https://third.example/cb'] });
    await clientRepo.update(t.services.deps.db, p.id, third.id, {
      frontchannelLogoutUri: 'https://third.example/logout',
    });
    const { b, idToken } = await signedIn(p, c, u.email);
    await signInThrough(b, p, other, u.email);
    await signInThrough(b, p, third, u.email);
    const res = await b.get(logout(p, { id_token_hint: idToken, post_logout_redirect_uri: AFTER }));
    expect(b.pageTitle()).toBe('Signing you out of 2 apps…');
    expect(
      iframes(b.html)
        .map((f) => new URL(f.src).origin)
        .sort(),
    ).toEqual(['http://127.0.0.1:4567', 'https://third.example']);
    expect(frameSrc(res.res)?.split(' ').sort()).toEqual(['http://127.0.0.1:4567', 'https://third.example']);
  });

  it('without a frontchannel_logout_uri nothing changes: a 302 to the URI, no frame-src', async () => {
    const { p, c, u } = await tenant(null);
    const { b, idToken } = await signedIn(p, c, u.email);
    const res = await b.get(logout(p, { id_token_hint: idToken, post_logout_redirect_uri: AFTER, state: 'x' }));
    expect(res.res.status).toBe(302);
    expect(res.location).toBe(`${AFTER}?state=x`);
    expect(frameSrc(res.res)).toBeUndefined();
  });

  it('a browser that is not signed in frames nothing (no app of this browser to sign out of)', async () => {
    const { p, c, u } = await tenant();
    const { idToken } = await signedIn(p, c, u.email);
    const res = await request(t.app).get(logout(p, { id_token_hint: idToken, post_logout_redirect_uri: AFTER }));
    expect(res.status).toBe(302);
    expect(res.text).not.toContain('<iframe');
  });

  it('the account page\'s "Sign out": the signed-out page frames the app once (not on a reload)', async () => {
    const { p, c, u } = await tenant();
    const { b } = await signedIn(p, c, u.email);
    const sid = await sidOf(p, u.id);
    await b.get(`/account?platform_guid=${p.id}`);
    const done = await b.submit(`/account/signout?platform_guid=${p.id}`, { account: u.id });
    expect(b.pageTitle()).toBe('You are signed out');
    expect(iframes(b.html).map((f) => new URL(f.src).searchParams.get('sid'))).toEqual([sid]);
    expect(frameSrc(done.res)).toBe('https://app.example');
    const again = await b.get(`/account/signed-out?platform_guid=${p.id}`);
    expect(iframes(b.html)).toEqual([]);
    expect(frameSrc(again.res)).toBeUndefined();
  });

  it('"Sign out everywhere" frames this browser\'s apps on the signed-out page (other browsers: back channel only)', async () => {
    const { p, c, u } = await tenant();
    const { b } = await signedIn(p, c, u.email);
    const sid = await sidOf(p, u.id);
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    const done = await b.submit(`/account/signout-everywhere?platform_guid=${p.id}`, { account: u.id });
    expect(b.pageTitle()).toBe('You are signed out');
    expect(iframes(b.html).map((f) => new URL(f.src).searchParams.get('sid'))).toEqual([sid]);
    expect(frameSrc(done.res)).toBe('https://app.example');
  });

  it('the chooser\'s "Sign out" frames the account\'s apps on the chooser that follows', async () => {
    const { p, c, u } = await tenant();
    const { b } = await signedIn(p, c, u.email);
    const sid = await sidOf(p, u.id);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'select_account' })}`);
    expect(b.pageTitle()).toBe('Choose an account');
    const res = await b.submit('/chooser', { signout: u.id });
    expect(res.res.status).toBe(200);
    expect(iframes(b.html).map((f) => new URL(f.src).searchParams.get('sid'))).toEqual([sid]);
    expect(frameSrc(res.res)).toBe('https://app.example');
  });
});

describe('frontchannelLogout.urlsFor', () => {
  it("uses the platform's issuer (a standard platform's is BASE_URL/platforms/{guid}) and each row's sid", async () => {
    const { platform: p } = await t.services.platforms.createPlatform('Standard FC', undefined, 'standard');
    const c = await buildClient(t.services, p.id);
    await clientRepo.update(t.services.deps.db, p.id, c.id, { frontchannelLogoutUri: 'https://app.example/fc#frag' });
    const u = await buildUser(t.services, p.id);
    await sessionClients.record(
      t.services.deps.db,
      { platformId: p.id, userId: u.id, browserSessionId: 'browser-1', clientId: c.id, sid: 'sid-1' },
      new Date(),
    );
    await sessionClients.record(
      t.services.deps.db,
      { platformId: p.id, userId: u.id, browserSessionId: 'browser-2', clientId: c.id, sid: 'sid-2' },
      new Date(),
    );
    expect(await t.services.frontchannelLogout.urlsFor(p, [u.id], 'browser-1')).toEqual([
      `https://app.example/fc?iss=${encodeURIComponent(`http://issuer.test/platforms/${p.id}`)}&sid=sid-1`,
    ]);
    expect(await t.services.frontchannelLogout.urlsFor(p, [u.id], 'browser-3')).toEqual([]);
  });
});
