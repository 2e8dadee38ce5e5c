// A passkey as the second factor after a password, in real Chromium (DESIGN §15, issue 13).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import {
  allow, authorizeUrl, buildTenant, clickAndLoad, createUser, expectPage, finishAtCallback, newPage, openAuthorize, pageKind, signIn, startHarness, TEST_PASSWORD,
  type Harness, type Tenant,
} from './support/harness';
import { buildClient, buildPlatform } from '../test/factories';
import { runCommand } from '../src/cli/commands';
import { addPasskey, addVirtualAuthenticator, axeViolations, openAccountPage } from './support/passkeys';

const OUT = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(__dirname, '..', 'docs', 'screenshots') : fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-screenshots-'));

/** A user with one passkey on this page's authenticator; the browser then forgets every cookie. */
async function userWithPasskey(h: Harness, tenant: Tenant, page: Page, context: BrowserContext) {
  const user = await createUser(h, tenant);
  const authenticator = await addVirtualAuthenticator(page);
  await openAccountPage(h, tenant, page, user.email);
  await addPasskey(page, 'Laptop');
  await page.getByText('Passkey “Laptop” added.').waitFor();
  await context.clearCookies();
  return { user, authenticator };
}

/** buildTenant, with the platform named "Acme" for the screenshots. */
async function acmeTenant(h: Harness): Promise<Tenant> {
  const platform = await buildPlatform(h.t.services, 'Acme');
  const rp = h.base.replace('://localhost:', '://127.0.0.1:');
  return { platform, client: await buildClient(h.t.services, platform.id, { redirectUris: [`${rp}/__rp/callback`], name: 'Acme Notes' }) };
}

const passkeyButton = (page: Page) => page.getByRole('button', { name: 'Sign in with a passkey' });

/** Chromium's virtual authenticator answers a conditional (autofill) request at once: off for the button's tests. */
const withoutAutofill = (page: Page) => page.addInitScript(() => {
  (window as any).PublicKeyCredential.isConditionalMediationAvailable = async () => false;
});

describe('a passkey as the second factor after a password (localhost)', () => {
  let h: Harness;
  let tenant: Tenant;
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    h = await startHarness({ hostName: 'localhost' });
    tenant = await acmeTenant(h);
  });
  afterAll(() => h?.close());
  beforeEach(async () => ({ context, page } = await newPage(h)));
  afterEach(() => context?.close());

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
    await page.screenshot({ path: path.join(OUT, 'second-factor-passkey.png') });
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
    expect(await page.locator('.passkey-list .scope-title').allInnerTexts()).toEqual(['Laptop']);
  });
});

