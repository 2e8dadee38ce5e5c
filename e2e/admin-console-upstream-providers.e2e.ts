// The console's Upstream providers screen and a user's Linked accounts in real Chromium:
// an operator opens the platform's tab, sees the callback URL to register, adds an OpenID Connect
// provider (the secret typed in a password field, never shown again), edits it, opens a user with a
// linked account and unlinks it, then removes the provider. axe-core on each page, and screenshots.
//   UPDATE_SCREENSHOTS=1 writes them to docs/screenshots/ (as e2e/admin-console.e2e.ts does).
import { generateSync } from 'otplib';
import type { Page } from 'playwright-core';
import { cliActor } from '../src/domain/admin';
import { newId } from '../src/crypto/random';
import * as identities from '../src/repositories/user-identity.repository';
import { buildPlatform, buildUser } from '../test/factories';
import { clickAndLoad, startHarness, type Harness } from './support/harness';
import { browserContexts, expectAxeClean, shoot } from './support/page-checks';

const PASSWORD = 'operator password long enough';
const SECRET = 'upstream-secret-typed-once';

let h: Harness;
let page: Page;
let platformId: string;
let userId: string;
const operatorEmail = 'margaret.hamilton@example.com';
const browsers = browserContexts(() => h);

beforeAll(async () => {
  h = await startHarness({ ownDatabase: true });
  await h.t.services.operators.create(cliActor(), { email: operatorEmail, platformId: null, password: PASSWORD });
  const p = await buildPlatform(h.t.services, 'Acme Travel');
  platformId = p.id;
  const google = await h.t.services.admin.upstreamProviders.create(cliActor(), p.id, {
    kind: 'google',
    client_id: '1234-acme.apps.googleusercontent.com',
    client_secret: 'google-secret',
  });
  const u = await buildUser(h.t.services, p.id, {
    email: 'grace.hopper@navy.example',
    givenName: 'Grace',
    familyName: 'Hopper',
    emailVerified: true,
  });
  userId = u.id;
  await identities.insertUnlessLinked(
    h.t.database.db,
    {
      id: newId(),
      platformId: p.id,
      userId: u.id,
      providerId: google.id,
      subject: '107691503500061507151',
      email: 'grace.hopper@gmail.example',
      sealedTokens: null,
    },
    new Date(),
  );
  page = await browsers.freshPage();
});
afterAll(async () => {
  await browsers.closeAll();
  await h?.close();
});

const code = (key: string) => generateSync({ secret: key, epoch: Math.floor(Date.now() / 1000) });
const flash = (p: Page) => p.locator('.alert-ok').innerText();

it("signs in and opens the platform's Upstream providers tab: the callback URL and the Google preset", async () => {
  await page.goto(`${h.base}/admin`);
  await page.getByLabel('Email').fill(operatorEmail);
  await page.getByLabel('Password').fill(PASSWORD);
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign in' }));
  const key = (await page.locator('#setup-key').innerText()).replace(/\s/g, '');
  await page.getByLabel('Code').fill(code(key));
  await clickAndLoad(page, page.getByRole('button', { name: 'Verify' }));
  await clickAndLoad(page, page.getByRole('link', { name: 'Acme Travel' }));
  await clickAndLoad(page, page.getByRole('link', { name: 'Upstream providers', exact: true }));
  expect(await page.locator('.console-tabs a[aria-current="page"]').innerText()).toBe('Upstream providers');
  expect(await page.locator('#callback-url').innerText()).toBe(`${h.base}/platforms/${platformId}/upstream/callback`);
  expect(await page.locator('.console-table tbody tr').innerText()).toContain('Continue with Google');
  await expectAxeClean(page);
  await shoot(page, 'admin-upstream-providers');
});

it('adds an OpenID Connect provider; its page shows the callback URL and never the secret', async () => {
  await page.getByLabel('Kind').selectOption('oidc');
  await page.getByLabel('Display name').fill('Acme SSO');
  await page.getByLabel('Issuer').fill('https://sso.acme.example');
  await page.getByLabel('Client id').fill('latchkey');
  await page.getByLabel('Client secret').fill(SECRET);
  await page.getByLabel('Claim mapping').fill('email=mail');
  await clickAndLoad(page, page.getByRole('button', { name: 'Add provider' }));
  expect(await flash(page)).toBe('Provider "Acme SSO" added. Register the callback URL below at Acme SSO.');
  expect(await page.getByRole('heading', { name: 'Acme SSO', level: 2 }).count()).toBe(1);
  expect(await page.locator('#callback-url').innerText()).toBe(`${h.base}/platforms/${platformId}/upstream/callback`);
  expect(await page.getByLabel('New client secret').inputValue()).toBe('');
  expect(await page.content()).not.toContain(SECRET);
  await expectAxeClean(page);
  await shoot(page, 'admin-upstream-provider');

  await page.getByLabel('Display name').fill('Acme Login');
  await page.getByLabel('Enabled').uncheck();
  await clickAndLoad(page, page.getByRole('button', { name: 'Save changes' }));
  expect(await flash(page)).toBe('Changes saved.');
  expect(await page.locator('.console-head .badge').innerText()).toBe('disabled');
  expect(await h.t.services.federation.providers.forSignIn(platformId, 'acme-sso')).toBeUndefined();
});

it('the user page lists the linked Google account and unlinks it', async () => {
  await page.goto(`${h.base}/admin/platforms/${platformId}/users/${userId}`);
  const linked = page.locator('section[aria-labelledby="identities-title"]');
  expect(await linked.locator('tbody tr').innerText()).toContain('grace.hopper@gmail.example');
  await expectAxeClean(page);
  await clickAndLoad(page, linked.getByRole('button', { name: 'Unlink Google account' }));
  expect(await flash(page)).toBe('Google account unlinked.');
  expect(await linked.innerText()).toContain('No upstream account is linked');
  expect((await h.t.services.audit.list({ platformId, kind: 'identity.unlinked' }, 1)).events[0]).toMatchObject({
    actorType: 'operator',
    actorName: operatorEmail,
  });
});

it('removes the provider after "I understand"', async () => {
  await page.goto(`${h.base}/admin/platforms/${platformId}/upstream-providers`);
  await clickAndLoad(page, page.getByRole('link', { name: 'Continue with Acme Login' }));
  await page.getByLabel('I understand: this cannot be undone').check();
  await clickAndLoad(page, page.getByRole('button', { name: 'Remove provider' }));
  expect(await flash(page)).toBe('Provider "Acme Login" removed.');
  expect(await page.locator('.console-table tbody tr').count()).toBe(1);
});
