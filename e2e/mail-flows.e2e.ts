// The verification link mailed at sign-up, "Forgot password?" and the
// reset link, read from the development outbox (the /dev/outbox page and its files), and the clear
// pages of used and expired links.
import type { Page } from 'playwright-core';
import { buildTestApp } from '../test/helpers';
import { linkIn, waitForMail } from '../test/support/outbox';
import {
  allow,
  authorizeUrl,
  pickAccount,
  clickAndLoad,
  createUser,
  expectPage,
  finishAtCallback,
  newEmail,
  openAuthorize,
  signIn,
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

const dataDir = () => h.t.config.dataDir;

it('verifies the email through the link in the outbox; the next tokens and userinfo say so', async () => {
  const email = newEmail('verify');
  const first = await signUpThrough(h, tenant, page, { email });
  expect(first.idToken!.email_verified).toBe(false);
  await waitForMail(dataDir(), email, /Verify your email address/);

  // Read it as a developer would: the outbox page, the mail, its link.
  await page.goto(`${h.base}/dev/outbox?to=${encodeURIComponent(email)}`);
  await clickAndLoad(page, page.getByRole('link', { name: /Verify your email address for/ }));
  await expect(page.locator('pre.mail-text').innerText()).resolves.toMatch(/^Hello,$/m); // unverified address: no name the sender typed
  await clickAndLoad(page, page.locator('pre.mail-text a', { hasText: '/verify-email?' }));
  await expect(page.locator('h1').innerText()).resolves.toBe('Your email address is verified');

  expect((await userinfo(h, tenant, first.tokens.access_token)).email_verified).toBe(true);
  await openAuthorize(page, authorizeUrl(h, tenant));
  await pickAccount(page, email);
  const next = await finishAtCallback(h, tenant, page);
  expect(next.idToken!.email_verified).toBe(true);

  // The same link again: a clear page.
  const mail = await waitForMail(dataDir(), email, /Verify/);
  const again = await page.goto(linkIn(mail, '/verify-email'));
  expect(again?.status()).toBe(410);
  await expect(page.locator('h1').innerText()).resolves.toBe('This link has already been used');
});

it('resets a forgotten password from the sign-in page and comes back to that sign-in', async () => {
  const user = await createUser(h, tenant);
  const state = 'reset-state';
  await openAuthorize(page, authorizeUrl(h, tenant, { state }));
  await expectPage(page, 'signin');
  await clickAndLoad(page, page.getByRole('link', { name: 'Forgot password?' }));
  await expect(page.locator('h1').innerText()).resolves.toBe('Reset your password');
  await page.getByLabel('Email').fill(user.email);
  await clickAndLoad(page, page.getByRole('button', { name: 'Send reset link' }));
  await expect(page.locator('h1').innerText()).resolves.toBe('Check your email');

  const mail = await waitForMail(dataDir(), user.email, /Reset your/);
  await page.goto(linkIn(mail, '/password/reset'));
  await expect(page.locator('h1').innerText()).resolves.toBe('Choose a new password');
  await page.getByLabel('New password').fill('password');
  await clickAndLoad(page, page.getByRole('button', { name: 'Set new password' }));
  await expect(page.locator('#password-error').innerText()).resolves.toMatch(/too common/);
  await page.getByLabel('New password').fill('my fresh pass phrase');
  await clickAndLoad(page, page.getByRole('button', { name: 'Set new password' }));
  await expect(page.locator('h1').innerText()).resolves.toBe('Your password has been changed');

  await clickAndLoad(page, page.getByRole('link', { name: 'Continue to sign in' }));
  await signIn(page, user.email, TEST_PASSWORD);
  await expect(page.locator('[role=alert]').innerText()).resolves.toContain('Incorrect email or password');
  await signIn(page, user.email, 'my fresh pass phrase');
  await allow(page);
  await finishAtCallback(h, tenant, page, state);

  const used = await page.goto(linkIn(mail, '/password/reset'));
  expect(used?.status()).toBe(410);
  await expect(page.locator('h1').innerText()).resolves.toBe('This link has already been used');
  await expect(page.getByRole('link', { name: 'Get a new link' }).count()).resolves.toBe(1);
});

it('gives the same answer for an unknown email', async () => {
  await page.goto(`${h.base}/password/forgot?platform_guid=${tenant.platform.id}`);
  await page.getByLabel('Email').fill(newEmail('nobody'));
  await clickAndLoad(page, page.getByRole('button', { name: 'Send reset link' }));
  await expect(page.locator('h1').innerText()).resolves.toBe('Check your email');
  await expect(page.locator('main').innerText()).resolves.toContain('If an account exists for that address');
});

it('shows a clear page for an expired reset link', async () => {
  const user = await createUser(h, tenant);
  await h.t.services.account.passwordReset.requestReset(tenant.platform, user.email);
  const link = linkIn(await waitForMail(dataDir(), user.email, /Reset your/), '/password/reset');
  // The same database seen 31 minutes later.
  const later = await buildTestApp({ BASE_URL: h.base }, () => new Date(Date.now() + 31 * 60 * 1000));
  try {
    const http = await import('node:http');
    const server = http.createServer(later.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as import('node:net').AddressInfo;
    const u = new URL(link);
    const res = await page.goto(`http://127.0.0.1:${port}${u.pathname}${u.search}`);
    expect(res?.status()).toBe(410);
    await expect(page.locator('h1').innerText()).resolves.toBe('This link has expired');
    await expect(page.locator('main').innerText()).resolves.toContain('30 minutes');
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  } finally {
    await later.close();
  }
});
