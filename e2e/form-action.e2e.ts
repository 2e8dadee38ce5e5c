// The hosted pages carry CSP `form-action`, and Chromium applies it to the
// redirects that follow a form POST. Sign-in and consent end in a 303 to the client's redirect_uri
// on another origin, which the page allows for that request only: the flow must still complete.
import type { BrowserContext, Page } from 'playwright-core';
import {
  authorizeUrl,
  buildTenant,
  clickAndLoad,
  createUser,
  exchangeCode,
  expectPage,
  newPage,
  signIn,
  startHarness,
  type Harness,
  type Tenant,
} from './support/harness';
import { recordingServer, type RecordingServer } from './support/recording-server';

let h: Harness;
let context: BrowserContext;
let page: Page;

let app: RecordingServer;
let elsewhere: RecordingServer;
let tenant: Tenant;

beforeAll(async () => {
  h = await startHarness();
  app = await recordingServer();
  elsewhere = await recordingServer();
  tenant = await buildTenant(h, { redirectUris: [`${app.base}/callback`] });
});
afterAll(async () => {
  await app?.close();
  await elsewhere?.close();
  await h?.close();
});
beforeEach(async () => ({ context, page } = await newPage(h)));
afterEach(() => context?.close());

it("sign-in and consent under form-action end at the client's redirect_uri on another origin, with a code", async () => {
  const user = await createUser(h, tenant);
  const first = await page.goto(authorizeUrl(h, tenant, { state: 'csp-1' }));
  expect(await first!.headerValue('content-security-policy')).toContain(`form-action 'self' ${app.base}`);

  await signIn(page, user.email);
  await expectPage(page, 'consent');
  const callback = page.waitForURL(`${app.base}/callback?**`);
  await page.getByRole('button', { name: 'Allow' }).click();
  await callback;

  const received = new URL(
    app.seen.find((u) => u.startsWith('/callback?'))!,
    app.base,
  );
  expect(received.searchParams.get('state')).toBe('csp-1');
  expect(received.searchParams.get('iss')).toBe(h.base);
  const tokens = await exchangeCode(h, tenant, received.searchParams.get('code')!);
  expect(tokens.id_token).toBeTruthy();
});

it('the policy is enforced: a form sent to any other origin is refused by the browser', async () => {
  const user = await createUser(h, tenant);
  await page.goto(authorizeUrl(h, tenant));
  await expectPage(page, 'signin');
  // As injected markup would: point the sign-in form at another origin.
  await page.evaluate(
    (target) => document.querySelector('form[action$="/signin"]')!.setAttribute('action', target),
    `${elsewhere.base}/steal`,
  );
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill('whatever it is');
  const refused = page.waitForEvent('console', {
    predicate: (m) => /violates the following Content Security Policy directive: "form-action/.test(m.text()),
    timeout: 10_000,
  });
  await page.getByRole('button', { name: 'Sign in' }).click({ noWaitAfter: true }); // no navigation will follow
  await refused;
  expect(elsewhere.seen).toEqual([]);
  await expectPage(page, 'signin');
});

it('"Deny" also reaches the client (the error redirect is allowed the same way)', async () => {
  const user = await createUser(h, tenant);
  await page.goto(authorizeUrl(h, tenant, { state: 'csp-2' }));
  await signIn(page, user.email);
  await expectPage(page, 'consent');
  await clickAndLoad(page, page.getByRole('button', { name: 'Deny' }));
  const url = new URL(page.url());
  expect(`${url.origin}${url.pathname}`).toBe(`${app.base}/callback`);
  expect(url.searchParams.get('error')).toBe('access_denied');
  expect(url.searchParams.get('state')).toBe('csp-2');
});
