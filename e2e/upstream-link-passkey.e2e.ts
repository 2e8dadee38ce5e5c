// The passkey proof of the "Link your {provider} account" page in real Chromium (its
// virtual authenticator). The downstream runs on localhost (browsers refuse an IP address as WebAuthn
// RP id); the upstream is the `oidc-provider` package in its own process on 127.0.0.1, so the two
// keep their cookies apart. The account's own passkey links and signs in; another local account's
// passkey, held by the same authenticator, links nothing.
import type { BrowserContext, Page } from 'playwright-core';
import type { UpstreamProvider } from '../src/domain/upstream';
import { startOidcProvider, type OidcProviderProcess } from '../test/support/upstreams/oidc-provider-process';
import {
  allow,
  authorizeUrl,
  clickAndLoad,
  createUser,
  expectPage,
  finishAtCallback,
  isCallback,
  newEmail,
  openAuthorize,
  pageKind,
  startHarness,
  unique,
  type Harness,
  type Tenant,
} from './support/harness';
import {
  acmeTenant,
  addPasskey,
  addVirtualAuthenticator,
  credentialsOf,
  openAccountPage,
  withoutAutofill,
  type VirtualAuthenticator,
} from './support/passkeys';
import {
  continueWith,
  freshPage,
  identitiesOf,
  identitiesOfProvider,
  onDownstream,
  upstreamAudit,
  upstreamCallbackUrl,
} from './support/upstreams';

// Two providers, argon2 and WebAuthn ceremonies in one flow: more than the default 30 s on a busy machine.
jest.setTimeout(90_000);

const PROVIDER = 'Example ID';
const CLIENT = { client_id: 'acme-downstream', client_secret: `secret-${unique()}-${unique()}` };
const linkHeading = (page: Page) => page.getByRole('heading', { name: `Link your ${PROVIDER} account` });
const usePasskey = (page: Page) => page.getByRole('button', { name: 'Use a passkey', exact: true });

let h: Harness;
let tenant: Tenant;
let op: OidcProviderProcess;
let provider: UpstreamProvider;
let context: BrowserContext;
let page: Page;
let authenticator: VirtualAuthenticator;

beforeAll(async () => {
  h = await startHarness({ hostName: 'localhost' });
  tenant = await acmeTenant(h);
  op = await startOidcProvider({ clients: [{ ...CLIENT, redirect_uris: [upstreamCallbackUrl(h, tenant)] }] });
  provider = await h.t.services.federation.providers.create(tenant.platform.id, {
    kind: 'oidc',
    slug: 'example',
    displayName: PROVIDER,
    issuer: op.issuer,
    clientId: CLIENT.client_id,
    clientSecret: CLIENT.client_secret,
    trustEmail: true,
  });
}, 60_000);
afterAll(async () => {
  await op?.stop();
  await h?.close();
});
beforeEach(async () => {
  ({ context, page } = await freshPage(h));
  authenticator = await addVirtualAuthenticator(page);
  // The sign-in page's conditional request would be answered by the authenticator at once (a passkey sign-in).
  await withoutAutofill(page);
});
afterEach(() => context?.close());

/** A local user (password) who adds a passkey on the account page of this browser, then signs out there. */
async function localUserWithPasskey(prefix: string) {
  const user = await createUser(h, tenant, { email: newEmail(prefix) });
  await openAccountPage(h, tenant, page, user.email);
  await addPasskey(page, 'Laptop');
  await page.getByText('Passkey “Laptop” added.').waitFor();
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign out', exact: true }));
  await expectSignedOut();
  const [passkey] = await h.t.services.passkeys.list(tenant.platform.id, user.id);
  return { user, passkey };
}

/** The downstream's account page asks this browser to sign in (nobody is signed in). */
async function expectSignedOut() {
  const res = await context.request.get(`${h.base}/account?platform_guid=${tenant.platform.id}`);
  const html = await res.text();
  expect(html).not.toContain('Your account</h1>');
  expect(html).toContain('name="password"'); // its own sign-in form instead
}

/** From a new authorization's sign-in page, through the upstream as this person, to the link page. */
async function toLinkPage(email: string) {
  const id = `op-${unique()}`;
  await op.addAccount(id, { email, email_verified: true, given_name: 'Grace', family_name: 'Hopper' });
  await openAuthorize(page, authorizeUrl(h, tenant));
  // The accounts signed out in this browser are still listed (signed out): another account, then.
  if ((await pageKind(page)) === 'chooser')
    await clickAndLoad(page, page.getByRole('button', { name: 'Use another account' }));
  await expectPage(page, 'signin');
  await continueWith(page, PROVIDER);
  expect(new URL(page.url()).origin).toBe(op.issuer);
  await page.locator('input[name=login]').fill(id);
  await page.locator('input[name=password]').fill('anything');
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign-in' }));
  await clickAndLoad(page, page.getByRole('button', { name: 'Continue' }));
  expect(onDownstream(h, page)).toBe(true);
  await linkHeading(page).waitFor();
  await usePasskey(page).waitFor(); // shown by passkeys.js once the browser can do WebAuthn
  return id;
}

/**
 * The link page's next passkey request names only this credential (as if it were the account's).
 * The page's own fetch is wrapped, not the network intercepted: the wrapper goes with this document.
 */
async function offerOnly(credentialId: string) {
  await page.evaluate((id) => {
    const original = window.fetch.bind(window);
    window.fetch = async (input, init) => {
      const res = await original(input, init);
      if (!String(input).endsWith('/link-account/passkey-options')) return res;
      const json = await res.json();
      json.options.allowCredentials = [{ id, type: 'public-key' }];
      return new Response(JSON.stringify(json), {
        status: res.status,
        headers: { 'content-type': 'application/json' },
      });
    };
  }, credentialId);
}

/** After a proof that links: consent (if asked), then the code at the app; otherwise what the page says. */
async function consentToCallback() {
  // The passkey's form is posted by the page's script after the ceremony: wait for where it ends
  // (a deadline, not a sleep) rather than trusting the first navigation seen, which a busy machine can race.
  await page
    .waitForFunction(
      () =>
        location.pathname === '/__rp/callback' ||
        /wants to access your account/.test(document.querySelector('h1')?.textContent ?? ''),
      undefined,
      { timeout: 30_000 },
    )
    .catch(() => undefined);
  if ((await pageKind(page)) === 'consent') await allow(page);
  if (!isCallback(page)) {
    const said = await page
      .locator('h1, [role=alert], [data-passkey-error]')
      .allInnerTexts()
      .catch(() => []);
    throw new Error(`expected the app's callback, got ${page.url()}: ${said.join(' | ')}`);
  }
  return finishAtCallback(h, tenant, page);
}

const linkedAudit = async (userId: string) =>
  (await upstreamAudit(h, tenant, 'identity.linked', 'example')).filter((a) => a.subject === userId);

it("links with the account's own passkey: signed in, consent, a code at the app; the identity stored and audited", async () => {
  const { user } = await localUserWithPasskey('pk-link');
  const subject = await toLinkPage(user.email);
  await expect(page.locator('main').innerText()).resolves.toContain(user.email);
  expect(await identitiesOf(h, user.id)).toEqual([]);

  await clickAndLoad(page, usePasskey(page));
  const { idToken } = await consentToCallback();
  expect(idToken).toMatchObject({ sub: user.id, email: user.email, amr: ['fed'] });

  const identities = await identitiesOf(h, user.id);
  expect(identities).toEqual([expect.objectContaining({ provider_id: provider.id, subject, email: user.email })]);
  expect(await linkedAudit(user.id)).toEqual([
    expect.objectContaining({
      kind: 'identity.linked',
      details: expect.objectContaining({ provider: 'example', email: user.email }),
    }),
  ]);
  const [stored] = await h.t.services.passkeys.list(tenant.platform.id, user.id);
  expect(stored.lastUsedAt).toBeInstanceOf(Date);
});

it("refuses a passkey of another local account on the link page: nothing linked, nobody signed in; the account's own then links", async () => {
  const owner = await localUserWithPasskey('pk-owner');
  const other = await localUserWithPasskey('pk-other');
  expect(await credentialsOf(authenticator)).toHaveLength(2);
  const subject = await toLinkPage(owner.user.email);

  // The authenticator is asked for the other account's credential only: it signs with that one.
  await offerOnly(other.passkey.credentialId);
  const refused = await clickAndLoad(page, usePasskey(page));
  expect(refused?.status()).toBe(400);
  await linkHeading(page).waitFor();
  await expect(page.getByRole('alert').first().innerText()).resolves.toContain(
    'This passkey is not registered for this account.',
  );
  expect(await identitiesOf(h, owner.user.id)).toEqual([]);
  expect(await identitiesOf(h, other.user.id)).toEqual([]);
  expect((await identitiesOfProvider(h, provider.id)).filter((i) => i.subject === subject)).toEqual([]);
  expect(await linkedAudit(owner.user.id)).toEqual([]);
  expect(await linkedAudit(other.user.id)).toEqual([]);
  const failed = await h.t.database
    .db('audit_events')
    .where({ platform_id: tenant.platform.id, kind: 'sign_in.failed', subject: owner.user.id })
    .select('details');
  expect(failed.map((f) => f.details)).toContainEqual(
    expect.objectContaining({ method: 'passkey', reason: 'unknown_passkey', purpose: 'confirm' }),
  );
  await expectSignedOut();

  // The same page (reloaded, its fetch its own again), the account's own passkey: linked to the owner, not to the other account.
  await clickAndLoad(page, usePasskey(page));
  const { idToken } = await consentToCallback();
  expect(idToken!.sub).toBe(owner.user.id);
  expect(await identitiesOf(h, owner.user.id)).toEqual([
    expect.objectContaining({ provider_id: provider.id, subject }),
  ]);
  expect(await identitiesOf(h, other.user.id)).toEqual([]);
});

it('links nothing when the passkey is gone from the authenticator (the ceremony fails): the page says so and stays', async () => {
  const { user } = await localUserWithPasskey('pk-gone');
  const subject = await toLinkPage(user.email);
  await authenticator.cdp.send('WebAuthn.clearCredentials', { authenticatorId: authenticator.authenticatorId });

  await usePasskey(page).click();
  await expect(
    page.locator('[data-passkey-error]').filter({ hasText: /\S/ }).first().innerText({ timeout: 75_000 }),
  ).resolves.toMatch(/cancelled|timed out/);
  await linkHeading(page).waitFor();
  expect(await identitiesOf(h, user.id)).toEqual([]);
  expect((await identitiesOfProvider(h, provider.id)).filter((i) => i.subject === subject)).toEqual([]);
  expect(await linkedAudit(user.id)).toEqual([]);
  await expectSignedOut();
});
