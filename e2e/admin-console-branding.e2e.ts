// Branding in real Chromium: an operator opens a platform's "Branding" screen, saves an
// accent colour and support email, uploads a logo through the file input; the hosted sign-in page
// then wears them (button colour, header logo that loads, footer email). axe-core on the screen.
import { generateSync } from 'otplib';
import type { Page } from 'playwright-core';
import { cliActor } from '../src/domain/admin';
import { authorizeUrl, buildTenant, clickAndLoad, startHarness, type Harness } from './support/harness';
import { browserContexts, expectAxeClean, shoot } from './support/page-checks';

const PASSWORD = 'operator password long enough';
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40"><rect width="120" height="40" rx="8" fill="#0f766e"/><circle cx="20" cy="20" r="10" fill="#ffffff"/></svg>';

let h: Harness;
const browsers = browserContexts(() => h);
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await browsers.closeAll();
  await h?.close();
});

const code = (key: string) => generateSync({ secret: key, epoch: Math.floor(Date.now() / 1000) });

async function signInOperator(p: Page, email: string) {
  await h.t.services.operators.create(cliActor(), { email, platformId: null, password: PASSWORD });
  await p.goto(`${h.base}/admin`);
  await p.getByLabel('Email').fill(email);
  await p.getByLabel('Password').fill(PASSWORD);
  await clickAndLoad(p, p.getByRole('button', { name: 'Sign in' }));
  const key = (await p.locator('#setup-key').innerText()).replace(/\s/g, '');
  await p.getByLabel('Code').fill(code(key));
  await clickAndLoad(p, p.getByRole('button', { name: 'Verify' }));
}

it('an operator brands a platform on the Branding screen; the sign-in page shows the colour and the logo', async () => {
  const tenant = await buildTenant(h);
  const page = await browsers.freshPage();
  await signInOperator(page, `brand-${Date.now()}@example.com`);

  await page.goto(`${h.base}/admin/platforms/${tenant.platform.id}/clients`);
  await clickAndLoad(page, page.getByRole('link', { name: 'Branding' }));
  expect(await page.locator('h2').first().innerText()).toBe('Branding');
  await expectAxeClean(page);

  // Too light: refused, with the ratio.
  await page.getByLabel('Accent colour').fill('#7dd3fc');
  await clickAndLoad(page, page.getByRole('button', { name: 'Save branding' }));
  expect(await page.getByRole('alert').innerText()).toMatch(/contrast of \d\.\d\d:1 against white/);

  await page.getByLabel('Accent colour').fill('#0f766e');
  await page.getByLabel('Support email').fill('help@acme.example');
  await clickAndLoad(page, page.getByRole('button', { name: 'Save branding' }));
  expect(await page.getByRole('status').innerText()).toContain('Branding saved.');

  await page
    .getByLabel('Upload a logo')
    .setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(SVG) });
  await clickAndLoad(page, page.getByRole('button', { name: 'Upload logo' }));
  expect(await page.getByRole('status').innerText()).toContain('Logo uploaded.');
  expect(
    await page.locator('.branding-logo img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth),
  ).toBeGreaterThan(0);
  await expectAxeClean(page);
  await shoot(page, 'admin-branding');

  const visitor = await browsers.freshPage();
  await visitor.goto(authorizeUrl(h, tenant));
  expect(await visitor.locator('h1').first().innerText()).toBeTruthy();
  const button = visitor.locator('button[type=submit].btn-primary').first();
  expect(await button.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(15, 118, 110)');
  const logo = visitor.locator('img.brand-logo');
  await logo.waitFor();
  expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
  expect(await visitor.locator('body').innerText()).toContain('help@acme.example');
  await expectAxeClean(visitor);
}, 90_000); // two browsers, an operator's sign-in and axe twice: slow on a busy machine
