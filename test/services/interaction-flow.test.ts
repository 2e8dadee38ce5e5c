import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import type { BrowserAccounts, KnownAccount } from '../../src/domain/interaction';

// The interaction service on its own: named transitions over a browser's accounts, each
// returning the next step. The HTTP suites (test/pages, e2e) cover the same flows through pages.
type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

/** The browser side kept in memory, as the session keeps it (src/http/session/browser-session.ts). */
function memoryBrowser(): BrowserAccounts {
  let accounts: KnownAccount[] = [];
  return {
    list: () => accounts,
    id: () => 'browser-under-test',
    async signedIn(user, authTime, amr) {
      accounts = [
        { userId: user.id, email: user.email, authTime, amr },
        ...accounts.filter((a) => a.userId !== user.id),
      ];
    },
    signedOut(userId) {
      accounts = accounts.map((a) => (a.userId === userId ? { ...a, authTime: null } : a));
    },
    forget(userId) {
      accounts = accounts.filter((a) => a.userId !== userId);
    },
  };
}

async function setup(params: Record<string, string> = {}) {
  const s = t.services;
  const platform = await buildPlatform(s);
  const client = await buildClient(s, platform.id);
  const user = await buildUser(s, platform.id);
  const request = async (more: Record<string, string> = {}) =>
    s.authorize.validate(platform, client, {
      response_type: 'code',
      client_id: client.id,
      redirect_uri: client.redirectUris[0],
      scope: 'openid email',
      ...params,
      ...more,
    });
  return { s, flow: s.interaction, platform, client, user, request };
}

const source = '203.0.113.7';

describe('interaction service', () => {
  it('signs in with a password, asks consent once, then completes with the auth_time', async () => {
    const { flow, user, request } = await setup();
    const browser = memoryBrowser();
    const ar = await request();
    const at = await flow.current(ar, browser);
    expect(at).toEqual({ kind: 'signin', email: undefined, emailLocked: false });
    if (at.kind !== 'signin') throw new Error('unreachable');

    const wrong = await flow.passwordSubmitted(ar, browser, at, { email: user.email, password: 'not it' }, source);
    expect(wrong).toMatchObject({
      kind: 'refused',
      status: 400,
      error: 'signin:errors.incorrectPassword',
      step: { kind: 'signin', email: user.email },
    });
    const empty = await flow.passwordSubmitted(ar, browser, at, { email: '', password: '' }, source);
    expect(empty).toMatchObject({ kind: 'refused', status: 400, error: 'signin:errors.missingCredentials' });

    const consent = await flow.passwordSubmitted(
      ar,
      browser,
      at,
      { email: user.email.toUpperCase(), password: TEST_PASSWORD },
      source,
    );
    expect(consent).toEqual({ kind: 'consent', user: { id: user.id, email: user.email } });
    expect(browser.list()).toEqual([expect.objectContaining({ userId: user.id, authTime: ar.authenticatedAt })]);
    if (consent.kind !== 'consent') throw new Error('unreachable');

    const done = await flow.consentGiven(ar, browser, consent);
    expect(done).toMatchObject({ kind: 'complete', user: { id: user.id }, authTime: ar.authenticatedAt });

    // The next request of this browser: the chooser, then straight on (consent remembered).
    const again = await request();
    expect(await flow.current(again, browser)).toEqual({ kind: 'chooser' });
    expect(await flow.pickAccount(again, browser, user.id)).toMatchObject({ kind: 'complete', user: { id: user.id } });
  });

  it('the chooser: another account, sign out one (listed, signed out), forget a signed-out one', async () => {
    const { flow, user, request } = await setup();
    const browser = memoryBrowser();
    await browser.signedIn(user, 1_700_000_000, ['pwd']);
    const ar = await request();
    expect(await flow.useAnotherAccount(ar, browser)).toEqual({ kind: 'signin', email: undefined, emailLocked: false });
    flow.switchForm(ar, 'chooser');
    expect(await flow.current(ar, browser)).toEqual({ kind: 'chooser' });

    expect(await flow.signOutAccount(ar, browser, user.id)).toEqual({ kind: 'chooser' });
    expect(browser.list()).toEqual([expect.objectContaining({ userId: user.id, authTime: null })]);
    expect(await flow.pickAccount(ar, browser, user.id)).toEqual({
      kind: 'signin',
      email: user.email,
      emailLocked: false,
    });
    flow.switchForm(ar, 'chooser');
    expect(await flow.signOutAccount(ar, browser, user.id)).toEqual({
      kind: 'signin',
      email: undefined,
      emailLocked: false,
    });
    expect(browser.list()).toEqual([]);
  });

  it('prompt=none answers with the error a page would have needed', async () => {
    const { flow, user, request } = await setup({ prompt: 'none' });
    const browser = memoryBrowser();
    expect(await flow.current(await request(), browser)).toMatchObject({ kind: 'error', code: 'login_required' });
    await browser.signedIn(user, Math.floor(Date.now() / 1000), ['pwd']);
    expect(await flow.current(await request(), browser)).toMatchObject({ kind: 'error', code: 'consent_required' });
    expect(flow.consentDenied()).toMatchObject({ kind: 'error', code: 'access_denied' });
  });

  it('a login_hint pins the email: sign-up for a new address, refused for another one', async () => {
    const { flow, platform, request } = await setup();
    const browser = memoryBrowser();
    const ar = await request({ login_hint: 'new-person@example.com' });
    const at = await flow.current(ar, browser);
    expect(at).toEqual({ kind: 'signup', email: 'new-person@example.com', emailLocked: true });
    if (at.kind !== 'signup') throw new Error('unreachable');
    const form = {
      email: 'someone-else@example.com',
      password: TEST_PASSWORD,
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-01-01',
      phone_number: '',
    };
    expect(await flow.signUpSubmitted(ar, browser, at, platform, form, source)).toMatchObject({
      kind: 'refused',
      status: 400,
      error: 'signup:errors.lockedTo',
      errorValues: { email: 'new-person@example.com' },
      values: { email: 'new-person@example.com' },
    });
    const next = await flow.signUpSubmitted(
      ar,
      browser,
      at,
      platform,
      { ...form, email: 'new-person@example.com' },
      source,
    );
    expect(next).toMatchObject({ kind: 'consent', user: { email: 'new-person@example.com' } });
    expect(browser.list()).toHaveLength(1);
  });
});
