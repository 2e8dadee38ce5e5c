// TOTP in real Chromium: set up an authenticator app on the account page (QR code,
// "Setup key", first "Code", "Verify"), the recovery codes, then an app's sign-in asks for the
// second factor; keyboard only, axe-core on each new page, screenshots of the three pages.
//   UPDATE_SCREENSHOTS=1 writes them to docs/screenshots/ (as e2e/screenshots.e2e.ts does).
import { generateSync } from 'otplib';
import type { Page } from 'playwright-core';
import { buildClient, buildPlatform } from '../test/factories';
import {
  authorizeUrl,
  callbackParams,
  clickAndLoad,
  createUser,
  exchangeCode,
  jwtPayload,
  newEmail,
  openAuthorize,
  pageKind,
  signIn,
  startHarness,
  type Harness,
  type Tenant,
} from './support/harness';
import { browserContexts, expectAxeClean, shoot } from './support/page-checks';

let h: Harness;
let tenant: Tenant;
const browsers = browserContexts(() => h);
const freshPage = browsers.freshPage;

beforeAll(async () => {
  h = await startHarness();
  const platform = await buildPlatform(h.t.services, 'Acme');
  const client = await buildClient(h.t.services, platform.id, {
    redirectUris: [`${h.base}/__rp/callback`],
    name: 'Acme Notes',
  });
  tenant = { platform, client };
});
afterAll(async () => {
  await browsers.closeAll();
  await h?.close();
});

const code = (secret: string, offsetSteps = 0) =>
  generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });

/** Presses Tab until `target` has the focus (at most 40 times): the control is reachable by keyboard. */
async function tabTo(page: Page, selector: string) {
  for (let i = 0; i < 40; i++) {
    if (await page.locator(selector).evaluate((el) => el === document.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${selector} is not reachable with Tab`);
}

it('sets up an authenticator app on the account page and signs in to an app with it, by keyboard', async () => {
  const email = newEmail('totp');
  const user = await createUser(h, tenant, { email, givenName: 'Grace', familyName: 'Hopper' });
  const page = await freshPage();

  // The account page's own sign-in, then "Set up authenticator app" (Tab to it, Enter).
  await page.goto(`${h.base}/account/signin?platform_guid=${tenant.platform.id}`);
  await signIn(page, email);
  expect(await page.locator('h1').innerText()).toBe('Your account');
  await clickAndLoad(page, page.getByRole('link', { name: 'Security', exact: true })); // two-step verification is on the Security tab
  await tabTo(page, 'button:text-is("Set up authenticator app")');
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);

  expect(await page.locator('h1').innerText()).toBe('Set up authenticator app');
  const qr = page.getByRole('img', { name: /QR code/ });
  await expect(qr.isVisible()).resolves.toBe(true);
  expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true); // the data: SVG rendered under the CSP
  await expect(page.getByRole('heading', { name: 'Setup key' }).isVisible()).resolves.toBe(true);
  const secret = (await page.locator('#setup-key').innerText()).replace(/\s/g, '');
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  await expectAxeClean(page);
  await shoot(page, 'totp-setup');

  // The code field has the focus; type the app's code and press Enter ("Verify").
  expect(await page.getByLabel('Code').evaluate((el) => el === document.activeElement)).toBe(true);
  await page.keyboard.type(code(secret));
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  expect(await page.locator('h1').innerText()).toBe('Save your recovery codes');
  const recovery = await page.locator('.mfa-recovery-codes code').allInnerTexts();
  expect(recovery).toHaveLength(10);
  await expectAxeClean(page);
  await shoot(page, 'recovery-codes');
  await clickAndLoad(page, page.getByRole('link', { name: 'Continue' }));
  expect(await page.locator('h1').innerText()).toBe('Your account');
  expect(await page.getByText('Recovery codes left: 10 of 10').isVisible()).toBe(true);
  await expectAxeClean(page); // the account page with its "Two-step verification" section
  // "Remove authenticator app" asks for a code or the password first (that page too: labelled, axe-clean).
  await clickAndLoad(page, page.getByRole('link', { name: 'Remove authenticator app' }));
  expect(await page.locator('h1').innerText()).toBe('Remove authenticator app');
  await expect(page.getByLabel('Code or password').isVisible()).resolves.toBe(true);
  await expectAxeClean(page);
  await clickAndLoad(page, page.getByRole('link', { name: 'Cancel' }));

  // An app's sign-in in another browser: password, then the second-factor page.
  const other = await freshPage();
  await openAuthorize(other, authorizeUrl(h, tenant));
  expect(await pageKind(other)).toBe('signin');
  await signIn(other, email);
  expect(await other.locator('h1').innerText()).toBe('Two-step verification');
  await expect(other.getByRole('link', { name: 'Use a recovery code' }).isVisible()).resolves.toBe(true);
  await expectAxeClean(other);
  await shoot(other, 'second-factor');
  expect(await other.getByLabel('Code').evaluate((el) => el === document.activeElement)).toBe(true);
  await other.keyboard.type(code(secret, 1)); // the setup used this step; the next one is accepted (±1 step)
  await Promise.all([other.waitForNavigation(), other.keyboard.press('Enter')]);
  if (await other.getByRole('button', { name: 'Allow' }).count())
    await clickAndLoad(other, other.getByRole('button', { name: 'Allow' }));
  const tokens = await exchangeCode(h, tenant, callbackParams(other).get('code')!);
  const claims = jwtPayload(tokens.id_token!);
  expect(claims.sub).toBe(user.id);
  expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
  expect(claims.acr).toBe('urn:latchkey:acr:mfa');

  // The recovery-code form of the same page, in a third browser, also axe-clean; a recovery code signs in.
  const third = await freshPage();
  await openAuthorize(third, authorizeUrl(h, tenant));
  await signIn(third, email);
  await clickAndLoad(third, third.getByRole('link', { name: 'Use a recovery code' }));
  await expect(third.getByLabel('Recovery code').isVisible()).resolves.toBe(true);
  await expectAxeClean(third);
  await third.getByLabel('Recovery code').fill(recovery[0]);
  await clickAndLoad(third, third.getByRole('button', { name: 'Verify' }));
  if (await third.getByRole('button', { name: 'Allow' }).count())
    await clickAndLoad(third, third.getByRole('button', { name: 'Allow' }));
  expect(callbackParams(third).get('code')).toBeTruthy();
});
