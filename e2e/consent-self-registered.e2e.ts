// The consent page of a client that registered itself (RFC 7591), in real Chromium: the caution for
// a loopback-only client is a note with a written label, the page keeps its order (heading, the
// client's part, the scopes, the buttons), the keyboard reaches Allow past it, and axe finds nothing,
// in English and German.
import type { Page } from 'playwright-core';
import { buildUser } from '../test/factories';
import { register, registrationPlatform } from '../test/registration/support';
import { authorizeUrl, startHarness, type Harness, type Tenant } from './support/harness';
import { expectAxeClean } from './support/page-checks';
import { expectKind, submitSignIn } from './support/any-language';

let h: Harness;
let tenant: Tenant;
beforeAll(async () => {
  h = await startHarness();
  const platformId = await registrationPlatform(h.t.services, 'open');
  // The harness's stand-in app listens on the loopback IP: a loopback-only client.
  const redirectUri = `${h.base.replace('://localhost:', '://127.0.0.1:')}/__rp/callback`;
  const res = await register(h.t.app, platformId, {
    client_name: 'Local Agent',
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    redirect_uris: [redirectUri],
  });
  expect(res.status).toBe(201);
  const platform = (await h.t.services.platforms.findPlatform(platformId))!;
  // authorizeUrl reads only the platform's id and the client's id and first redirect URI.
  tenant = { platform, client: { id: res.body.client_id as string, redirectUris: [redirectUri] } } as unknown as Tenant;
});
afterAll(() => h?.close());

async function consentPage(locale: string): Promise<Page> {
  const context = await h.browser.newContext({ locale, viewport: { width: 1280, height: 800 }, bypassCSP: true }); // bypassCSP: axe-core is injected
  const page = await context.newPage();
  const user = await buildUser(h.t.services, tenant.platform.id);
  // A public client: PKCE (any valid S256 challenge; the code is never exchanged here).
  await page.goto(
    authorizeUrl(h, tenant, {
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }),
  );
  await submitSignIn(page, user.email);
  await expectKind(page, 'consent');
  return page;
}

it.each([
  ['en-US', 'Caution: This app runs on this device. Continue only if you started it yourself just now.'],
  [
    'de-DE',
    'Vorsicht: Diese App läuft auf diesem Gerät. Fahren Sie nur fort, wenn Sie sie gerade eben selbst gestartet haben.',
  ],
])(
  '%s: the caution is a note with its label, before the scopes; Allow is reached by keyboard; axe clean',
  async (locale, caution) => {
    const page = await consentPage(locale);
    const note = page.getByRole('note');
    await expect(note.innerText()).resolves.toBe(caution);
    const order = await page.evaluate(() =>
      ['h1', '.self-registered-client', '.scope-list', 'button[value=allow]'].map((s) => {
        const all = Array.from(document.querySelectorAll('body *'));
        return all.indexOf(document.querySelector(s)!);
      }),
    );
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    let reached = false;
    for (let i = 0; i < 20 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => (document.activeElement as HTMLButtonElement | null)?.value === 'allow');
    }
    expect(reached).toBe(true);
    await expectAxeClean(page);
    await page.context().close();
  },
);
