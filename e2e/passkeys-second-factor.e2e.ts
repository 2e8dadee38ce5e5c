// A passkey as the second factor after a password, in real Chromium.
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import {
  allow,
  authorizeUrl,
  clickAndLoad,
  finishAtCallback,
  openAuthorize,
  pageKind,
  signIn,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';
import { runCommand } from '../src/cli/commands';
import { acmeTenant, axeViolations, SCREENSHOTS, userWithPasskey, withoutAutofill } from './support/passkeys';

describe('a passkey as the second factor after a password (localhost)', () => {
  let h: Harness;
  let tenant: Tenant;
  let context: BrowserContext;
  let page: Page;
  useBrowserSuite((s) => ({ h, tenant, context, page } = s), { hostName: 'localhost', tenant: acmeTenant });

  it('password, then "Use a passkey" on the second-factor page: tokens with amr pwd + hwk + mfa', async () => {
    const { user } = await userWithPasskey(h, tenant, page, context);
    await withoutAutofill(page);
    // The app asks for two factors (a passkey alone does not turn two-step sign-in on).
    await openAuthorize(page, authorizeUrl(h, tenant, { acr_values: 'urn:latchkey:acr:mfa' }));
    await signIn(page, user.email);
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    expect(await page.getByLabel('Code').count()).toBe(0); // no authenticator app: the passkey is the factor
    const use = page.getByRole('button', { name: 'Use a passkey' });
    await use.waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'second-factor-passkey.png') });
    // Keyboard: focus the button and press Enter.
    await use.focus();
    const nav = page.waitForNavigation({ waitUntil: 'load' });
    await page.keyboard.press('Enter');
    await nav;
    if ((await pageKind(page)) === 'consent') await allow(page);
    const { idToken } = await finishAtCallback(h, tenant, page);
    expect(idToken!.sub).toBe(user.id);
    expect(idToken!.amr).toEqual(expect.arrayContaining(['pwd', 'hwk', 'mfa']));
    expect(idToken!.acr).toBe('urn:latchkey:acr:mfa');
  });
  it('the account page\'s own sign-in under policy required: password, then "Use a passkey" (no authenticator app)', async () => {
    const { user } = await userWithPasskey(h, tenant, page, context);
    await runCommand(h.t.services, ['platform', 'mfa', '--platform', tenant.platform.id, '--policy', 'required']);
    await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await clickAndLoad(page, page.getByRole('button', { name: 'Sign in', exact: true }));
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    expect(await page.getByLabel('Code').count()).toBe(0);
    await clickAndLoad(page, page.getByRole('button', { name: 'Use a passkey' }));
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await clickAndLoad(page, page.getByRole('link', { name: 'Security', exact: true })); // where the passkeys are listed
    expect(await page.locator('.passkey-list .scope-title').allInnerTexts()).toEqual(['Laptop']);
  });
});
