// The consent page and the account chooser in real Chromium: the app is named the same
// way everywhere ("to continue to {app}"); the consent page shows the app's own logo and links and
// a read-only list of what it receives, with a "Not you?" way out that grants nothing; the chooser
// says in words whether each account is signed in and offers "Remove" (not "Sign out") for a
// signed-out one. These pages, the second-factor page and the upstream failure page pass axe in
// English, German, French and Spanish.
import type { Page } from 'playwright-core';
import * as clients from '../src/repositories/client.repository';
import {
  authorizeUrl,
  buildTenant,
  clickAndLoad,
  createUser,
  newEmail,
  startHarness,
  type Harness,
  type Tenant,
} from './support/harness';
import { expectAxeClean } from './support/page-checks';
import {
  allowConsent,
  createTotpUser,
  expectKind,
  rawKeysOn,
  signInThroughAnyLanguage,
  submitSignIn,
} from './support/any-language';

let h: Harness;
let branded: Tenant; // its client registered a logo, a home page, a privacy policy and terms
let bare: Tenant; // its client registered none
const LOGO = 'https://cdn.trip.example/logo.png';
const LINKS = {
  home: 'https://trip.example/',
  policy: 'https://trip.example/privacy',
  tos: 'https://trip.example/terms',
};
// A 1×1 PNG: the logo's host answers in the test (the browser has no network).
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

beforeAll(async () => {
  h = await startHarness();
  branded = await buildTenant(h, { name: 'Trip Planner' });
  await clients.update(h.t.database.db, branded.platform.id, branded.client.id, {
    logoUri: LOGO,
    clientUri: LINKS.home,
    policyUri: LINKS.policy,
    tosUri: LINKS.tos,
  });
  bare = await buildTenant(h, { name: 'Bare App' });
});
afterAll(() => h?.close());

/** A fresh browser in a language; bypassCSP only so that axe-core can be injected. */
async function browserPage(locale = 'en-US'): Promise<Page> {
  const context = await h.browser.newContext({
    locale,
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    bypassCSP: true,
  });
  await context.route(`${LOGO}*`, (route) => route.fulfill({ status: 200, contentType: 'image/png', body: PNG }));
  return context.newPage();
}
const done = (page: Page) => page.context().close();
const h1 = (page: Page) => page.locator('h1').first().innerText();
const consentedTo = async (userId: string) => (await h.t.database.db('consents').where({ user_id: userId })).length;

describe('consent', () => {
  it('shows the app\'s logo, "to continue to {app}", and its home page, privacy policy and terms (noopener noreferrer)', async () => {
    const page = await browserPage();
    const user = await createUser(h, branded);
    await page.goto(authorizeUrl(h, branded));
    await submitSignIn(page, user.email);
    await expectKind(page, 'consent');
    expect(await h1(page)).toBe('Trip Planner wants to access your account');
    await expect(page.getByText('to continue to Trip Planner', { exact: true }).isVisible()).resolves.toBe(true);

    const logo = page.getByRole('img', { name: 'Trip Planner logo' });
    await expect(logo.getAttribute('src')).resolves.toBe(LOGO);
    await expect(logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).resolves.toBe(true);

    const about = page.getByRole('navigation', { name: 'About Trip Planner' });
    for (const [name, href] of [
      ['Website', LINKS.home],
      ['Privacy policy', LINKS.policy],
      ['Terms of service', LINKS.tos],
    ]) {
      const link = about.getByRole('link', { name, exact: true });
      await expect(link.getAttribute('href')).resolves.toBe(href);
      await expect(link.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    }
    await expectAxeClean(page);
    await done(page);
  });

  it("without registered branding: the app's initial and no links", async () => {
    const page = await browserPage();
    const user = await createUser(h, bare);
    await page.goto(authorizeUrl(h, bare));
    await submitSignIn(page, user.email);
    await expectKind(page, 'consent');
    await expect(page.locator('.app-badge').innerText()).resolves.toBe('B');
    await expect(page.locator('.app-logo').count()).resolves.toBe(0);
    await expect(page.getByRole('navigation', { name: 'About Bare App' }).count()).resolves.toBe(0);
    await done(page);
  });

  it('the scopes are a read-only list: no switches, checkboxes or toggle-like controls', async () => {
    const page = await browserPage();
    const user = await createUser(h, bare);
    await page.goto(authorizeUrl(h, bare));
    await submitSignIn(page, user.email);
    const list = page.getByRole('list', { name: 'This will allow Bare App to:' });
    await expect(list.getByRole('listitem').count()).resolves.toBe(5); // openid profile email phone offline_access
    await expect(page.locator('.scope-list').getByRole('switch').count()).resolves.toBe(0);
    await expect(page.locator('.scope-list').getByRole('checkbox').count()).resolves.toBe(0);
    await expect(page.locator('.scope-list input, .scope-list button, .scope-list [tabindex]').count()).resolves.toBe(
      0,
    );
    // Rows are not drawn as separate cards with borders (the look of a settings list).
    const rowBorder = await page
      .locator('.scope')
      .nth(1)
      .evaluate((el) => getComputedStyle(el).borderTopWidth);
    expect(rowBorder).toBe('0px');
    await done(page);
  });

  it('"Not you?" goes to the chooser without granting anything; another account continues from there', async () => {
    const page = await browserPage();
    const first = await createUser(h, branded);
    const second = await createUser(h, branded, { email: newEmail('other') });
    await page.goto(authorizeUrl(h, branded));
    await submitSignIn(page, first.email);
    await expectKind(page, 'consent');
    await clickAndLoad(page, page.getByRole('link', { name: 'Not you? Use another account' }));
    await expectKind(page, 'chooser');
    expect(await consentedTo(first.id)).toBe(0);

    await clickAndLoad(page, page.getByRole('button', { name: 'Use another account' }));
    await submitSignIn(page, second.email);
    await expectKind(page, 'consent');
    await expect(page.getByText(`Signed in as ${second.email}`).isVisible()).resolves.toBe(true);
    await allowConsent(page);
    await expectKind(page, 'callback');
    expect(await consentedTo(first.id)).toBe(0);
    expect(await consentedTo(second.id)).toBe(1);
    await done(page);
  });
});

describe('chooser', () => {
  it('says "Signed in" / "Signed out" in each row; a signed-out account offers Remove, which forgets it', async () => {
    const page = await browserPage();
    const ada = await createUser(h, bare);
    const bob = await createUser(h, bare, { givenName: 'Bob', familyName: 'Builder' });
    await signInThroughAnyLanguage(h, bare, page, ada.email);
    await signInThroughAnyLanguage(h, bare, page, bob.email);

    await page.goto(authorizeUrl(h, bare, { prompt: 'select_account' }));
    await expectKind(page, 'chooser');
    await expect(page.getByText('to continue to Bare App', { exact: true }).isVisible()).resolves.toBe(true);
    await clickAndLoad(page, page.getByRole('button', { name: `Sign out ${bob.email}`, exact: true }));
    await expectKind(page, 'chooser');

    const row = (email: string) => page.locator('.account-row', { hasText: email });
    await expect(row(ada.email).locator('.account-state').innerText()).resolves.toBe('Signed in');
    await expect(row(bob.email).locator('.account-state').innerText()).resolves.toBe('Signed out');
    // The state is text in the row's button, next to the email: a screen reader hears it with the account.
    await expect(page.locator('button[name=account]', { hasText: bob.email }).innerText()).resolves.toContain(
      'Signed out',
    );
    await expect(page.getByRole('button', { name: `Sign out ${bob.email}`, exact: true }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: `Sign out ${ada.email}`, exact: true }).isVisible()).resolves.toBe(
      true,
    );
    await expectAxeClean(page);

    await clickAndLoad(page, page.getByRole('button', { name: `Remove ${bob.email}`, exact: true }));
    await expectKind(page, 'chooser');
    await expect(row(bob.email).count()).resolves.toBe(0);
    await expect(row(ada.email).count()).resolves.toBe(1);
    await done(page);
  });
});

// Each page in each language: the language's own texts (no raw keys, no English left), and axe.
const LANGS = [
  {
    locale: 'en-US',
    lang: 'en',
    consent: 'wants to access your account',
    chooser: 'Choose an account',
    signOut: 'Sign out',
    remove: 'Remove',
    signedOut: 'Signed out',
    second: 'Two-step verification',
    failed: "Couldn't sign in",
  },
  {
    locale: 'de-DE',
    lang: 'de',
    consent: 'möchte auf Ihr Konto zugreifen',
    chooser: 'Konto auswählen',
    signOut: 'Abmelden',
    remove: 'Entfernen',
    signedOut: 'Abgemeldet',
    second: 'Bestätigung in zwei Schritten',
    failed: 'Anmeldung fehlgeschlagen',
  },
  {
    locale: 'fr-FR',
    lang: 'fr',
    consent: 'souhaite accéder à votre compte',
    chooser: 'Choisissez un compte',
    signOut: 'Se déconnecter',
    remove: 'Retirer',
    signedOut: 'Déconnecté',
    second: 'Validation en deux étapes',
    failed: 'Impossible de se connecter',
  },
  {
    locale: 'es-ES',
    lang: 'es',
    consent: 'quiere acceder a su cuenta',
    chooser: 'Elija una cuenta',
    signOut: 'Cerrar sesión',
    remove: 'Quitar',
    signedOut: 'Sesión cerrada',
    second: 'Verificación en dos pasos',
    failed: 'No se pudo iniciar sesión',
  },
] as const;

describe.each(LANGS)('in $lang', (l) => {
  it('consent and chooser: translated, no raw keys, axe clean', async () => {
    const page = await browserPage(l.locale);
    const user = await createUser(h, branded);
    await page.goto(authorizeUrl(h, branded));
    await submitSignIn(page, user.email);
    await expectKind(page, 'consent');
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe(l.lang);
    expect(await h1(page)).toContain(l.consent);
    expect(await rawKeysOn(page)).toEqual([]);
    await expectAxeClean(page);
    await allowConsent(page);
    await expectKind(page, 'callback');

    // The chooser, then the same account signed out: its row offers Remove, in the language.
    await page.goto(authorizeUrl(h, branded, { prompt: 'select_account' }));
    await expectKind(page, 'chooser');
    expect(await h1(page)).toBe(l.chooser);
    expect(await rawKeysOn(page)).toEqual([]);
    await expectAxeClean(page);
    await clickAndLoad(page, page.getByRole('button', { name: `${l.signOut} ${user.email}`, exact: true }));
    await expect(
      page.getByRole('button', { name: `${l.remove} ${user.email}`, exact: true }).isVisible(),
    ).resolves.toBe(true);
    await expect(page.locator('.account-state').innerText()).resolves.toBe(l.signedOut);
    expect(await rawKeysOn(page)).toEqual([]);
    await expectAxeClean(page);
    await done(page);
  });

  it('the second-factor page (and a wrong code) and the upstream failure page: translated, axe clean', async () => {
    const page = await browserPage(l.locale);
    const { user, code } = await createTotpUser(h, bare, newEmail('mfa'));
    await page.goto(authorizeUrl(h, bare));
    await submitSignIn(page, user.email);
    await expectKind(page, 'second-factor');
    expect(await h1(page)).toBe(l.second);
    expect(await rawKeysOn(page)).toEqual([]);
    await expectAxeClean(page);

    // A wrong code: the message in the language, still axe clean.
    const wrong = code() === '000000' ? '111111' : '000000';
    await page.locator('#code').fill(wrong);
    await clickAndLoad(page, page.locator('form:has(#code) button[type=submit]'));
    await expect(page.getByRole('alert').isVisible()).resolves.toBe(true);
    expect(await rawKeysOn(page)).toEqual([]);
    await expectAxeClean(page);

    const failed = await page.goto(`${h.base}/platforms/${bare.platform.id}/upstream/callback?state=nothing&code=x`);
    expect(failed!.status()).toBe(400);
    expect(await h1(page)).toBe(l.failed);
    expect(await rawKeysOn(page)).toEqual([]);
    await expectAxeClean(page);
    await done(page);
  });
});
