// Signing in with a passkey in real Chromium: passwordless through the
// authorization flow to tokens, user verification enforced by the server, conditional UI markup,
// and the sign-in page of an IP BASE_URL. Chromium's virtual authenticator holds the passkeys.
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import {
  allow,
  authorizeUrl,
  buildTenant,
  clickAndLoad,
  createUser,
  expectPage,
  finishAtCallback,
  newPage,
  openAuthorize,
  pageKind,
  signIn,
  startHarness,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';
import {
  acmeTenant,
  addVirtualAuthenticator,
  axeViolations,
  SCREENSHOTS,
  userWithPasskey,
  withoutAutofill,
} from './support/passkeys';

const passkeyButton = (page: Page) => page.getByRole('button', { name: 'Sign in with a passkey' });

describe('sign in with a passkey (localhost)', () => {
  let h: Harness;
  let tenant: Tenant;
  let context: BrowserContext;
  let page: Page;
  useBrowserSuite((s) => ({ h, tenant, context, page } = s), { hostName: 'localhost', tenant: acmeTenant });

  it('passwordless: the passkey alone, through consent to a code exchanged for tokens', async () => {
    const { user } = await userWithPasskey(h, tenant, page, context);
    await withoutAutofill(page);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await expectPage(page, 'signin');
    expect(await page.getByLabel('Email').getAttribute('autocomplete')).toBe('username webauthn'); // conditional UI
    await passkeyButton(page).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'signin-passkey.png') });
    await clickAndLoad(page, passkeyButton(page));
    if ((await pageKind(page)) === 'consent') await allow(page);
    const { idToken } = await finishAtCallback(h, tenant, page);
    expect(idToken!.sub).toBe(user.id);
    // RFC 8176: a device-bound key and user verification (two factors in one), no password.
    expect(idToken!.amr).toEqual(['hwk', 'user', 'mfa']);
    expect(idToken!.acr).toBe('urn:latchkey:acr:mfa');
    const [stored] = await h.t.services.passkeys.list(tenant.platform.id, user.id);
    expect(stored.lastUsedAt).toBeInstanceOf(Date);
  });

  it("conditional UI: the passkey offered in the Email field's autofill signs in", async () => {
    const { user } = await userWithPasskey(h, tenant, page, context);
    // No click: the page's autofill request (mediation "conditional") is answered by the authenticator.
    const nav = page
      .waitForURL((url) => !url.pathname.startsWith('/interaction/') && !url.pathname.startsWith('/oauth/'), {
        waitUntil: 'load',
      })
      .catch(() => undefined);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await page.waitForLoadState('load');
    await nav;
    if ((await pageKind(page)) !== 'callback') {
      await page.waitForFunction(
        () => document.querySelector('h1')?.textContent?.includes('wants to access'),
        undefined,
        { timeout: 10_000 },
      );
      await allow(page);
    }
    const { idToken } = await finishAtCallback(h, tenant, page);
    expect(idToken!.sub).toBe(user.id);
  });

  it('is keyboard-usable: Tab to "Sign in with a passkey", Enter', async () => {
    await userWithPasskey(h, tenant, page, context);
    await withoutAutofill(page);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await passkeyButton(page).waitFor();
    let focused = '';
    for (let i = 0; i < 15 && focused !== 'Sign in with a passkey'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.innerText?.trim() ?? '');
    }
    expect(focused).toBe('Sign in with a passkey');
    const nav = page.waitForNavigation({ waitUntil: 'load' });
    await page.keyboard.press('Enter');
    await nav;
    expect(['consent', 'callback']).toContain(await pageKind(page));
  });

  it('refuses a passkey sign-in without user verification (the server checks, whatever the page asked)', async () => {
    await userWithPasskey(h, tenant, page, context);
    await withoutAutofill(page);
    await openAuthorize(page, authorizeUrl(h, tenant));
    // A page that asked for no verification (as a tampered script could): the authenticator skips
    // it, and the server still refuses.
    await page.route('**/passkey-options*', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      body.options.userVerification = 'discouraged';
      await route.fulfill({ response: res, json: body });
    });
    await passkeyButton(page).waitFor();
    await clickAndLoad(page, passkeyButton(page));
    await expectPage(page, 'signin');
    await page.getByText('did not verify you').waitFor();
  });

  it('an authenticator that cannot verify the user is refused', async () => {
    const { authenticator } = await userWithPasskey(h, tenant, page, context);
    await withoutAutofill(page);
    await authenticator.cdp.send('WebAuthn.setUserVerified', {
      authenticatorId: authenticator.authenticatorId,
      isUserVerified: false,
    });
    await openAuthorize(page, authorizeUrl(h, tenant));
    await passkeyButton(page).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /cancelled|verify/ })
      .waitFor();
    await expectPage(page, 'signin');
  });

  it('an unknown passkey (registered elsewhere) is refused and the password still works', async () => {
    await addVirtualAuthenticator(page); // holds no passkey of this platform
    await openAuthorize(page, authorizeUrl(h, tenant));
    await passkeyButton(page).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /cancelled|not registered|could not/ })
      .waitFor();
    await expectPage(page, 'signin');
    const user = await createUser(h, tenant);
    await signIn(page, user.email);
    if ((await pageKind(page)) === 'consent') await allow(page);
    expect((await finishAtCallback(h, tenant, page)).idToken!.sub).toBe(user.id);
  });
});

describe('sign-in page with an IP BASE_URL', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());

  it('has no passkey button, a one-line note, and no passkey script', async () => {
    const tenant = await buildTenant(h);
    const { context, page } = await newPage(h);
    try {
      const { res } = await openAuthorize(page, authorizeUrl(h, tenant));
      await expectPage(page, 'signin');
      await page.getByText('Passkeys are not available here').waitFor();
      expect(await passkeyButton(page).count()).toBe(0);
      // No passkey script: the page's only script is the show-password toggle.
      expect(await page.locator('script').evaluateAll((els) => els.map((e) => e.getAttribute('src')))).toEqual([
        '/static/password-toggle.js',
      ]);
      expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
      expect(await page.getByLabel('Email').getAttribute('autocomplete')).toBe('username');
    } finally {
      await context.close();
    }
  });
});
