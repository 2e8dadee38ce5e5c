// An operator's passkey in real Chromium, with its
// virtual authenticator: enrolled as the first second factor at sign-in, then used after the
// password, a second one added and removed on "Your account", and the authenticator app set up and
// removed there. axe-core on each page; screenshot.
//   UPDATE_SCREENSHOTS=1 writes it to docs/screenshots/.
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { cliActor } from '../src/domain/admin';
import { totpAt } from '../test/support/totp';
import { clickAndLoad, newPage, startHarness, type Harness } from './support/harness';
import { addVirtualAuthenticator, axeViolations, credentialsOf, SCREENSHOTS } from './support/passkeys';

const PASSWORD = 'operator password long enough';
const email = 'grace.hopper@example.com';
let h: Harness;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  h = await startHarness({ hostName: 'localhost', ownDatabase: true }); // a host name: browsers refuse an IP as RP id
  await h.t.services.operators.create(cliActor(), { email, platformId: null, password: PASSWORD });
  ({ context, page } = await newPage(h));
});
afterAll(async () => {
  await context?.close();
  await h?.close();
});

const h1 = (p: Page) => p.locator('h1').first().innerText();

async function signInWithPassword(p: Page) {
  await p.goto(`${h.base}/admin/sign-in`);
  await p.getByLabel('Email').fill(email);
  await p.getByLabel('Password').fill(PASSWORD);
  await clickAndLoad(p, p.getByRole('button', { name: 'Sign in' }));
}

it('enrols a passkey as the first second factor, signs in with password + passkey, adds and removes a second one', async () => {
  const authenticator = await addVirtualAuthenticator(page);

  // First sign-in: no second factor yet, so the enrolment page offers the app or a passkey.
  await signInWithPassword(page);
  expect(await h1(page)).toBe('Set up authenticator app');
  await page.getByRole('heading', { name: 'Or add a passkey' }).waitFor();
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-passkey-enrol.png'), fullPage: true });
  await page.getByLabel('Passkey name').fill('Laptop');
  await clickAndLoad(page, page.getByRole('button', { name: 'Add a passkey' }));
  expect(await h1(page)).toBe('Platforms');
  expect(await credentialsOf(authenticator)).toHaveLength(1);

  // Sign out; the next sign-in asks for the passkey (no code field: no app).
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign out' }));
  await signInWithPassword(page);
  expect(await h1(page)).toBe('Two-step verification');
  expect(await page.getByLabel('Code').count()).toBe(0);
  const use = page.getByRole('button', { name: 'Use a passkey' });
  await use.waitFor();
  expect(await axeViolations(page)).toEqual([]);
  await clickAndLoad(page, use);
  expect(await h1(page)).toBe('Platforms');
  const signedIn = (await h.t.services.audit.list({ kind: 'operator.signed_in' }, 10)).events.filter(
    (e) => e.details.email === email,
  );
  expect(signedIn.map((e) => e.details.second_factor)).toEqual(['passkey', 'passkey']);

  // "Your account" from the header's email: the only passkey cannot be removed.
  await clickAndLoad(page, page.getByRole('link', { name: email }));
  expect(await h1(page)).toBe('Your account');
  expect(await page.getByText('Your only second factor').count()).toBe(1);
  expect(await page.getByRole('button', { name: /^Remove/ }).count()).toBe(0);

  // A second passkey on another authenticator (the first one's credential is excluded, as a security key would be new).
  await authenticator.cdp.send('WebAuthn.removeVirtualAuthenticator', {
    authenticatorId: authenticator.authenticatorId,
  });
  await addVirtualAuthenticator(page);
  await page.getByLabel('Passkey name').fill('Security key');
  await clickAndLoad(page, page.getByRole('button', { name: 'Add a passkey' }));
  await page.getByText('Passkey “Security key” added.').waitFor();
  expect(await page.locator('.passkey-table tbody td:first-child').allInnerTexts()).toEqual(['Laptop', 'Security key']);
  expect(await axeViolations(page)).toEqual([]);
  await page.evaluate(() => document.fonts.ready);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-passkey.png'), fullPage: true });

  await clickAndLoad(page, page.getByRole('button', { name: 'Remove passkey Security key' }));
  await page.getByText('Passkey “Security key” removed.').waitFor();
  expect(await page.locator('.passkey-table tbody td:first-child').allInnerTexts()).toEqual(['Laptop']);

  // The authenticator app next to the passkey: set up on "Your account" (QR code, Setup key, Code), then removed again.
  await clickAndLoad(page, page.getByRole('link', { name: 'Set up authenticator app' }));
  expect(await h1(page)).toBe('Set up authenticator app');
  expect(await axeViolations(page)).toEqual([]);
  const setupKey = (await page.locator('#setup-key').innerText()).replace(/ /g, '');
  await page.getByLabel('Code').fill(totpAt(setupKey, h.t.services.deps.now()));
  await clickAndLoad(page, page.getByRole('button', { name: 'Verify' }));
  await page.getByText('Authenticator app set up.').waitFor();
  expect(await page.getByRole('button', { name: /^Remove/ }).count()).toBe(2); // the app, and now the only passkey too
  await clickAndLoad(page, page.getByRole('button', { name: 'Remove authenticator app' }));
  await page.getByText('Authenticator app removed.').waitFor();
  expect(await page.getByText('Your only second factor').count()).toBe(1);

  const kinds = (await h.t.services.audit.list({}, 50)).events
    .filter((e) => e.details.email === email)
    .map((e) => e.kind);
  expect(kinds).toEqual(
    expect.arrayContaining([
      'operator.passkey_added',
      'operator.passkey_removed',
      'operator.totp_added',
      'operator.totp_removed',
    ]),
  );
});
