// Passkeys in real Chromium with the DevTools protocol's virtual
// authenticator. BASE_URL is http://localhost:PORT: a secure context, and a host name (browsers
// refuse an IP address as RP id). Screenshots go to docs/screenshots/ with UPDATE_SCREENSHOTS=1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import {
  buildTenant,
  clickAndLoad,
  createUser,
  newPage,
  startHarness,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';
import { addPasskey, addVirtualAuthenticator, axeViolations, credentialsOf, openAccountPage } from './support/passkeys';

const OUT =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.resolve(__dirname, '..', 'docs', 'screenshots')
    : fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-screenshots-'));

const passkeyNames = (page: Page) => page.locator('.passkey-list .scope-title').allInnerTexts();

describe('passkeys on the account page (localhost)', () => {
  let h: Harness;
  let tenant: Tenant;
  let context: BrowserContext;
  let page: Page;
  useBrowserSuite((s) => ({ h, tenant, context, page } = s), { hostName: 'localhost' });

  it('adds two named passkeys (mouse and keyboard), lists them and removes one', async () => {
    const user = await createUser(h, tenant);
    const laptop = await addVirtualAuthenticator(page);
    await openAccountPage(h, tenant, page, user.email);
    const section = page.getByRole('region', { name: 'Passkeys' });
    await section.getByText('You have no passkeys yet.').waitFor();
    expect(await section.getByText('Adding a passkey needs JavaScript').isHidden()).toBe(true);

    await addPasskey(page, 'Work laptop');
    await page.getByText('Passkey “Work laptop” added.').waitFor();
    expect(await credentialsOf(laptop)).toHaveLength(1);
    // One authenticator holds one passkey per account (excludeCredentials): the second is another device.
    await laptop.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: laptop.authenticatorId });
    const phone = await addVirtualAuthenticator(page);
    await addPasskey(page, 'Phone', 'keyboard');
    await page.getByText('Passkey “Phone” added.').waitFor();
    expect(await passkeyNames(page)).toEqual(['Work laptop', 'Phone']);
    expect(await credentialsOf(phone)).toHaveLength(1);
    expect(await s().passkeys.count(tenant.platform.id, user.id)).toBe(2);
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('region', { name: 'Passkeys' }).scrollIntoViewIfNeeded();
    await page.evaluate(() => document.fonts.ready);
    await page.getByRole('region', { name: 'Passkeys' }).screenshot({ path: path.join(OUT, 'account-passkeys.png') });

    await clickAndLoad(page, page.getByRole('button', { name: 'Remove passkey Work laptop' }));
    await page.getByText('Passkey “Work laptop” removed.').waitFor();
    expect(await passkeyNames(page)).toEqual(['Phone']);
    expect((await s().passkeys.list(tenant.platform.id, user.id)).map((p) => p.name)).toEqual(['Phone']);
  });

  it('signs in on the account page with a passkey alone', async () => {
    const user = await createUser(h, tenant);
    await addVirtualAuthenticator(page);
    await openAccountPage(h, tenant, page, user.email);
    await addPasskey(page, 'Laptop');
    await page.getByText('Passkey “Laptop” added.').waitFor();
    await context.clearCookies();
    await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}`);
    await clickAndLoad(page, page.getByRole('button', { name: 'Sign in with a passkey' }));
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    expect(await page.getByText(user.email).count()).toBeGreaterThan(0);
  });

  it('refuses to register the same authenticator twice for one account', async () => {
    const user = await createUser(h, tenant);
    await addVirtualAuthenticator(page);
    await openAccountPage(h, tenant, page, user.email);
    await addPasskey(page, 'First');
    await page.getByText('Passkey “First” added.').waitFor();
    // excludeCredentials: the authenticator refuses; the page says so and stays usable.
    await page.getByLabel('Passkey name').fill('Second');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /already registered|cancelled/ })
      .waitFor();
    expect(await passkeyNames(page)).toEqual(['First']);
  });

  it('loads only our two scripts, and only on the page with passkey buttons', async () => {
    const user = await createUser(h, tenant);
    const noButtons = await page.goto(`${h.base}/account/signed-out?platform_guid=${tenant.platform.id}`);
    expect(noButtons!.headers()['content-security-policy']).toContain("script-src 'none'");
    expect(await page.locator('script').count()).toBe(0);
    await page.goto(`${h.base}/account/signin?platform_guid=${tenant.platform.id}`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await clickAndLoad(page, page.getByRole('button', { name: 'Sign in', exact: true }));
    // The account page loads them on its Security tab only, where "Add a passkey" is.
    const account = await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}&section=security`);
    const csp = account!.headers()['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("script-src-attr 'none'");
    const scripts = await page
      .locator('script')
      .evaluateAll((els) => els.map((e) => (e as HTMLScriptElement).getAttribute('src')));
    expect(scripts).toEqual(['/static/vendor/simplewebauthn-browser.js', '/static/passkeys.js']);
    const bundle = await fetch(`${h.base}/static/vendor/simplewebauthn-browser.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
  });

  it('without JavaScript: the list and Remove work, "Add a passkey" is not offered', async () => {
    const user = await createUser(h, tenant);
    const ctx = await h.browser.newContext({ javaScriptEnabled: false });
    try {
      const p = await ctx.newPage();
      await openAccountPage(h, tenant, p, user.email);
      expect(await p.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0);
      await p.getByText('Adding a passkey needs JavaScript').waitFor();
    } finally {
      await ctx.close();
    }
  });

  const s = () => h.t.services;
});

describe('passkeys with an IP BASE_URL', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(); // http://127.0.0.1:PORT
  });
  afterAll(() => h?.close());

  it('hides the passkey buttons with a one-line note and keeps scripts off', async () => {
    const tenant = await buildTenant(h);
    const user = await createUser(h, tenant);
    const { context, page } = await newPage(h);
    try {
      await addVirtualAuthenticator(page);
      await openAccountPage(h, tenant, page, user.email);
      await page.getByText('Passkeys are not available here: this server is reached by an IP address').waitFor();
      expect(await page.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0);
      expect(await page.locator('script').count()).toBe(0);
      const res = await page.reload();
      expect(res!.headers()['content-security-policy']).toContain("script-src 'none'");
    } finally {
      await context.close();
    }
  });
});
