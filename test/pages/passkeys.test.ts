import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser, type Browser } from '../support/browser';
import {
  accountSignIn,
  authorizeQuery,
  exchange,
  inputValue,
  jwtPayload,
  signInThrough,
} from '../support/account-flows';
import { createCredential, getAssertion, type SoftCredential } from '../support/soft-authenticator';

// Passkeys over HTTP with the software authenticator: the account page's routes, the
// sign-in page's passwordless flow to tokens, the second factor, and bad input (never a 5xx).
const BASE = 'http://localhost:4567';
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ BASE_URL: BASE });
});
afterAll(() => t.close());

async function tenant() {
  const p = await buildPlatform(t.services, 'Acme');
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}

/** The passkey form's data-options URL on the current page (the account page or a sign-in page). */
const optionsUrl = (b: Browser) => {
  const url = /data-options="([^"]+)"/.exec(b.html)?.[1];
  if (!url) throw new Error(`no passkey form on the page:\n${b.html.slice(0, 2000)}`);
  return url.replace(/&amp;/g, '&');
};

/** What public/passkeys.js does: POST the form's hidden fields for the options. */
async function fetchOptions(b: Browser, extra: Record<string, string> = {}) {
  const restart = inputValue(b.html, 'restart');
  const body = {
    _csrf: inputValue(b.html, '_csrf')!,
    ...(restart ? { restart: restart.replace(/&amp;/g, '&') } : {}),
    ...extra,
  };
  return b.agent.post(optionsUrl(b)).type('form').send(body);
}

async function addPasskey(b: Browser, p: { id: string }, u: { id: string }, name: string): Promise<SoftCredential> {
  await b.get(`/account?platform_guid=${p.id}&section=security`); // passkeys are on the Security tab
  const res = await fetchOptions(b, { account: u.id });
  expect(res.status).toBe(200);
  const { credential, json } = createCredential(res.body.options, BASE);
  await b.submit(`/account/passkeys?platform_guid=${p.id}`, { account: u.id, name, credential: json });
  expect(b.html).toContain(`Passkey “${name}” added.`);
  return credential;
}

describe('passkeys over HTTP', () => {
  it('adds a passkey on the account page and signs in with it alone: a code, tokens, amr hwk+user+mfa', async () => {
    const { p, c, u } = await tenant();
    const owner = browser(t.app);
    await accountSignIn(owner, p, u.email);
    const credential = await addPasskey(owner, p, u, 'Laptop');

    const b = browser(t.app);
    const page = await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect(b.pageTitle()).toBe('Sign in');
    expect(page.res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(b.html).toContain('autocomplete="username webauthn"');
    const options = await fetchOptions(b);
    expect(options.status).toBe(200);
    expect(options.body.options).toMatchObject({
      rpId: 'localhost',
      userVerification: 'required',
      allowCredentials: [],
    });
    let step = await b.submit('/passkey', { credential: getAssertion(credential, options.body.options, BASE) });
    if (!step.location) step = await b.submit('/consent', { decision: 'allow' });
    const tokens = await exchange(t.app, p, c, step.location!);
    const idToken = jwtPayload(tokens.id_token);
    expect(idToken.sub).toBe(u.id);
    expect(idToken.amr).toEqual(['hwk', 'user', 'mfa']);
    expect(idToken.acr).toBe('urn:latchkey:acr:mfa');
  });

  it('signs in on the account page with a passkey alone', async () => {
    const { p, u } = await tenant();
    const owner = browser(t.app);
    await accountSignIn(owner, p, u.email);
    const credential = await addPasskey(owner, p, u, 'Laptop');
    const b = browser(t.app);
    await b.get(`/account?platform_guid=${p.id}&section=apps`);
    expect(b.pageTitle()).toBe('Sign in');
    expect(b.html).not.toContain('username webauthn'); // no autofill there: no session row before the user asks
    const options = await fetchOptions(b);
    expect(options.status).toBe(200);
    await b.submit(`/account/passkey-signin?platform_guid=${p.id}&section=apps`, {
      credential: getAssertion(credential, options.body.options, BASE, { uv: false }),
    });
    expect(b.pageTitle()).toBe('Sign in'); // user verification required
    const again = await fetchOptions(b);
    await b.submit(`/account/passkey-signin?platform_guid=${p.id}&section=apps`, {
      credential: getAssertion(credential, again.body.options, BASE),
    });
    expect(b.pageTitle()).toBe('Your account');
    expect(b.html).toContain(u.email);
    expect(b.html).toMatch(/class="account-tab" aria-current="page">Apps</); // the tab asked for before the sign-in
  });

  it("a sign-in pinned to an email (login_hint) takes only that account's passkey, and offers no autofill", async () => {
    const { p, c, u } = await tenant();
    const other = await buildUser(t.services, p.id);
    const owner = browser(t.app);
    await accountSignIn(owner, p, u.email);
    const credential = await addPasskey(owner, p, u, 'Laptop');
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { login_hint: other.email })}`);
    expect(b.html).toContain('Sign in with a passkey');
    expect(b.html).not.toContain('data-autofill');
    expect(b.html).not.toContain('username webauthn');
    const options = await fetchOptions(b);
    const refused = await b.submit('/passkey', { credential: getAssertion(credential, options.body.options, BASE) });
    expect(refused.res.status).toBe(400);
    expect(b.html).toContain(`This sign-in is for ${other.email}.`);
  });

  it('uses each challenge once: a replayed assertion is refused', async () => {
    const { p, c, u } = await tenant();
    const owner = browser(t.app);
    await accountSignIn(owner, p, u.email);
    const credential = await addPasskey(owner, p, u, 'Laptop');
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const options = (await fetchOptions(b)).body.options;
    const assertion = getAssertion(credential, options, BASE);
    const signinHtml = b.html;
    await b.submit('/passkey', { credential: assertion });
    expect(b.pageTitle()).not.toBe('Sign in');
    // The same answer again from another browser (a stolen assertion): its session holds no challenge.
    const other = browser(t.app);
    await other.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const replay = await other.submit('/passkey', { credential: assertion });
    expect(replay.res.status).toBe(400);
    expect(other.html).toContain('This passkey request has expired. Try again.');
    expect(signinHtml).toContain('Sign in with a passkey');
  });

  it('adding a passkey alone does not turn two-step sign-in on (no recovery codes come with it)', async () => {
    const { p, c, u } = await tenant();
    const owner = browser(t.app);
    await accountSignIn(owner, p, u.email);
    await addPasskey(owner, p, u, 'Key');
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    await b.submit('/signin', { email: u.email, password: 'correct horse battery staple' });
    expect(b.pageTitle()).not.toBe('Two-step verification');
  });

  it('a passkey as the second factor after the password, when the app asks for two factors', async () => {
    const { p, c, u } = await tenant();
    const owner = browser(t.app);
    await accountSignIn(owner, p, u.email);
    const credential = await addPasskey(owner, p, u, 'Key');
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { acr_values: 'urn:latchkey:acr:mfa' })}`);
    await b.submit('/signin', { email: u.email, password: 'correct horse battery staple' });
    expect(b.pageTitle()).toBe('Two-step verification');
    expect(b.html).toContain('Use a passkey');
    const options = await fetchOptions(b);
    expect(options.body.options.allowCredentials.map((x: { id: string }) => x.id)).toEqual([credential.id]);
    let step = await b.submit('/second-factor-passkey', {
      credential: getAssertion(credential, options.body.options, BASE, { uv: false }),
    });
    if (!step.location) step = await b.submit('/consent', { decision: 'allow' });
    const idToken = jwtPayload((await exchange(t.app, p, c, step.location!)).id_token);
    expect(idToken.amr).toEqual(['pwd', 'hwk', 'mfa']);
  });

  it('answers bad input with a page or a 4xx, never a 5xx', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    await fetchOptions(b);
    for (const credential of [
      '',
      'null',
      '{',
      '{"id":"x","rawId":"x","type":"public-key","response":{}}',
      'x'.repeat(16_000),
    ]) {
      await fetchOptions(b);
      const res = await b.submit('/passkey', { credential });
      expect(res.res.status).toBe(400);
      expect(b.pageTitle()).toBe('Sign in');
    }
    // The account page's forms, signed in: garbage credential, unknown passkey id.
    const owner = browser(t.app);
    await accountSignIn(owner, p, u.email);
    await owner.get(`/account?platform_guid=${p.id}&section=security`);
    await owner.submit(`/account/passkeys?platform_guid=${p.id}`, { account: u.id, name: 'X', credential: '{}' });
    expect(owner.html).toContain('The passkey was not added.');
    await owner.submit(`/account/passkeys?platform_guid=${p.id}`, { account: u.id, name: 'X', credential: '{}' }); // no challenge at all now
    expect(owner.html).toContain('The passkey was not added.');
    const remove = await owner.agent
      .post(`/account/passkeys/remove?platform_guid=${p.id}`)
      .type('form')
      .send({ _csrf: inputValue(owner.html, '_csrf'), account: u.id, passkey: '{not-a-uuid}' });
    expect(remove.status).toBe(303);
    // Options for an account this browser is not signed in to: 401 JSON, not a page.
    const stranger = await owner.agent
      .post(`/account/passkeys/options?platform_guid=${p.id}`)
      .type('form')
      .send({ _csrf: inputValue(owner.html, '_csrf'), account: '00000000-0000-4000-8000-000000000000' });
    expect(stranger.status).toBe(401);
    // A second-factor passkey route without a pending sign-in.
    const lost = await owner.agent
      .post(`/account/second-factor-passkey-options?platform_guid=${p.id}`)
      .type('form')
      .send({ _csrf: inputValue(owner.html, '_csrf') });
    expect(lost.status).toBe(409);
    await signInThrough(browser(t.app), p, c, u.email); // the password still works
  });

  it("says where passkeys work when the browser refuses this address: BASE_URL's origin, on the sign-in page and the account page, in the page's language", async () => {
    const { p, c, u } = await tenant();
    const insecureMessage = (b: Browser) => /data-msg-insecure="([^"]*)"/.exec(b.html)?.[1];
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect(insecureMessage(b)).toBe(
      'Passkeys cannot be used on this address: open this page at http://localhost:4567.',
    );
    const owner = browser(t.app);
    await accountSignIn(owner, p, u.email);
    await owner.get(`/account?platform_guid=${p.id}&section=security`);
    expect(insecureMessage(owner)).toBe(
      'Passkeys cannot be used on this address: open this page at http://localhost:4567.',
    );
    const german = browser(t.app);
    await german.get(`/oauth/authorize?${authorizeQuery(p, c, { ui_locales: 'de' })}`);
    expect(insecureMessage(german)).toBe(
      'Passkeys können unter dieser Adresse nicht verwendet werden: Öffnen Sie diese Seite unter http://localhost:4567.',
    );
  });
});

describe('passkeys with an IP BASE_URL', () => {
  it('offers no passkey on the sign-in page and refuses the options', async () => {
    const ip = await buildTestApp({ BASE_URL: 'http://127.0.0.1:4568' });
    try {
      const p = await buildPlatform(ip.services, 'Acme');
      const c = await buildClient(ip.services, p.id);
      const b = browser(ip.app);
      const page = await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
      expect(b.html).not.toContain('Sign in with a passkey');
      expect(b.html).toContain('Passkeys are not available here');
      // No passkey scripts (the page's only script is the show-password toggle).
      expect(b.html).not.toContain('/static/passkeys.js');
      expect(page.res.headers['content-security-policy']).toContain("script-src 'self'");
      const iid = /action="\/interaction\/([^/"]+)\/signin"/.exec(b.html)![1];
      const res = await b.agent
        .post(`/interaction/${iid}/passkey-options`)
        .type('form')
        .send({ _csrf: inputValue(b.html, '_csrf') });
      expect(res.status).toBe(409);
    } finally {
      await ip.close();
    }
  });
});
