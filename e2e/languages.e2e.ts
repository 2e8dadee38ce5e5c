// Every hosted page state in English, German, French and Spanish —
// the language from ui_locales on the authorization request and from Accept-Language (the browser
// context's locale) elsewhere. On each page: <html lang> is the language, axe-core finds nothing,
// no raw catalog key shows, and the heading is not the English one; a screenshot per language
// (docs/screenshots/<lng>/<page>.png with UPDATE_SCREENSHOTS=1). Then a dark-mode pass and a
// keyboard-only sign-in. The pages are driven by their fields' names and buttons' values
// (e2e/support/any-language.ts), never their texts, so one walk serves every language.
import type { BrowserContext, Page } from 'playwright-core';
import * as clients from '../src/repositories/client.repository';
import { buildClient, buildPlatform } from '../test/factories';
import {
  authorizeUrl,
  clickAndLoad,
  createUser,
  startHarness,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './support/harness';
import {
  allowConsent,
  createTotpUser,
  expectKind,
  pageKindAnyLanguage,
  rawKeysOn,
  submitSignIn,
} from './support/any-language';
import { expectAxeClean, shoot } from './support/page-checks';

const LANGUAGES = [
  { lng: 'en', locale: 'en-US' },
  { lng: 'de', locale: 'de-DE' },
  { lng: 'fr', locale: 'fr-FR' },
  { lng: 'es', locale: 'es-ES' },
] as const;
type Lng = (typeof LANGUAGES)[number]['lng'];

let h: Harness;
let tenant: Tenant;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  h = await startHarness();
  // Names that read well in the screenshots; the app registered its home page ("Back to Acme Notes").
  const platform = await buildPlatform(h.t.services, 'Acme');
  const client = await buildClient(h.t.services, platform.id, {
    redirectUris: [`${h.base}/__rp/callback`],
    name: 'Acme Notes',
  });
  await clients.update(h.t.database.db, platform.id, client.id, { clientUri: 'https://notes.example/' });
  tenant = { platform, client };
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await h?.close();
});

/** One browser per language (or colour scheme); bypassCSP only so that axe-core can be injected. */
async function browserFor(locale: string, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await h.browser.newContext({
    locale,
    colorScheme,
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    bypassCSP: true,
  });
  contexts.push(context);
  return context.newPage();
}

/** What went wrong, per language and page: collected so that one run names every untranslated page. */
interface Finding {
  lng: Lng;
  page: string;
  problem: string;
}
const headings = new Map<string, string>(); // `${lng}/${page}` → h1
const timings: string[] = [];

/** The checks of one page state; failures are collected, not thrown. */
async function checkPage(page: Page, lng: Lng, name: string, findings: Finding[], shotDir: string = lng) {
  const add = (problem: string) => findings.push({ lng, page: name, problem });
  const lang = await page.locator('html').getAttribute('lang');
  if (lang !== lng) add(`html[lang] is "${lang}"`);
  try {
    await expectAxeClean(page);
  } catch (err) {
    add(
      `axe: ${String((err as Error).message)
        .split('\n')
        .filter((l) => /^\s*[+-] /.test(l) || /: /.test(l))
        .slice(0, 6)
        .join(' ')
        .slice(0, 600)}`,
    );
  }
  const raw = await rawKeysOn(page);
  if (raw.length) add(`raw catalog keys: ${raw.join(' | ')}`);
  headings.set(
    `${lng}/${name}`,
    (
      await page
        .locator('h1')
        .first()
        .innerText()
        .catch(() => '')
    ).trim(),
  );
  await shoot(page, `${shotDir}/${name}`);
}

/** Every page state of one language, in one browser; returns what it found. */
async function walk(lng: Lng, locale: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  const page = await browserFor(locale);
  page.setDefaultTimeout(20_000); // a missing element fails its step, not the whole walk
  const check = (name: string) => checkPage(page, lng, name, findings);
  const step = async (name: string, run: () => Promise<unknown>) => {
    const started = Date.now();
    try {
      await run();
    } catch (err) {
      findings.push({ lng, page: name, problem: `could not walk: ${String((err as Error).message).slice(0, 400)}` });
    }
    timings.push(`${lng}/${name} ${Date.now() - started} ms`);
  };
  const authorize = (params: Record<string, string> = {}) =>
    page.goto(authorizeUrl(h, tenant, { ui_locales: lng, ...params }));
  const email = `grace.hopper.${lng}@example.com`; // the platform is this run's own: no other run's users
  const totp = await createTotpUser(h, tenant, `ada.lovelace.${lng}@example.com`);

  await step('home', async () => {
    await page.goto(`${h.base}/`);
    await check('home');
  });
  await step('signin', async () => {
    await authorize();
    await expectKind(page, 'signin');
    await check('signin');
  });
  await step('signin-error', async () => {
    await submitSignIn(page, totp.user.email, 'not the password at all');
    await expectKind(page, 'signin');
    await page.locator('[role=alert]').first().waitFor();
    await check('signin-error');
  });
  await step('forgot-password', async () => {
    await clickAndLoad(page, page.locator('a[data-forgot-link]'));
    await page.locator('#email').waitFor();
    await check('forgot-password');
  });
  await step('signup', async () => {
    await authorize({ action: 'register' });
    await expectKind(page, 'signup');
    await check('signup');
  });
  await step('signup-errors', async () => {
    // The browser's own checks off: the server's field errors are the page under test.
    await page.locator('#email').fill('not-an-email');
    await page.locator('form:has(#given_name)').evaluate((f: HTMLFormElement) => {
      f.noValidate = true;
    });
    await clickAndLoad(page, page.locator('form:has(#given_name) button[type=submit]'));
    await expectKind(page, 'signup');
    await page.locator('[aria-invalid=true]').first().waitFor();
    await check('signup-errors');
  });
  await step('consent', async () => {
    await page.locator('#email').fill(email);
    await page.locator('#given_name').fill('Grace');
    await page.locator('#family_name').fill('Hopper');
    await page.locator('#birthdate').fill('1990-05-17');
    await page.locator('#password').fill(TEST_PASSWORD);
    await clickAndLoad(page, page.locator('form:has(#given_name) button[type=submit]'));
    await expectKind(page, 'consent');
    await check('consent');
    await allowConsent(page);
    await expectKind(page, 'callback');
  });
  await step('account', async () => {
    await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}`);
    await page.locator('h1').first().waitFor();
    await check('account');
  });
  await step('chooser', async () => {
    await authorize({ prompt: 'select_account' });
    await expectKind(page, 'chooser');
    await check('chooser');
  });
  await step('second-factor', async () => {
    await clickAndLoad(page, page.locator('button[name=another]'));
    await submitSignIn(page, totp.user.email);
    await expectKind(page, 'second-factor');
    await check('second-factor');
    await page.locator('#code').fill(totp.code(1)); // the enrolment used this step's code
    await clickAndLoad(page, page.locator('form:has(#code) button[type=submit]'));
    if ((await pageKindAnyLanguage(page)) === 'consent') await allowConsent(page);
    await expectKind(page, 'callback');
  });
  await step('logout-confirm', async () => {
    await page.goto(`${h.base}/oauth/logout?platform_guid=${tenant.platform.id}&client_id=${tenant.client.id}`);
    await page.locator('button[name=decision][value=logout]').waitFor();
    await check('logout-confirm');
  });
  await step('signed-out', async () => {
    await clickAndLoad(page, page.locator('button[name=decision][value=logout]'));
    await page.locator('.status-icon-ok').waitFor();
    await check('signed-out');
  });
  await step('error', async () => {
    await authorize({ client_id: '00000000-0000-4000-8000-000000000000' });
    await expectKind(page, 'error');
    await check('error');
  });
  return findings;
}

const PAGES = [
  'home',
  'signin',
  'signin-error',
  'forgot-password',
  'signup',
  'signup-errors',
  'consent',
  'account',
  'chooser',
  'second-factor',
  'logout-confirm',
  'signed-out',
  'error',
];

it('every hosted page state in English, German, French and Spanish: lang, axe, no raw keys, translated heading', async () => {
  const found = (await Promise.all(LANGUAGES.map(({ lng, locale }) => walk(lng, locale)))).flat();
  // A heading equal to the English one: the page was not translated (the home page's is the name, Latchkey).
  for (const { lng } of LANGUAGES.filter((l) => l.lng !== 'en')) {
    for (const name of PAGES) {
      const english = headings.get(`en/${name}`);
      if (english && name !== 'home' && headings.get(`${lng}/${name}`) === english)
        found.push({ lng, page: name, problem: `heading still English: "${english}"` });
    }
  }
  console.log(`language sweep steps:\n${timings.join('\n')}`);
  const walked = PAGES.filter((name) => LANGUAGES.every(({ lng }) => headings.has(`${lng}/${name}`)));
  expect(walked).toEqual(PAGES); // every state was reached in every language
  expect(found.map((f) => `${f.lng}/${f.page}: ${f.problem}`)).toEqual([]);
}, 420_000); // four languages side by side: ~1 min on an idle machine

it('dark mode: sign-in, consent, account and the error page are axe-clean (contrast included)', async () => {
  const page = await browserFor('en-US', 'dark');
  const findings: Finding[] = [];
  const user = await createUser(h, tenant);
  await page.goto(authorizeUrl(h, tenant));
  expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(true);
  await checkPage(page, 'en', 'signin', findings, 'dark');
  await submitSignIn(page, user.email);
  await expectKind(page, 'consent');
  await checkPage(page, 'en', 'consent', findings, 'dark');
  await allowConsent(page);
  await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}`);
  await checkPage(page, 'en', 'account', findings, 'dark');
  await page.goto(authorizeUrl(h, tenant, { client_id: '00000000-0000-4000-8000-000000000000' }));
  await expectKind(page, 'error');
  await checkPage(page, 'en', 'error', findings, 'dark');
  expect(findings.map((f) => `dark/${f.page}: ${f.problem}`)).toEqual([]);
}, 120_000);

/** Presses Tab until the element matching `selector` has the focus (at most 30 times). */
async function tabTo(page: Page, selector: string) {
  for (let i = 0; i < 30; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${selector} is not reachable with Tab on ${page.url()}`);
}

it('signs in by keyboard only: Tab, typing and Enter from the authorize URL to the app with a code', async () => {
  const page = await browserFor('en-US');
  const user = await createUser(h, tenant);
  const state = 'keyboard-only';
  await page.goto(authorizeUrl(h, tenant, { state }));
  await expectKind(page, 'signin');
  await tabTo(page, '#email');
  await page.keyboard.type(user.email);
  await tabTo(page, '#password');
  await page.keyboard.type(TEST_PASSWORD);
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  await expectKind(page, 'consent');
  await tabTo(page, 'button[name=decision][value=allow]');
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  await expectKind(page, 'callback');
  const params = new URL(page.url()).searchParams;
  expect(params.get('state')).toBe(state);
  expect(params.get('code')).toBeTruthy();
}, 60_000);
