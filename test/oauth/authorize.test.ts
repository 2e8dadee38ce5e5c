import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { authorizeQuery as flowQuery, signInThrough } from '../support/account-flows';
import { createHash } from 'node:crypto';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function setup(clientInput = {}) {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id, clientInput);
  return { p, c };
}

const authorizeQuery = (
  p: { id: string },
  c: { id: string; redirectUris: string[] },
  extra: Record<string, string> = {},
) =>
  new URLSearchParams({
    platform_guid: p.id,
    response_type: 'code',
    client_id: c.id,
    redirect_uri: c.redirectUris[0],
    scope: 'openid email',
    state: 's-1',
    ...extra,
  });

const redirectParams = (res: request.Response) => {
  expect(res.status).toBe(302);
  const url = new URL(res.headers.location);
  return { base: `${url.origin}${url.pathname}`, params: Object.fromEntries(url.searchParams) };
};

describe('GET /oauth/authorize — errors before the client is trusted: a page, never a redirect', () => {
  it.each([
    ['an unknown client', (q: URLSearchParams) => q.set('client_id', '00000000-0000-4000-8000-000000000000')],
    ['a malformed client id', (q: URLSearchParams) => q.set('client_id', "' OR 1=1 --")],
    ['a missing client id', (q: URLSearchParams) => q.delete('client_id')],
    ['an unregistered redirect_uri', (q: URLSearchParams) => q.set('redirect_uri', 'https://evil.example/cb')],
    [
      'a redirect_uri differing by a trailing slash',
      (q: URLSearchParams) => q.set('redirect_uri', 'https://app.example/callback/'),
    ],
    ['a missing redirect_uri', (q: URLSearchParams) => q.delete('redirect_uri')],
    ['a repeated redirect_uri', (q: URLSearchParams) => q.append('redirect_uri', 'https://app.example/callback')],
    ['an unknown platform', (q: URLSearchParams) => q.set('platform_guid', '00000000-0000-4000-8000-000000000000')],
  ])('%s → 400 HTML error page', async (_label, mutate) => {
    const { p, c } = await setup();
    const q = authorizeQuery(p, c);
    mutate(q);
    const res = await request(t.app).get(`/oauth/authorize?${q}`);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.type).toBe('text/html');
    expect(res.text).not.toMatch(/at .*\.ts:\d+|stack|SELECT/i);
  });
});

describe('GET /oauth/authorize — other errors redirect with error, error_description, state and iss', () => {
  it.each([
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no openid scope', { scope: 'email' }, 'invalid_scope'],
    ['a plain PKCE method', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
    ['a malformed code_challenge', { code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
    ['prompt=none with login', { prompt: 'none login' }, 'invalid_request'],
    ['an unknown prompt', { prompt: 'sometimes' }, 'invalid_request'],
    ['a negative max_age', { max_age: '-1' }, 'invalid_request'],
    ['an unknown action', { action: 'delete' }, 'invalid_request'],
    ['a request object', { request: 'eyJ' }, 'request_not_supported'],
    ['a request_uri', { request_uri: 'https://x' }, 'request_uri_not_supported'],
    ['a malformed id_token_hint', { id_token_hint: 'nope' }, 'invalid_request'],
    ['prompt=none with no session', { prompt: 'none' }, 'login_required'],
  ])('%s', async (_label, extra, code) => {
    const { p, c } = await setup();
    const res = await request(t.app).get(`/oauth/authorize?${authorizeQuery(p, c, extra)}`);
    const { base, params } = redirectParams(res);
    expect(base).toBe('https://app.example/callback');
    expect(params).toEqual({
      error: code,
      error_description: expect.any(String),
      state: 's-1',
      iss: 'http://issuer.test',
    });
  });

  it('a public client without code_challenge', async () => {
    const { p, c } = await setup({ type: 'public' });
    const { params } = redirectParams(await request(t.app).get(`/oauth/authorize?${authorizeQuery(p, c)}`));
    expect(params.error).toBe('invalid_request');
    expect(params.error_description).toMatch(/PKCE/);
  });

  it('a repeated parameter other than the redirect target', async () => {
    const { p, c } = await setup();
    const q = authorizeQuery(p, c);
    q.append('scope', 'openid');
    const { params } = redirectParams(await request(t.app).get(`/oauth/authorize?${q}`));
    expect(params.error).toBe('invalid_request');
  });

  it('ignores unknown parameters and display/ui_locales/acr_values', async () => {
    const { p, c } = await setup();
    const res = await request(t.app).get(
      `/oauth/authorize?${authorizeQuery(p, c, { display: 'page', ui_locales: 'fr', acr_values: 'x', foo: 'bar' })}`,
    );
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/interaction\//);
  });
});

describe('the hosted flow over HTTP', () => {
  it('accepts POST /oauth/authorize (form) as well as GET: a 303 to the same request as a GET', async () => {
    const { p, c } = await setup();
    const res = await request(t.app)
      .post('/oauth/authorize')
      .type('form')
      .send(Object.fromEntries(authorizeQuery(p, c)));
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const followed = await request(t.app).get(res.headers.location);
    expect(followed.status).toBe(303);
    expect(followed.headers.location).toMatch(/^\/interaction\//);
  });

  it('drops scopes the client does not hold; the token reports the narrowed set', async () => {
    const { p, c } = await setup({ scopes: 'openid email' });
    const u = await buildUser(t.services, p.id);
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { scope: 'openid email phone address' })}`);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(b.html).toMatch(/Your email address/);
    expect(b.html).not.toMatch(/Your phone number/);
    const done = await b.submit('/consent', { decision: 'allow' });
    const code = new URL(done.location!).searchParams.get('code')!;
    const tokens = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id })
      .expect(200);
    expect(tokens.body.scope).toBe('openid email');
  });

  it('shows the same message for an unknown email and a wrong password', async () => {
    const { p, c } = await setup();
    const u = await buildUser(t.services, p.id);
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const wrong = await b.submit('/signin', { email: u.email, password: 'not the password' });
    expect(wrong.res.status).toBe(400);
    const unknown = await b.submit('/signin', { email: 'nobody@example.com', password: 'whatever pass' });
    const message = (html: string) => /role="alert"[^>]*>\s*<p>([^<]+)/.exec(html)?.[1];
    expect(message(unknown.res.text)).toBe('Incorrect email or password.');
    expect(message(wrong.res.text)).toBe(message(unknown.res.text));
  });

  it('refuses a form POST without the CSRF token', async () => {
    const { p, c } = await setup();
    const b = browser(t.app);
    const page = await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const action = /action="([^"]+\/signin)"/.exec(b.html)![1];
    const res = await b.agent.post(action).type('form').send({ email: 'a@b.co', password: 'x', _csrf: 'forged' });
    expect(res.status).toBe(403);
    expect(page.res.status).toBe(200);
  });

  it('delivers access_denied with state when the user denies', async () => {
    const { p, c } = await setup();
    const u = await buildUser(t.services, p.id);
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    const denied = await b.submit('/consent', { decision: 'deny' });
    const params = Object.fromEntries(new URL(denied.location!).searchParams);
    expect(params).toEqual({
      error: 'access_denied',
      error_description: expect.any(String),
      state: 's-1',
      iss: 'http://issuer.test',
    });
  });

  it('signs up with the age rule, E.164 phone and a unique email', async () => {
    const { p, c } = await setup();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { action: 'register' })}`);
    expect(b.pageTitle()).toBe('Create your account');
    // 16th birthday tomorrow: still 15 today
    const birthday = new Date();
    birthday.setUTCFullYear(birthday.getUTCFullYear() - 16);
    birthday.setUTCDate(birthday.getUTCDate() + 1);
    const fifteen = birthday.toISOString().slice(0, 10);
    const fields = {
      email: 'New@Example.com',
      given_name: 'Nia',
      family_name: 'Okafor',
      phone_number: '+1 (415) 555-0123',
      password: 'a long pass phrase',
    };
    const young = await b.submit('/signup', { ...fields, birthdate: fifteen });
    expect(young.res.status).toBe(400);
    expect(young.res.text).toMatch(/at least 16 years old/);
    expect(await t.database.db('users').where({ platform_id: p.id })).toHaveLength(0);
    await b.submit('/signup', { ...fields, birthdate: '2000-01-31' });
    const user = await t.database.db('users').where({ platform_id: p.id }).first();
    expect(user).toMatchObject({ email: 'New@Example.com', phone_number: '+14155550123', birthdate: '2000-01-31' });
    const again = browser(t.app);
    await again.get(`/oauth/authorize?${authorizeQuery(p, c, { action: 'register' })}`);
    const dup = await again.submit('/signup', {
      ...fields,
      email: 'new@EXAMPLE.com',
      birthdate: '2000-01-31',
      password: 'another pass phrase',
    });
    expect(dup.res.text).toMatch(/already exists/);
    expect(await t.database.db('users').where({ platform_id: p.id })).toHaveLength(1);
  });

  it('a phone number over 64 characters is a field error on the sign-up form (which limits the field to 64), never a page of its own', async () => {
    const { p, c } = await setup();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { action: 'register' })}`);
    expect(b.html).toMatch(/<input id="phone_number" name="phone_number"[^>]* maxlength="64"/);
    // A number with a note after it: libphonenumber reads the number out of the text, so only the length is wrong.
    const long = '+44 20 7946 0958 (home; call after six in the evening, thank you)';
    expect(long.length).toBeGreaterThan(64);
    const fields = {
      email: 'long-phone@example.com',
      given_name: 'Nia',
      family_name: 'Okafor',
      birthdate: '2000-01-31',
      password: 'a long pass phrase',
    };
    const refused = await b.submit('/signup', { ...fields, phone_number: long });
    expect(refused.res.status).toBe(400);
    expect(b.pageTitle()).toBe('Create your account');
    expect(/<p class="field-error" id="phone_number-error">([^<]*)<\/p>/.exec(b.html)?.[1]).toBe(
      'Enter a phone number of at most 64 characters.',
    );
    expect(b.html).toMatch(/id="phone_number"[^>]*aria-invalid="true"/);
    expect(b.html).toContain('value="long-phone@example.com"'); // the rest of the form is kept
    expect(await t.database.db('users').where({ platform_id: p.id })).toHaveLength(0);
    // Far past the field's limit (a pasted block of text, a script): the same field error.
    await b.submit('/signup', { ...fields, phone_number: '+'.padEnd(1000, '1') });
    expect(b.html).toContain('Enter a phone number of at most 64 characters.');
    await b.submit('/signup', { ...fields, phone_number: '+44 20 7946 0958' });
    expect(await t.database.db('users').where({ platform_id: p.id }).first()).toMatchObject({
      phone_number: '+442079460958',
    });
  });

  it('a sign-up form sent again for an existing account with its password (a double submit) signs that account in, counted like a sign-in', async () => {
    const { p, c } = await setup();
    const u = await buildUser(t.services, p.id);
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { action: 'register' })}`);
    const fields = { email: u.email.toUpperCase(), given_name: 'Other', family_name: 'Name', birthdate: '1990-05-17' };
    const wrong = await b.submit('/signup', { ...fields, password: 'not the password' });
    expect(wrong.res.status).toBe(400);
    expect(wrong.res.text).toMatch(/already exists/);
    expect(await t.database.db('audit_events').where({ subject: u.id, kind: 'sign_in.failed' })).toHaveLength(1);
    await b.submit('/signup', { ...fields, password: TEST_PASSWORD });
    expect(b.pageTitle()).not.toBe('Create your account');
    const denied = await b.submit('/consent', { decision: 'deny' });
    expect(new URL(denied.location!).searchParams.get('error')).toBe('access_denied');
    expect(await t.database.db('users').where({ platform_id: p.id })).toHaveLength(1);
    expect(await t.database.db('users').where({ id: u.id }).first()).toMatchObject({ given_name: 'Ada' }); // the form's other fields change nothing
  });
});

describe('the account chooser over HTTP', () => {
  it('offers "Sign out of all accounts" only while an account listed is signed in', async () => {
    const { p, c } = await setup();
    const u = await buildUser(t.services, p.id);
    const b = browser(t.app);
    await signInThrough(b, p, c, u.email);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect(b.pageTitle()).toBe('Choose an account');
    expect(b.html).toContain('Sign out of all accounts');
    await b.submit('/chooser', { signout_all: '1' });
    expect(b.pageTitle()).toBe('Choose an account');
    expect(b.html).toContain(u.email); // still listed, signed out
    expect(b.html).toContain('Signed out');
    expect(b.html).not.toContain('Sign out of all accounts');
    expect(b.html).not.toContain('name="signout_all"');
  });
});

describe('GET /oauth/authorize — id_token_hint takes ID tokens only', () => {
  it("refuses an access token, though a public client's is signed with the same platform key; the ID token works", async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id, { type: 'public' });
    const u = await buildUser(t.services, p.id);
    const b = browser(t.app);
    const verifier = 'v'.repeat(50);
    const pkce = {
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    const callback = await signInThrough(b, p, c, u.email, undefined, pkce);
    const tokens = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: new URL(callback).searchParams.get('code'),
        redirect_uri: c.redirectUris[0],
        client_id: c.id,
        code_verifier: verifier,
        platform_guid: p.id,
      })
      .expect(200);
    const withHint = (hint: string) =>
      b.get(`/oauth/authorize?${flowQuery(p, c, { ...pkce, prompt: 'none', id_token_hint: hint })}`);

    const refused = new URL((await withHint(tokens.body.access_token)).location!).searchParams;
    expect(Object.fromEntries(refused)).toEqual({
      error: 'invalid_request',
      error_description: 'id_token_hint is not an ID token',
      state: 's-1',
      iss: 'http://issuer.test',
    });
    const accepted = new URL((await withHint(tokens.body.id_token)).location!).searchParams;
    expect(accepted.get('code')).toEqual(expect.any(String));
  });
});
