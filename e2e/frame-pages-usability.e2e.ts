// Frame pages in real Chromium: the error page and the signed-out page lead somewhere
// (back to the app when it is known, never to an unregistered redirect_uri), the error page shows
// the request id an operator needs, the sign-out confirmation's buttons do not wrap at 375px,
// and GET / says what this server is, with its docs; each page in English and another language.
import type { Page } from 'playwright-core';
import * as clients from '../src/repositories/client.repository';
import {
  authorizeUrl,
  buildTenant,
  clickAndLoad,
  createUser,
  openAuthorize,
  signInThrough,
  startHarness,
  type Harness,
  type Tenant,
} from './support/harness';
import { expectAxeClean } from './support/page-checks';
import { signInThroughAnyLanguage } from './support/any-language';

let h: Harness;
let tenant: Tenant; // its client registered a home page (client_uri)
let bare: Tenant; // its client did not
const APP_HOME = 'https://notes.example/home';

beforeAll(async () => {
  h = await startHarness();
  tenant = await buildTenant(h);
  await clients.update(h.t.database.db, tenant.platform.id, tenant.client.id, { clientUri: APP_HOME });
  bare = await buildTenant(h, { name: 'Bare App' });
});
afterAll(() => h?.close());

/** A fresh browser (context) in a language and viewport; bypassCSP only so that axe-core can be injected. */
async function browserPage(locale = 'en-US', width = 1280): Promise<Page> {
  const context = await h.browser.newContext({
    locale,
    viewport: { width, height: 800 },
    deviceScaleFactor: 1,
    bypassCSP: true,
  });
  return context.newPage();
}
const done = (page: Page) => page.context().close();

const h1 = (page: Page) => page.locator('h1').first().innerText();
const alert = (page: Page) => page.locator('[role=alert]').innerText();
const buttonHref = (page: Page) => page.locator('.status-block a.btn-primary').getAttribute('href');

describe('the error page', () => {
  it('a redirect_uri not registered: "Back to" the app\'s registered home page, never the redirect_uri', async () => {
    const page = await browserPage();
    const evil = 'https://evil.example/steal';
    const { res } = await openAuthorize(page, authorizeUrl(h, tenant, { redirect_uri: evil }));
    expect(res!.status()).toBe(400);
    await expect(h1(page)).resolves.toBe('This request could not be completed');
    await expect(alert(page)).resolves.toMatch(/redirect_uri is not registered/);
    const back = page.getByRole('link', { name: `Back to ${tenant.client.name}` });
    await expect(back.getAttribute('href')).resolves.toBe(APP_HOME);
    expect(await page.content()).not.toContain('evil.example');
    await expectAxeClean(page);
    await done(page);
  });

  it('an app without a home page, or an unknown app: a button to the start page (/)', async () => {
    const page = await browserPage();
    await openAuthorize(page, authorizeUrl(h, bare, { redirect_uri: 'https://evil.example/x' }));
    await expect(buttonHref(page)).resolves.toBe('/');
    await openAuthorize(page, authorizeUrl(h, tenant, { client_id: '00000000-0000-4000-8000-000000000000' }));
    await expect(alert(page)).resolves.toMatch(/not registered with this sign-in service/);
    await expect(buttonHref(page)).resolves.toBe('/');
    await clickAndLoad(page, page.getByRole('link', { name: 'Go to the start page' }));
    await expect(h1(page)).resolves.toBe('Latchkey');
    await done(page);
  });

  it('shows the request id (the X-Request-Id the log line carries), selectable whole', async () => {
    const page = await browserPage();
    const { res } = await openAuthorize(page, authorizeUrl(h, tenant, { client_id: 'nope' }));
    const id = res!.headers()['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const shown = page.locator('.request-id');
    await expect(shown.innerText()).resolves.toBe(`Request ID: ${id}`);
    await expect(shown.locator('code').evaluate((el) => getComputedStyle(el).userSelect)).resolves.toBe('all');
    // The 404 page too.
    const missing = await page.goto(`${h.base}/account/no-such-page`);
    expect(missing!.status()).toBe(404);
    await expect(h1(page)).resolves.toBe('Page not found');
    await expect(page.locator('.request-id code').innerText()).resolves.toBe(missing!.headers()['x-request-id']);
    await expectAxeClean(page);
    await done(page);
  });

  it('in German (Accept-Language): an expired sign-in page says so in German, with the German buttons', async () => {
    const page = await browserPage('de-DE');
    const res = await page.goto(`${h.base}/interaction/00000000-0000-4000-8000-000000000000`);
    expect(res!.status()).toBe(400);
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('de');
    await expect(h1(page)).resolves.toBe('Diese Anfrage konnte nicht ausgeführt werden');
    await expect(alert(page)).resolves.toBe(
      'Diese Anmeldeseite ist abgelaufen. Kehren Sie zu der App zurück, von der Sie kamen, und beginnen Sie erneut.',
    );
    await expect(page.getByRole('link', { name: 'Zur Startseite' }).isVisible()).resolves.toBe(true);
    await expect(page.locator('.request-id').innerText()).resolves.toMatch(/^Anfrage-ID: /);
    await expectAxeClean(page);
    await done(page);
  });

  it('in French (ui_locales): a technical error keeps its English description as a marked detail', async () => {
    const page = await browserPage();
    await openAuthorize(page, authorizeUrl(h, tenant, { ui_locales: 'fr', client_id: '' }));
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('fr');
    await expect(alert(page)).resolves.toContain('Le lien qui vous a amené ici est incomplet.');
    const detail = page.locator('.status-detail span[lang=en]');
    await expect(detail.innerText()).resolves.toBe('The request has no client_id.');
    await expectAxeClean(page);
    await done(page);
  });
});

describe('signing out', () => {
  it('the signed-out page leads back to the app (its home page) and to the account', async () => {
    const page = await browserPage();
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    await page.goto(`${h.base}/oauth/logout?platform_guid=${tenant.platform.id}&client_id=${tenant.client.id}`);
    await expect(h1(page)).resolves.toBe(`Sign out of ${tenant.platform.name}?`);
    await clickAndLoad(page, page.getByRole('button', { name: 'Sign out', exact: true }));
    await expect(h1(page)).resolves.toBe('You are signed out');
    await expect(page.getByRole('link', { name: `Back to ${tenant.client.name}` }).getAttribute('href')).resolves.toBe(
      APP_HOME,
    );
    await clickAndLoad(page, page.getByRole('link', { name: 'Go to your account' }));
    expect(new URL(page.url()).pathname).toBe('/account/signin');
    await done(page);
  });

  it('"Stay signed in" too; an app without a home page: the account only', async () => {
    const page = await browserPage();
    const user = await createUser(h, bare);
    await signInThrough(h, bare, page, user.email);
    await page.goto(`${h.base}/oauth/logout?platform_guid=${bare.platform.id}&client_id=${bare.client.id}`);
    await clickAndLoad(page, page.getByRole('button', { name: 'Stay signed in' }));
    await expect(h1(page)).resolves.toBe('You are still signed in');
    await expect(
      page.locator('.status-block a.btn').evaluateAll((as) => as.map((a) => a.getAttribute('href'))),
    ).resolves.toEqual([`/account?platform_guid=${bare.platform.id}`]);
    await clickAndLoad(page, page.getByRole('link', { name: 'Go to your account' }));
    await expect(h1(page)).resolves.toBe('Your account');
    await expectAxeClean(page);
    await done(page);
  });

  it.each([
    ['en-US', 'Stay signed in'],
    ['de-DE', 'Angemeldet bleiben'],
    ['fr-FR', 'Rester connecté'],
    ['es-ES', 'Mantener la sesión'],
  ])('the confirmation at 375px (%s): each button on one line, nothing wider than the screen', async (locale, stay) => {
    const page = await browserPage(locale, 375);
    const user = await createUser(h, tenant);
    await signInThroughAnyLanguage(h, tenant, page, user.email);
    await page.goto(`${h.base}/oauth/logout?platform_guid=${tenant.platform.id}&client_id=${tenant.client.id}`);
    const buttons = page.locator('.logout-actions button');
    await expect(buttons.first().innerText()).resolves.toBe(stay);
    for (const b of await buttons.all()) {
      // One line of text: the button keeps its minimum height (46px), and its text is not cut.
      const box = (await b.boundingBox())!;
      expect(box.height).toBeLessThanOrEqual(47);
      expect(box.x + box.width).toBeLessThanOrEqual(375);
      expect(await b.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await expectAxeClean(page);
    await done(page);
  });
});

describe('GET /', () => {
  it('says what this server is, lists its endpoints and links the docs; in Spanish too', async () => {
    const page = await browserPage();
    await page.goto(`${h.base}/`);
    await expect(h1(page)).resolves.toBe('Latchkey');
    await expect(page.getByText('A self-hosted OpenID Connect identity provider.').isVisible()).resolves.toBe(true);
    await expect(
      page.getByText(`${h.base}/.well-known/openid-configuration?platform_guid=…`).isVisible(),
    ).resolves.toBe(true);
    await expect(
      page.getByRole('link', { name: 'OpenID Connect specifications' }).getAttribute('href'),
    ).resolves.toMatch(/^https:\/\/openid\.net\//);
    await expect(page.getByRole('link', { name: '/healthz' }).isVisible()).resolves.toBe(true);
    await expectAxeClean(page);
    await done(page);

    const es = await browserPage('es-ES');
    await es.goto(`${h.base}/`);
    await expect(es.locator('html').getAttribute('lang')).resolves.toBe('es');
    await expect(es.getByText('Un proveedor de identidad OpenID Connect autoalojado.').isVisible()).resolves.toBe(true);
    await expect(es.getByRole('link', { name: 'Especificaciones de OpenID Connect' }).isVisible()).resolves.toBe(true);
    await expectAxeClean(es);
    await done(es);
  });
});
