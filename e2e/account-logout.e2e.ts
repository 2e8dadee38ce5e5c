// The account page (profile, picture upload, password, apps, sign out
// everywhere) and RP-initiated logout (trusted hint, confirmation page, registered redirect).
import type { Page } from 'playwright-core';
import {
  authorizeUrl,
  buildTenant,
  clickAndLoad,
  createUser,
  finishAtCallback,
  newPage,
  openAuthorize,
  pickAccount,
  signIn,
  signInThrough,
  userinfo,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';

let h: Harness;
let tenant: Tenant;
let page: Page;

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

useBrowserSuite((s) => ({ h, tenant, page } = s), {
  // The stand-in RP's signed-out page is registered for post-logout redirection.
  tenant: (harness) => buildTenant(harness, { postLogoutRedirectUris: [`${harness.base}/__rp/signed-out`] }),
});

const accountPage = () => `${h.base}/account?platform_guid=${tenant.platform.id}`;
const h1 = () => page.locator('h1').first().innerText();
const status = () => page.locator('[role=status]').first().innerText();

it('signs in to the account page and edits the profile; userinfo shows the new claims', async () => {
  const user = await createUser(h, tenant);
  const { tokens } = await signInThrough(h, tenant, page, user.email);
  await page.goto(accountPage());
  await expect(h1()).resolves.toBe('Your account');

  await page.getByLabel('Middle name (optional)').fill('King');
  await page.getByLabel('Nickname (optional)').fill('Countess');
  await page.getByLabel('Phone number (optional)').fill('+1 415 555 0123');
  await page.getByLabel('Street address').fill('1 Infinite Loop');
  await page.getByLabel('City').fill('Cupertino');
  await page.getByLabel('State or region').fill('CA');
  await page.getByLabel('Postal code').fill('95014');
  await page.getByLabel('Country').selectOption('US');
  await clickAndLoad(page, page.getByRole('button', { name: 'Save profile' }));
  await expect(status()).resolves.toBe('Your profile has been saved.');
  await expect(page.getByLabel('Phone number (optional)').inputValue()).resolves.toBe('+14155550123');

  const claims = await userinfo(h, tenant, tokens.access_token);
  expect(claims).toMatchObject({ name: 'Ada King Lovelace', nickname: 'Countess', phone_number: '+14155550123' });

  // A bad phone comes back with its message, bound to the field.
  await page.getByLabel('Phone number (optional)').fill('555');
  const res = await clickAndLoad(page, page.getByRole('button', { name: 'Save profile' }));
  expect(res?.status()).toBe(400);
  await expect(page.locator('#phone_number-error').innerText()).resolves.toMatch(/valid phone number/);
});

it('uploads a picture that apps then receive', async () => {
  const user = await createUser(h, tenant);
  await signInThrough(h, tenant, page, user.email);
  await page.goto(accountPage());
  await page.getByLabel('Upload a picture').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: PNG });
  await clickAndLoad(page, page.getByRole('button', { name: 'Upload picture' }));
  await expect(status()).resolves.toBe('Your picture has been updated.');
  const src = await page.locator('.account-head img').getAttribute('src');
  expect(src).toMatch(new RegExp(`^${h.base}/pictures/`));
  const img = await page.request.get(src!);
  expect(img.headers()['content-type']).toBe('image/png');

  await page
    .getByLabel('Upload a picture')
    .setInputFiles({ name: 'evil.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg/>') });
  const refused = await clickAndLoad(page, page.getByRole('button', { name: 'Upload picture' }));
  expect(refused?.status()).toBe(400);
  await expect(page.locator('#picture-error').innerText()).resolves.toMatch(/PNG, JPEG, GIF or WebP/);

  await openAuthorize(page, authorizeUrl(h, tenant));
  await pickAccount(page, user.email);
  const { idToken } = await finishAtCallback(h, tenant, page);
  expect(idToken!.picture).toBe(src);
});

it('changes the password with the current one, revokes an app, and signs out everywhere', async () => {
  const user = await createUser(h, tenant);
  const { tokens } = await signInThrough(h, tenant, page, user.email);
  await page.goto(accountPage());
  // The page's tabs are links: Apps lists the app, Security holds the password form.
  await clickAndLoad(page, page.getByRole('link', { name: 'Apps', exact: true }));
  await expect(page.locator('.app-list').innerText()).resolves.toContain('Acme Notes');
  await clickAndLoad(page, page.getByRole('link', { name: 'Security', exact: true }));

  await page.getByLabel('Current password').fill('not my password');
  await page.getByLabel('New password').fill('another pass phrase');
  await clickAndLoad(page, page.getByRole('button', { name: 'Change password' }));
  await expect(page.locator('#current_password-error').innerText()).resolves.toContain('not correct');
  await page.getByLabel('Current password').fill(TEST_PASSWORD);
  await page.getByLabel('New password').fill('another pass phrase');
  await clickAndLoad(page, page.getByRole('button', { name: 'Change password' }));
  await expect(status()).resolves.toContain('Your password has been changed');
  const refreshed = await fetch(`${h.base}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${tenant.client.id}:${encodeURIComponent(tenant.client.secret!)}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      platform_guid: tenant.platform.id,
    }),
  });
  expect(refreshed.status).toBe(400);

  // Consent again through the app, then revoke it from the account page.
  await openAuthorize(page, authorizeUrl(h, tenant));
  await pickAccount(page, user.email);
  const again = await finishAtCallback(h, tenant, page);
  await page.goto(`${accountPage()}&section=apps`);
  await clickAndLoad(page, page.getByRole('button', { name: 'Revoke access of Acme Notes' }));
  await expect(status()).resolves.toBe('Acme Notes no longer has access to your account.');
  await expect(page.locator('main').innerText()).resolves.toContain('No app has access to your account.');
  const introspected = await fetch(`${h.base}/oauth/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${tenant.client.id}:${encodeURIComponent(tenant.client.secret!)}`).toString('base64')}`,
    },
    body: new URLSearchParams({ token: again.tokens.refresh_token!, platform_guid: tenant.platform.id }),
  });
  expect(await introspected.json()).toEqual({ active: false });

  // A second browser, then "Sign out everywhere" from the first.
  const second = await newPage(h);
  try {
    await second.page.goto(`${h.base}/account/signin?platform_guid=${tenant.platform.id}`);
    await signIn(second.page, user.email, 'another pass phrase');
    await expect(second.page.locator('h1').first().innerText()).resolves.toBe('Your account');
    await page.goto(`${accountPage()}&section=security`);
    await clickAndLoad(page, page.getByRole('button', { name: 'Sign out everywhere' }));
    await expect(h1()).resolves.toBe('You are signed out');
    await second.page.reload();
    await expect(second.page.locator('h1').first().innerText()).resolves.toBe('Sign in');
  } finally {
    await second.context.close();
  }
});

it('RP-initiated logout with id_token_hint returns to the app with state; without it asks first', async () => {
  const user = await createUser(h, tenant);
  const { tokens } = await signInThrough(h, tenant, page, user.email);
  const after = `${h.base}/__rp/signed-out`;
  const q = (params: Record<string, string>) =>
    `${h.base}/oauth/logout?${new URLSearchParams({ platform_guid: tenant.platform.id, ...params })}`;

  await page.goto(q({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: after, state: 'bye' }));
  expect(page.url()).toBe(`${after}?state=bye`);
  await openAuthorize(page, authorizeUrl(h, tenant, { prompt: 'none' }));
  expect(new URL(page.url()).searchParams.get('error')).toBe('login_required');

  // Signed in again; a logout nobody can vouch for shows the confirmation page.
  await openAuthorize(page, authorizeUrl(h, tenant));
  await pickAccount(page, user.email);
  await signIn(page, undefined);
  const { params } = await finishAtCallback(h, tenant, page);
  expect(params.get('code')).toBeTruthy();
  await page.goto(q({ client_id: tenant.client.id, post_logout_redirect_uri: after, state: 's2' }));
  await expect(h1()).resolves.toBe(`Sign out of ${tenant.platform.name}?`);
  await expect(page.locator('main').innerText()).resolves.toContain(user.email);
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign out', exact: true }));
  expect(page.url()).toBe(`${after}?state=s2`);

  // An unregistered post_logout_redirect_uri is never followed.
  const res = await page.goto(q({ client_id: tenant.client.id, post_logout_redirect_uri: 'https://evil.example/' }));
  expect(res?.status()).toBe(400);
  expect(new URL(page.url()).host).toBe(new URL(h.base).host);
});
