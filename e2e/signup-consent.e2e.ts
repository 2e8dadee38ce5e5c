// Sign-up, consent, the code, tokens and userinfo; sign-up rules;
// deny; remembered consent; requests that must never redirect.
import type { Page } from 'playwright-core';
import { buildClient } from '../test/factories';
import {
  allow,
  authorizeUrl,
  buildTenant,
  callbackParams,
  clickAndLoad,
  createUser,
  expectPage,
  fillSignUp,
  finishAtCallback,
  newEmail,
  openAuthorize,
  pickAccount,
  signUp,
  signUpThrough,
  userinfo,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';

let h: Harness;
let tenant: Tenant;
let page: Page;

useBrowserSuite((s) => ({ h, tenant, page } = s));

const usersWithEmail = (email: string) =>
  h.t.database.db('users').where({ platform_id: tenant.platform.id, email_normalized: email.toLowerCase() });

/** Today's UTC date shifted by whole years and days, as YYYY-MM-DD. */
function utcDate(years: number, days = 0): string {
  const now = new Date();
  const d = new Date(Date.UTC(now.getUTCFullYear() + years, now.getUTCMonth(), now.getUTCDate() + days));
  return d.toISOString().slice(0, 10);
}

async function openSignUp(params: Record<string, string> = {}) {
  const { status } = await openAuthorize(page, authorizeUrl(h, tenant, { action: 'register', ...params }));
  expect(status).toBe(200);
  await expectPage(page, 'signup');
}

it('signs up, consents, and the code gives tokens and userinfo with the registered claims', async () => {
  const email = newEmail('signup');
  const state = 'state-123';
  await openSignUp({ state, scope: 'openid profile email phone offline_access' });
  await signUp(page, {
    email,
    givenName: 'Grace',
    familyName: 'Hopper',
    birthdate: '1990-05-17',
    phone: '+44 20 7946 0958',
  });

  await expectPage(page, 'consent');
  const consentText = await page.locator('main').innerText();
  expect(consentText).toContain('Acme Notes');
  expect(consentText).toContain(email);
  await allow(page);

  const { tokens, idToken } = await finishAtCallback(h, tenant, page, state);
  expect(tokens.token_type).toBe('Bearer');
  expect(tokens.refresh_token).toMatch(/^rt_/);
  expect(tokens.scope.split(' ').sort()).toEqual(['email', 'offline_access', 'openid', 'phone', 'profile']);
  expect(idToken).toMatchObject({
    iss: h.base,
    aud: tenant.client.id,
    email,
    given_name: 'Grace',
    family_name: 'Hopper',
    birthdate: '1990-05-17',
  });

  const claims = await userinfo(h, tenant, tokens.access_token);
  expect(claims).toMatchObject({
    sub: idToken!.sub,
    human_guid: idToken!.sub,
    name: 'Grace Hopper',
    given_name: 'Grace',
    family_name: 'Hopper',
    birthdate: '1990-05-17',
    email,
    email_verified: false,
    phone_number: '+442079460958', // normalised to E.164
    phone_number_verified: true,
  });
  expect(typeof claims.picture).toBe('string');
  expect(typeof claims.updated_at).toBe('number');
});

it('refuses a sign-up one day short of 16 with a clear message and stores nothing', async () => {
  const email = newEmail('young');
  await openSignUp();
  const res = await signUp(page, { email, birthdate: utcDate(-16, +1) });
  expect(res?.status()).toBe(400);
  await expectPage(page, 'signup');
  await expect(page.locator('#birthdate-error').innerText()).resolves.toMatch(/at least 16 years old/);
  expect(await page.getByLabel('Date of birth').getAttribute('aria-invalid')).toBe('true');
  // What the user typed is kept, except the password.
  expect(await page.getByLabel('Email').inputValue()).toBe(email);
  expect(await page.getByLabel('Password').inputValue()).toBe('');
  expect(await usersWithEmail(email)).toHaveLength(0);
});

it('accepts a sign-up on the 16th birthday', async () => {
  const email = newEmail('sixteen');
  await openSignUp({ scope: 'openid profile' });
  await signUp(page, { email, birthdate: utcDate(-16) });
  await expectPage(page, 'consent');
  expect(await usersWithEmail(email)).toHaveLength(1);
});

it("refuses an email already registered, whatever its case (with another password than the account's)", async () => {
  const existing = await createUser(h, tenant, { email: newEmail('taken') });
  await openSignUp();
  // The account's own password would sign it in (a double-submitted form: docs/decisions.md).
  const res = await signUp(page, { email: existing.email.toUpperCase(), password: 'not the account password 7' });
  expect(res?.status()).toBe(400);
  await expectPage(page, 'signup');
  await expect(page.locator('#email-error').innerText()).resolves.toMatch(/already exists/);
  expect(
    await h.t.database
      .db('users')
      .where({ platform_id: tenant.platform.id, email_normalized: existing.email.toLowerCase() }),
  ).toHaveLength(1);
});

it('refuses an invalid phone number with a message', async () => {
  const email = newEmail('phone');
  await openSignUp();
  const res = await signUp(page, { email, phone: '12345' });
  expect(res?.status()).toBe(400);
  await expectPage(page, 'signup');
  await expect(page.locator('#phone_number-error').innerText()).resolves.toMatch(/valid phone number/);
  expect(await usersWithEmail(email)).toHaveLength(0);
  // Correcting the number on the same page completes the sign-up.
  await fillSignUp(page, { phone: '+1 415 555 0123', password: TEST_PASSWORD });
  await clickAndLoad(page, page.getByRole('button', { name: 'Create account' }));
  await expectPage(page, 'consent');
  expect((await usersWithEmail(email))[0].phone_number).toBe('+14155550123');
});

it('Deny sends the browser back with error=access_denied and the state', async () => {
  await openSignUp({ state: 'deny-state' });
  await signUp(page, { email: newEmail('deny') });
  await expectPage(page, 'consent');
  await clickAndLoad(page, page.getByRole('button', { name: 'Deny' }));
  const params = callbackParams(page);
  expect(params.get('error')).toBe('access_denied');
  expect(params.get('error_description')).toBeTruthy();
  expect(params.get('state')).toBe('deny-state');
  expect(params.get('iss')).toBe(h.base);
  expect(params.get('code')).toBeNull();
});

it('remembers consent for the client and asks again only for a new scope', async () => {
  const email = newEmail('consent');
  await signUpThrough(h, tenant, page, { email }, { scope: 'openid profile' });

  // Same scopes: the chooser (the browser knows the account), then straight back with a code.
  await openAuthorize(page, authorizeUrl(h, tenant, { scope: 'openid profile', state: 's2' }));
  await pickAccount(page, email);
  await finishAtCallback(h, tenant, page, 's2');

  // A subset of the granted scopes: no consent either.
  await openAuthorize(page, authorizeUrl(h, tenant, { scope: 'openid', state: 's3' }));
  await pickAccount(page, email);
  await finishAtCallback(h, tenant, page, 's3');

  // A new scope: consent again, listing it.
  await openAuthorize(page, authorizeUrl(h, tenant, { scope: 'openid profile email', state: 's4' }));
  await pickAccount(page, email);
  await expectPage(page, 'consent');
  await expect(page.locator('.scope-list').innerText()).resolves.toContain('Your email address');
  await allow(page);
  const { tokens } = await finishAtCallback(h, tenant, page, 's4');
  expect((await userinfo(h, tenant, tokens.access_token)).email).toBe(email);

  // And now the wider set is remembered too.
  await openAuthorize(page, authorizeUrl(h, tenant, { scope: 'openid profile email', state: 's5' }));
  await pickAccount(page, email);
  await finishAtCallback(h, tenant, page, 's5');
});

it('remembers consent per client: another client of the platform asks for it', async () => {
  const second: Tenant = {
    platform: tenant.platform,
    client: await buildClient(h.t.services, tenant.platform.id, {
      name: 'Other App',
      redirectUris: [`${h.base}/__rp/callback`],
    }),
  };
  const email = newEmail('perclient');
  await signUpThrough(h, tenant, page, { email }, { scope: 'openid profile' });
  await openAuthorize(page, authorizeUrl(h, second, { scope: 'openid profile' }));
  await pickAccount(page, email);
  await expectPage(page, 'consent');
  await expect(page.locator('h1').innerText()).resolves.toContain('Other App');
});

describe('requests that must not redirect', () => {
  async function expectErrorPage(url: string, message: RegExp) {
    const { status, chain } = await openAuthorize(page, url);
    expect(status).toBe(400);
    expect(chain).toHaveLength(1); // no redirect at all
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    await expectPage(page, 'error');
    await expect(page.locator('[role=alert]').innerText()).resolves.toMatch(message);
    const html = await page.content();
    expect(html).not.toMatch(/at \w+ \(|node_modules|stack/i);
  }

  it('unknown client_id → 400 HTML error page', async () => {
    await expectErrorPage(
      authorizeUrl(h, tenant, { client_id: '00000000-0000-4000-8000-000000000000' }),
      /not registered/,
    );
  });

  it('malformed client_id → 400 HTML error page', async () => {
    await expectErrorPage(authorizeUrl(h, tenant, { client_id: 'nope' }), /not registered/);
  });

  it('unregistered redirect_uri → 400 HTML error page', async () => {
    await expectErrorPage(
      authorizeUrl(h, tenant, { redirect_uri: `${h.base}/__rp/elsewhere` }),
      /redirect_uri is not registered/,
    );
  });

  it('a redirect_uri differing only by a trailing slash → 400 HTML error page', async () => {
    await expectErrorPage(
      authorizeUrl(h, tenant, { redirect_uri: `${h.base}/__rp/callback/` }),
      /redirect_uri is not registered/,
    );
  });

  it('a client of another platform → 400 HTML error page', async () => {
    const other = await buildTenant(h);
    await expectErrorPage(authorizeUrl(h, tenant, { client_id: other.client.id }), /not registered/);
  });

  it('with a valid client, other errors go back to the client (missing openid → invalid_scope)', async () => {
    await openAuthorize(page, authorizeUrl(h, tenant, { scope: 'profile', state: 'sc' }));
    const params = callbackParams(page);
    expect(params.get('error')).toBe('invalid_scope');
    expect(params.get('state')).toBe('sc');
  });
});
