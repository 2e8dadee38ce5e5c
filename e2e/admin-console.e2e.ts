// The admin console in real Chromium: an operator signs in (password, then the
// authenticator app's set-up: QR code, "Setup key", "Code", "Verify"), and uses each screen —
// Platforms, Keys, Rate limits, Mail, Audit log — by its visible labels; axe-core on each page, and
// screenshots. A platform-scoped operator sees its platform only.
//   UPDATE_SCREENSHOTS=1 writes them to docs/screenshots/ (as e2e/screenshots.e2e.ts does).
import { generateSync } from 'otplib';
import type { Page } from 'playwright-core';
import { cliActor } from '../src/domain/admin';
import { buildPlatform, buildUser } from '../test/factories';
import { startSmtpSink, SMTP_PASSWORD, SMTP_USER, type SmtpSink } from '../test/mail/smtp-sink';
import { clickAndLoad, newEmail, startHarness, type Harness } from './support/harness';
import { browserContexts, expectAxeClean, shoot } from './support/page-checks';

const PASSWORD = 'operator password long enough';

let h: Harness;
let smtp: SmtpSink;
let page: Page;
let secret: string;
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
  page = await freshPage();
});
afterAll(async () => {
  await browsers.closeAll();
  await h?.close();
  await smtp?.stop();
});

const code = (key: string, offsetSteps = 0) =>
  generateSync({ secret: key, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });
const h1 = (p: Page) => p.locator('h1').first().innerText();
const flash = (p: Page) => p.getByRole('status').innerText();

async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function signInWithPassword(p: Page, email: string) {
  await p.goto(`${h.base}/admin`);
  expect(new URL(p.url()).pathname).toBe('/admin/sign-in');
  await p.getByLabel('Email').fill(email);
  await p.getByLabel('Password').fill(PASSWORD);
  await clickAndLoad(p, p.getByRole('button', { name: 'Sign in' }));
}

/** The set-up page: reads the setup key, types the app's code, "Verify". Returns the key. */
async function enrol(p: Page): Promise<string> {
  expect(await h1(p)).toBe('Set up authenticator app');
  const key = (await p.locator('#setup-key').innerText()).replace(/\s/g, '');
  await p.getByLabel('Code').fill(code(key));
  await clickAndLoad(p, p.getByRole('button', { name: 'Verify' }));
  return key;
}

it('signs in with a password, then must set up an authenticator app before seeing anything', async () => {
  await page.goto(`${h.base}/admin/platforms`);
  expect(await h1(page)).toBe('Sign in');
  await expectAxeClean(page);
  await shoot(page, 'admin-signin');

  // A wrong password: one generic message, and still the sign-in page.
  await page.getByLabel('Email').fill(operatorEmail);
  await page.getByLabel('Password').fill('not the password');
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign in' }));
  expect(await page.getByRole('alert').innerText()).toBe('Wrong email or password');

  await page.getByLabel('Password').fill(PASSWORD);
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign in' }));
  expect(await h1(page)).toBe('Set up authenticator app');
  const qr = page.getByRole('img', { name: /QR code/ });
  expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  await expect(page.getByRole('heading', { name: 'Setup key' }).isVisible()).resolves.toBe(true);
  await expectAxeClean(page);
  await shoot(page, 'admin-totp-setup');

  // Nothing of the console before the code: a console URL goes back to sign-in.
  const other = await page.context().newPage();
  await other.goto(`${h.base}/admin/platforms`);
  expect(new URL(other.url()).pathname).toBe('/admin/sign-in');
  await other.close();

  secret = await enrol(page);
  expect(await h1(page)).toBe('Platforms');
  expect(await page.locator('.console-email').innerText()).toBe(operatorEmail);
});

it('asks for the code at the next sign-in ("Two-step verification")', async () => {
  const p = await freshPage();
  await signInWithPassword(p, operatorEmail);
  expect(await h1(p)).toBe('Two-step verification');
  await expectAxeClean(p);
  await shoot(p, 'admin-signin-code');
  await p.getByLabel('Code').fill(code(secret, 1)); // the enrolment used this step; the next one is accepted (±1 step)
  await clickAndLoad(p, p.getByRole('button', { name: 'Verify' }));
  expect(await h1(p)).toBe('Platforms');
  await clickAndLoad(p, p.getByRole('button', { name: 'Sign out' }));
  expect(await h1(p)).toBe('Sign in');
});

it('Platforms: lists the platforms and creates one', async () => {
  for (const name of ['Globex Bank', 'Initech', 'Umbrella Health']) await buildPlatform(h.t.services, name);
  await clickAndLoad(page, page.getByRole('link', { name: 'Platforms' }));
  // An empty name: the error on the page, nothing created.
  await clickAndLoad(page, page.getByRole('button', { name: 'Create platform' }));
  expect(await page.getByRole('alert').innerText()).toMatch(/^Name: must not be empty/);

  await page.getByLabel('Name').fill('Acme Travel');
  await clickAndLoad(page, page.getByRole('button', { name: 'Create platform' }));
  expect(await h1(page)).toBe('Acme Travel');
  expect(await flash(page)).toMatch(/Platform "Acme Travel" created/);
  expect(await page.locator('.console-tabs a[aria-current="page"]').innerText()).toBe('Clients'); // a platform opens on its first screen

  await clickAndLoad(page, page.getByRole('link', { name: 'Platforms', exact: true }).first());
  const rows = page.locator('.console-table tbody tr');
  expect(await rows.filter({ hasText: 'Acme Travel' }).count()).toBe(1);
  expect(await rows.filter({ hasText: 'Globex Bank' }).count()).toBe(1);
  await expectAxeClean(page);
  await shoot(page, 'admin-platforms');
});

it('Keys: lists the signing keys and rotates', async () => {
  await clickAndLoad(page, page.getByRole('link', { name: 'Acme Travel' }));
  await clickAndLoad(page, page.getByRole('link', { name: 'Keys', exact: true }));
  const rows = page.locator('.console-table tbody tr');
  expect(await rows.count()).toBe(1);
  const first = await rows.first().locator('code').innerText();
  await clickAndLoad(page, page.getByRole('button', { name: 'Rotate key' }));
  expect(await flash(page)).toMatch(/^New active key [0-9a-f-]{36}\./);
  expect(await rows.count()).toBe(2);
  expect(await rows.first().innerText()).toContain('active');
  expect(await rows.nth(1).innerText()).toContain(first);
  expect(await rows.nth(1).innerText()).toContain('retiring');
  await clickAndLoad(page, page.getByRole('button', { name: 'Rotate key' }));
  await clickAndLoad(page, page.getByRole('button', { name: `Retire key ${first}` }));
  expect(await flash(page)).toBe(`Key ${first} retired: the tokens it signed no longer verify.`);
  expect(await rows.count()).toBe(3);
  expect(await rows.nth(2).locator('.badge').innerText()).toBe('retired');
  await expectAxeClean(page);
  await shoot(page, 'admin-keys');
  await clickAndLoad(page, page.getByRole('link', { name: 'Platforms', exact: true }).first());
});

it('Rate limits: sets an override, refuses a bad value on the page, resets it', async () => {
  await clickAndLoad(page, page.getByRole('link', { name: 'Acme Travel' }));
  await clickAndLoad(page, page.getByRole('link', { name: 'Rate limits' }));
  expect(await page.locator('.console-tabs a[aria-current="page"]').innerText()).toBe('Rate limits');
  const tokenRow = () => page.locator('tr', { has: page.locator('th', { hasText: /^token$/ }) });

  await page.getByLabel('Requests per minute for token').fill('many');
  await clickAndLoad(page, page.getByRole('button', { name: 'Set token' }));
  expect(await page.getByRole('alert').innerText()).toMatch(/^Requests per minute: /);

  await page.getByLabel('Requests per minute for token').fill('240');
  await clickAndLoad(page, page.getByRole('button', { name: 'Set token' }));
  expect(await flash(page)).toBe('token: 240 requests per minute.');
  expect(await tokenRow().locator('td').nth(2).innerText()).toBe('240');
  await page.getByLabel('Requests per minute for authorize').fill('30');
  await clickAndLoad(page, page.getByRole('button', { name: 'Set authorize' }));
  await page.getByLabel('Requests per minute for introspect').fill('600');
  await clickAndLoad(page, page.getByRole('button', { name: 'Set introspect' }));
  await clickAndLoad(page, page.getByRole('button', { name: 'Reset authorize' }));
  expect(await flash(page)).toBe('authorize: back to the default limit.');
  await expectAxeClean(page);
  await shoot(page, 'admin-rate-limits');
});

it('Mail: counts and lists the outbox, filters by status, retries the dead mails', async () => {
  const platformId = new URL(page.url()).pathname.split('/')[3];
  const platform = (await h.t.services.platforms.findPlatform(platformId))!;
  const refused: string[] = [];
  for (const [i, name] of ['grace', 'alan', 'katherine', 'edsger', 'barbara'].entries()) {
    const email = newEmail(name);
    if (i % 2 === 1) {
      smtp.rejecting.add(email); // 550 at RCPT: dead at once
      refused.push(email);
    }
    await buildUser(h.t.services, platform.id, { email, emailVerified: true });
    await h.t.services.account.passwordReset.requestReset(platform, email);
  }
  await until('three sent and two dead', async () => {
    const { counts } = await h.t.services.mailAdmin.list(cliActor(), platform.id, undefined, 10);
    return counts.sent === 3 && counts.dead === 2;
  });

  await clickAndLoad(page, page.getByRole('link', { name: 'Mail' }));
  expect(await page.locator('.stat', { hasText: 'dead' }).locator('.stat-value').innerText()).toBe('2');
  expect(await page.locator('.console-table tbody tr').count()).toBe(5);
  await expectAxeClean(page);
  await shoot(page, 'admin-mail');

  await page.getByLabel('Status', { exact: true }).selectOption('dead');
  await clickAndLoad(page, page.getByRole('button', { name: 'Filter' }));
  expect(await page.locator('.console-table tbody tr').count()).toBe(2);

  for (const email of refused) smtp.rejecting.delete(email);
  await clickAndLoad(page, page.getByRole('button', { name: 'Retry all dead' }));
  expect(await flash(page)).toBe('2 dead mails are queued again.');
  await until('the retried mails sent', async () =>
    refused.every((email) => smtp.received.some((m) => m.to.includes(email))),
  );
});

it('Audit log: filters by kind and platform, pages to older events', async () => {
  const globex = (await h.t.services.admin.platforms.list(cliActor(), { limit: 200 })).items.find(
    (p) => p.name === 'Globex Bank',
  )!;
  for (let i = 1; i <= 55; i++) await h.t.services.admin.platforms.setRateLimit(cliActor(), globex.id, 'jwks', 100 + i);

  await clickAndLoad(page, page.getByRole('link', { name: 'Audit log' }));
  expect(await h1(page)).toBe('Audit log');
  await page.getByLabel('Platform').selectOption({ label: 'Acme Travel' });
  await clickAndLoad(page, page.getByRole('button', { name: 'Filter' }));
  const kinds = await page.locator('.audit-table tbody tr td:nth-child(2)').allInnerTexts();
  expect(kinds).toEqual(expect.arrayContaining(['rate_limit.changed', 'platform.created', 'mail.retried']));
  // The operator is the actor of its changes.
  expect(await page.locator('.audit-table tbody tr', { hasText: 'platform.created' }).innerText()).toContain(
    operatorEmail,
  );
  await expectAxeClean(page);
  await shoot(page, 'admin-audit');

  await page.getByLabel('Platform').selectOption({ label: 'Globex Bank' });
  await page.getByLabel('Kind').selectOption('rate_limit.changed');
  await clickAndLoad(page, page.getByRole('button', { name: 'Filter' }));
  expect(await page.locator('.audit-table tbody tr').count()).toBe(50);
  await clickAndLoad(page, page.getByRole('link', { name: 'Older' }));
  expect(await page.locator('.audit-table tbody tr').count()).toBe(5);
  expect(await page.getByRole('link', { name: 'Older' }).count()).toBe(0);
  expect(await page.getByLabel('Kind').inputValue()).toBe('rate_limit.changed'); // the filters stay

  // A bad date: the error on the page, not a server error.
  await page.goto(`${h.base}/admin/audit?since=yesterday`);
  expect(await page.getByRole('alert').innerText()).toMatch(/^Since: must be a date/);
});

it('a platform-scoped operator sees its own platform only', async () => {
  const acme = (await h.t.services.admin.platforms.list(cliActor(), { limit: 200 })).items.find(
    (p) => p.name === 'Acme Travel',
  )!;
  const globex = (await h.t.services.admin.platforms.list(cliActor(), { limit: 200 })).items.find(
    (p) => p.name === 'Globex Bank',
  )!;
  const email = newEmail('acme-ops');
  await h.t.services.operators.create(cliActor(), { email, platformId: acme.id, password: PASSWORD });
  const p = await freshPage();
  await signInWithPassword(p, email);
  await enrol(p);
  expect(await p.locator('.console-table tbody tr').allInnerTexts()).toEqual([expect.stringContaining('Acme Travel')]);
  expect(await p.getByRole('button', { name: 'Create platform' }).count()).toBe(0);
  await p.goto(`${h.base}/admin/platforms/${globex.id}/rate-limits`);
  expect(await h1(p)).toBe('Not found');
  await p.goto(`${h.base}/admin/audit`);
  expect(await p.getByLabel('Platform').count()).toBe(0); // no platform filter: its own is implied
  expect(await p.locator('.audit-table').innerText()).not.toContain('jwks');
});
