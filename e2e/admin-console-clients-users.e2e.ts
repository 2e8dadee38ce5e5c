// The console's Clients and Users screens in real Chromium: an operator creates a
// client (its secret shown once), edits its redirect URIs, rotates the secret (shown once again,
// gone on a reload), searches a user by email, opens them, disables and enables them, and sends a
// password reset mail (it arrives). axe-core on each page, and screenshots.
//   UPDATE_SCREENSHOTS=1 writes them to docs/screenshots/ (as e2e/admin-console.e2e.ts does).
import { generateSync } from 'otplib';
import type { Page } from 'playwright-core';
import { cliActor } from '../src/domain/admin';
import { buildClient, buildPlatform, buildUser } from '../test/factories';
import { startSmtpSink, SMTP_PASSWORD, SMTP_USER, type SmtpSink } from '../test/mail/smtp-sink';
import { clickAndLoad, startHarness, type Harness } from './support/harness';
import { browserContexts, expectAxeClean, shoot } from './support/page-checks';

const PASSWORD = 'operator password long enough';

let h: Harness;
let smtp: SmtpSink;
let page: Page;
let platformId: string;
const operatorEmail = 'ada.lovelace@example.com';
const browsers = browserContexts(() => h);
const freshPage = browsers.freshPage;

beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startHarness({
    env: { SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}` },
    mailWorker: true,
    ownDatabase: true,
  });
  await h.t.services.operators.create(cliActor(), { email: operatorEmail, platformId: null, password: PASSWORD });
  const p = await buildPlatform(h.t.services, 'Acme Travel');
  platformId = p.id;
  await buildClient(h.t.services, p.id, {
    name: 'Acme Bookings',
    redirectUris: ['https://bookings.acme.example/callback'],
  });
  await buildClient(h.t.services, p.id, {
    name: 'Acme Mobile',
    type: 'public',
    redirectUris: ['https://m.acme.example/callback'],
    scopes: 'openid profile email offline_access',
  });
  const people: Array<[string, string, string]> = [
    ['grace.hopper@navy.example', 'Grace', 'Hopper'],
    ['alan.turing@bletchley.example', 'Alan', 'Turing'],
    ['katherine.johnson@nasa.example', 'Katherine', 'Johnson'],
    ['edsger.dijkstra@tue.example', 'Edsger', 'Dijkstra'],
    ['barbara.liskov@mit.example', 'Barbara', 'Liskov'],
  ];
  for (const [email, givenName, familyName] of people)
    await buildUser(h.t.services, p.id, {
      email,
      givenName,
      familyName,
      phoneNumber: '+14155550123',
      emailVerified: true,
    });
  page = await freshPage();
});
afterAll(async () => {
  await browsers.closeAll();
  await h?.close();
  await smtp?.stop();
});

const code = (key: string) => generateSync({ secret: key, epoch: Math.floor(Date.now() / 1000) });
const h1 = (p: Page) => p.locator('h1').first().innerText();
const flash = (p: Page) => p.locator('.alert-ok').innerText();
const secretShown = (p: Page) => p.locator('#client-secret');

async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('signs in (password, authenticator set-up) and opens a platform on its Clients tab', async () => {
  await page.goto(`${h.base}/admin`);
  await page.getByLabel('Email').fill(operatorEmail);
  await page.getByLabel('Password').fill(PASSWORD);
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign in' }));
  expect(await h1(page)).toBe('Set up authenticator app');
  const key = (await page.locator('#setup-key').innerText()).replace(/\s/g, '');
  await page.getByLabel('Code').fill(code(key));
  await clickAndLoad(page, page.getByRole('button', { name: 'Verify' }));
  await clickAndLoad(page, page.getByRole('link', { name: 'Acme Travel' }));
  expect(await h1(page)).toBe('Acme Travel');
  expect(await page.locator('.console-tabs a[aria-current="page"]').innerText()).toBe('Clients');
});

it('Clients: creates a confidential client, its secret shown once', async () => {
  await page.getByLabel('Name').fill('Acme Partner Portal');
  await page.getByLabel('Redirect URIs', { exact: true }).fill('https://partners.acme.example/callback');
  await page.getByLabel('phone', { exact: true }).check();
  await clickAndLoad(page, page.getByRole('button', { name: 'Create client' }));
  expect(await flash(page)).toBe('Client "Acme Partner Portal" created.');
  expect(await page.getByRole('heading', { name: 'Acme Partner Portal' }).count()).toBe(1);
  const first = await secretShown(page).innerText();
  expect(first).toMatch(/^\S{32,}$/);
  expect(await page.getByLabel('phone', { exact: true }).isChecked()).toBe(true);
  await page.reload();
  expect(await secretShown(page).count()).toBe(0);
});

it('Clients: edits the redirect URIs, rotates the secret (shown once), lists the clients', async () => {
  await page
    .getByLabel('Redirect URIs', { exact: true })
    .fill('https://partners.acme.example/callback\nhttps://partners.acme.example/oauth/return');
  await page.getByLabel('Post-logout redirect URIs').fill('https://partners.acme.example/signed-out');
  await clickAndLoad(page, page.getByRole('button', { name: 'Save changes' }));
  expect(await flash(page)).toBe('Changes saved.');
  expect(await page.getByLabel('Redirect URIs', { exact: true }).inputValue()).toBe(
    'https://partners.acme.example/callback\nhttps://partners.acme.example/oauth/return',
  );

  await page.getByLabel('Previous secret keeps working').selectOption({ label: '1 day' });
  await clickAndLoad(page, page.getByRole('button', { name: 'Rotate secret' }));
  expect(await flash(page)).toMatch(
    /^New secret issued\. The previous secret works until \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/,
  );
  expect(await secretShown(page).innerText()).toMatch(/^\S{32,}$/);
  await expectAxeClean(page);
  await shoot(page, 'admin-client');
  await page.reload();
  expect(await secretShown(page).count()).toBe(0);

  await clickAndLoad(page, page.getByRole('link', { name: 'Clients', exact: true }).first());
  const rows = page.locator('.console-table tbody tr');
  expect(await rows.count()).toBe(3);
  expect(await rows.filter({ hasText: 'Acme Partner Portal' }).innerText()).toContain(
    'https://partners.acme.example/oauth/return',
  );
  await expectAxeClean(page);
  await shoot(page, 'admin-clients');
});

it('Users: lists, searches by part of the email, opens a user, disables and enables, sends a reset mail', async () => {
  await clickAndLoad(page, page.getByRole('link', { name: 'Users', exact: true }));
  const rows = page.locator('.console-table tbody tr');
  expect(await rows.count()).toBe(5);
  await expectAxeClean(page);
  await shoot(page, 'admin-users');

  await page.getByLabel('Email contains').fill('NAVY');
  await clickAndLoad(page, page.getByRole('button', { name: 'Search' }));
  expect(await rows.count()).toBe(1);
  await clickAndLoad(page, page.getByRole('link', { name: 'grace.hopper@navy.example' }));
  expect(await page.getByRole('heading', { name: 'grace.hopper@navy.example' }).count()).toBe(1);
  expect(await page.locator('.facts').first().innerText()).toContain('+14155550123');

  await clickAndLoad(page, page.getByRole('button', { name: 'Disable' }));
  expect(await flash(page)).toMatch(/^User disabled/);
  expect(await page.locator('.console-head .badge').innerText()).toMatch(/^disabled since/);
  await clickAndLoad(page, page.getByRole('button', { name: 'Enable' }));
  expect(await flash(page)).toBe('User enabled: they can sign in again.');

  await clickAndLoad(page, page.getByRole('button', { name: 'Send password reset mail' }));
  expect(await flash(page)).toMatch(/A password reset mail is queued/);
  await until('the reset mail sent', async () => smtp.received.some((m) => m.to.includes('grace.hopper@navy.example')));
  const trail = page.locator('section[aria-labelledby="trail-title"] tbody tr');
  expect(await trail.first().innerText()).toContain('user.password_reset_sent');
  expect(await trail.filter({ hasText: 'user.disabled' }).innerText()).toContain(operatorEmail);
  await expectAxeClean(page);
  await shoot(page, 'admin-user');

  await clickAndLoad(page, page.getByRole('link', { name: 'All events in the audit log' }));
  expect(new URL(page.url()).searchParams.get('platform')).toBe(platformId);
  expect(await page.getByLabel('Subject (sub)').inputValue()).toMatch(/^[0-9a-f-]{36}$/);
});
