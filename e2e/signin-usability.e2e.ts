// Sign-in pages in a real browser: the tab order (password before "Forgot password?"),
// the wrong password marked at the field, the forgot-password form's error at the field, the app
// named on sign-in, "Forgot password?" carrying the email (with and without JavaScript), "Use
// another email" back to the app, the show-password toggle by keyboard, and axe on every state of
// the sign-in, sign-up, forgot-password and reset-password pages in en, de, fr and es.
import type { Browser, Page } from 'playwright-core';
import { linkIn, waitForMail } from '../test/support/outbox';
import {
  authorizeUrl,
  buildTenant,
  callbackParams,
  clickAndLoad,
  createUser,
  newEmail,
  openAuthorize,
  startHarness,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './support/harness';
import { expectKind, signInSubmit } from './support/any-language';
import { expectAxeClean } from './support/page-checks';

jest.setTimeout(90_000); // a busy machine: each browser test takes seconds

let h: Harness;
let tenant: Tenant;
const pages: Page[] = [];

beforeAll(async () => {
  h = await startHarness();
  tenant = await buildTenant(h);
});
afterAll(async () => {
  for (const p of pages) await p.context().close();
  await h?.close();
});

/** A fresh browser; bypassCSP only so that axe can be injected (the page's own CSP is checked by the supertest tests). */
async function freshPage(options: { locale?: string; javaScriptEnabled?: boolean } = {}): Promise<Page> {
  const context = await (h.browser as Browser).newContext({
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    bypassCSP: true,
    locale: options.locale ?? 'en-US',
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  const page = await context.newPage();
  pages.push(page);
  return page;
}

/** What has the keyboard focus: an id, or "password-toggle" / "forgot-link" for those two controls. */
const activeId = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el) return '';
    if (el.classList.contains('password-toggle')) return 'password-toggle';
    if (el.hasAttribute('data-forgot-link')) return 'forgot-link';
    return el.id;
  });

async function openSignIn(page: Page, params: Record<string, string> = {}) {
  const { status } = await openAuthorize(page, authorizeUrl(h, tenant, params));
  expect(status).toBe(200);
  await expectKind(page, 'signin');
}

it('Tab goes from Email to the password field, then the toggle, then "Forgot password?"; keyboard alone signs in', async () => {
  const user = await createUser(h, tenant);
  const page = await freshPage();
  await openSignIn(page);
  await page.locator('#email').focus();
  await page.keyboard.type(user.email);
  await page.keyboard.press('Tab');
  expect(await activeId(page)).toBe('password');
  await page.keyboard.press('Tab');
  expect(await activeId(page)).toBe('password-toggle');
  await page.keyboard.press('Tab');
  expect(await activeId(page)).toBe('forgot-link');
  // Visually the link still sits beside the label, above the field.
  const [link, field] = await Promise.all([
    page.locator('[data-forgot-link]').boundingBox(),
    page.locator('#password').boundingBox(),
  ]);
  expect(link!.y).toBeLessThan(field!.y);
  await page.locator('#password').focus();
  await page.keyboard.type(TEST_PASSWORD);
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press('Enter')]);
  await expectKind(page, 'consent');
});

it('a wrong password marks the field (aria-invalid, described by the message), and the page names the app', async () => {
  const user = await createUser(h, tenant);
  const page = await freshPage();
  await openSignIn(page);
  await expect(page.locator('.card-subtitle').innerText()).resolves.toBe('to continue to Acme Notes');
  await expect(page.locator('.site-header .brand-name').innerText()).resolves.toBe(tenant.platform.name);
  await page.locator('#email').fill(user.email);
  await page.locator('#password').fill('not my password');
  await clickAndLoad(page, signInSubmit(page));
  const password = page.locator('#password');
  expect(await password.getAttribute('aria-invalid')).toBe('true');
  const describedBy = await password.getAttribute('aria-describedby');
  await expect(page.locator(`#${describedBy}`).innerText()).resolves.toBe('Incorrect email or password.');
  await expectAxeClean(page);
});

it('the forgot-password form shows its error at the field', async () => {
  const page = await freshPage();
  await page.goto(`${h.base}/password/forgot?platform_guid=${tenant.platform.id}`);
  await page.locator('#email').fill('not an email');
  await clickAndLoad(page, page.locator('form button[type=submit]'));
  const email = page.locator('#email');
  expect(await email.getAttribute('aria-invalid')).toBe('true');
  await expect(page.locator(`#${await email.getAttribute('aria-describedby')}`).innerText()).resolves.toBe(
    'Enter a valid email address.',
  );
  await expectAxeClean(page);
});

it('"Forgot password?" carries the email typed (JavaScript: as typed; without: after a refused sign-in)', async () => {
  const user = await createUser(h, tenant);
  const withJs = await freshPage();
  await openSignIn(withJs);
  await withJs.locator('#email').fill(user.email);
  await clickAndLoad(withJs, withJs.locator('[data-forgot-link]'));
  await expect(withJs.locator('#email').inputValue()).resolves.toBe(user.email);

  const noJs = await freshPage({ javaScriptEnabled: false });
  await openSignIn(noJs);
  expect(await noJs.locator('.password-toggle').count()).toBe(0); // the toggle is the script's
  await noJs.locator('#email').fill(user.email);
  await noJs.locator('#password').fill('a wrong one');
  await clickAndLoad(noJs, signInSubmit(noJs));
  await clickAndLoad(noJs, noJs.locator('[data-forgot-link]'));
  await expect(noJs.locator('#email').inputValue()).resolves.toBe(user.email);
  // "Back to sign in" returns to the same sign-in.
  await clickAndLoad(noJs, noJs.locator('.card-links a'));
  await expectKind(noJs, 'signin');
});

it('a pinned email (login_hint) offers "Use another email": back to the app with account_selection_required', async () => {
  const user = await createUser(h, tenant);
  const page = await freshPage();
  await openSignIn(page, { login_hint: user.email, state: 'pinned-1' });
  await expect(page.locator('#email').getAttribute('readonly')).resolves.not.toBeNull();
  await expectAxeClean(page);
  await clickAndLoad(page, page.getByRole('button', { name: 'Use another email' }));
  const params = callbackParams(page);
  expect([params.get('error'), params.get('state')]).toEqual(['account_selection_required', 'pinned-1']);
  expect(params.get('code')).toBeNull();
});

it("the show-password toggle works by keyboard, says its state with aria-pressed, and is named in the page's language", async () => {
  const page = await freshPage({ locale: 'de-DE' });
  await openSignIn(page);
  const toggle = page.locator('.password-toggle');
  await expect(toggle.innerText()).resolves.toBe('Passwort anzeigen');
  await page.locator('#password').fill('secret words');
  await page.locator('#password').focus();
  await page.keyboard.press('Tab');
  expect(await activeId(page)).toBe('password-toggle');
  await page.keyboard.press('Space');
  expect([await page.locator('#password').getAttribute('type'), await toggle.getAttribute('aria-pressed')]).toEqual([
    'text',
    'true',
  ]);
  await page.keyboard.press('Enter');
  expect([await page.locator('#password').getAttribute('type'), await toggle.getAttribute('aria-pressed')]).toEqual([
    'password',
    'false',
  ]);
  await expect(page.locator('#password').inputValue()).resolves.toBe('secret words');
});

describe.each([
  ['en', 'en-US', 'Sign in'],
  ['de', 'de-DE', 'Anmelden'],
  ['fr', 'fr-FR', 'Se connecter'],
  ['es', 'es-ES', 'Iniciar sesión'],
])('axe in %s', (lang, locale, signinHeading) => {
  it('sign-in: fresh, refused, pinned', async () => {
    const user = await createUser(h, tenant);
    const page = await freshPage({ locale });
    await openSignIn(page, { ui_locales: lang });
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    await expect(page.locator('h1').innerText()).resolves.toBe(signinHeading);
    await expectAxeClean(page);
    await page.locator('#email').fill(user.email);
    await page.locator('#password').fill('wrong');
    await clickAndLoad(page, signInSubmit(page));
    await expectAxeClean(page);
    const pinned = await freshPage({ locale });
    await openSignIn(pinned, { ui_locales: lang, login_hint: user.email });
    await expectAxeClean(pinned);
  });

  it('sign-up: fresh and refused', async () => {
    const page = await freshPage({ locale });
    await openAuthorize(page, authorizeUrl(h, tenant, { ui_locales: lang, action: 'register' }));
    await expectKind(page, 'signup');
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    await expectAxeClean(page);
    await page.locator('#email').fill(newEmail('axe'));
    await page.locator('#given_name').fill('Ada');
    await page.locator('#family_name').fill('Lovelace');
    await page.locator('#birthdate').fill(`${new Date().getUTCFullYear() - 5}-01-01`);
    await page.locator('#phone_number').fill('12');
    await page.locator('#password').fill('short');
    await clickAndLoad(page, page.locator('form:has(#given_name) button[type=submit]'));
    await expect(page.locator('#birthdate-error').count()).resolves.toBe(1);
    await expectAxeClean(page);
  });

  it('forgot password (Accept-Language) and reset password: fresh and refused', async () => {
    const user = await createUser(h, tenant);
    const page = await freshPage({ locale });
    await page.goto(`${h.base}/password/forgot?platform_guid=${tenant.platform.id}`);
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    await expectAxeClean(page);
    await page.locator('#email').fill('nope');
    await clickAndLoad(page, page.locator('form button[type=submit]'));
    await expectAxeClean(page);
    await page.locator('#email').fill(user.email);
    await clickAndLoad(page, page.locator('form button[type=submit]'));

    const mail = await waitForMail(h.t.config.dataDir, user.email, /./, 20_000);
    await page.goto(linkIn(mail, '/password/reset'));
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    await expectAxeClean(page);
    await page.locator('#password').fill('password');
    await clickAndLoad(page, page.locator('form button[type=submit]'));
    await expect(page.locator('#password-error').count()).resolves.toBe(1);
    await expectAxeClean(page);
  });
});
