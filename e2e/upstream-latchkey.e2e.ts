// With a second Latchkey (its own OS process, database and port) as
// the upstream OpenID Connect provider of the harness's platform: sign-up pre-filled from the
// upstream, the returning user, linking an existing account only with proof (its password, or the
// emailed link in the browser that asked), never silently; the account page's sign-in through the
// upstream, its linked accounts, unlinking and the last way in.
import type { BrowserContext, Page } from 'playwright-core';
import type { UpstreamProvider } from '../src/domain/upstream';
import {
  startLatchkeyUpstream,
  UPSTREAM_PASSWORD,
  type LatchkeyUpstream,
} from '../test/support/upstreams/latchkey-process';
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
  signIn,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';
import { waitForMail } from '../test/support/outbox';
import { buildClient } from '../test/factories';
import { recordingServer } from './support/recording-server';
import { acmeTenant } from './support/passkeys';
import {
  continueButton,
  continueWith,
  expectAxeClean,
  freshPage,
  identitiesOf,
  linkedAccounts,
  onDownstream,
  openAccount,
  shoot,
  upstreamCallbackUrl,
  userByEmail,
} from './support/upstreams';

// Each flow goes through two providers (and argon2 on both sides): more than the default 30 s on a busy machine.
jest.setTimeout(90_000);

const PROVIDER = 'Upstream Corp';

let h: Harness;
let tenant: Tenant;
let upstream: LatchkeyUpstream;
let provider: UpstreamProvider;
let context: BrowserContext;
let page: Page;

// Platform "Acme" (the screenshots), app "Acme Notes".
useBrowserSuite((s) => ({ h, tenant, context, page } = s), { tenant: acmeTenant, openPage: freshPage });
beforeAll(async () => {
  upstream = await startLatchkeyUpstream({
    redirectUri: upstreamCallbackUrl(h, tenant),
    platformName: PROVIDER,
    clientName: 'Acme',
  });
  provider = await h.t.services.federation.providers.create(tenant.platform.id, {
    kind: 'oidc',
    slug: 'corp',
    displayName: PROVIDER,
    issuer: upstream.issuer,
    clientId: upstream.client.id,
    clientSecret: upstream.client.secret,
    trustEmail: true,
  });
}, 120_000);
afterAll(async () => {
  await upstream?.stop();
});

/** Downstream authorize → "Continue with Upstream Corp" → the upstream's sign-in and consent → back downstream. */
async function throughUpstream(email: string, params: Record<string, string> = {}, app: Tenant = tenant) {
  await openAuthorize(page, authorizeUrl(h, app, params));
  await expectPage(page, 'signin');
  await continueWith(page, PROVIDER);
  expect(new URL(page.url()).origin).toBe(upstream.url); // the upstream's own sign-in page
  await signIn(page, email, UPSTREAM_PASSWORD);
  if (!onDownstream(h, page) && (await pageKind(page)) === 'consent') await allow(page);
  expect(onDownstream(h, page)).toBe(true);
}

/** A person of the upstream who has signed up downstream through it (in a browser of its own), for the app. */
async function upstreamSignUp(prefix: string, app: Tenant = tenant) {
  const email = newEmail(prefix);
  await upstream.createUser({ email, givenName: 'Grace', familyName: 'Hopper' });
  await throughUpstream(email, {}, app);
  await expectPage(page, 'signup');
  await page.getByLabel('Date of birth').fill('1990-05-17');
  await clickAndLoad(page, page.getByRole('button', { name: 'Create account' }));
  await allow(page);
  const { idToken } = await finishAtCallback(h, app, page);
  return { email, sub: idToken!.sub as string };
}

it('signs up a new person: the sign-up page is pre-filled from the upstream and still asks the date of birth; consent; a code at the app', async () => {
  const email = newEmail('up-new');
  const upstreamUser = await upstream.createUser({ email, givenName: 'Grace', familyName: 'Hopper' });

  const state = 'state-upstream-new';
  await openAuthorize(page, authorizeUrl(h, tenant, { state }));
  await expectPage(page, 'signin');
  await expect(continueButton(page, PROVIDER).isVisible()).resolves.toBe(true);
  await expectAxeClean(page);
  await shoot(page, 'upstream-signin');

  await continueWith(page, PROVIDER);
  expect(new URL(page.url()).origin).toBe(upstream.url);
  await signIn(page, email, UPSTREAM_PASSWORD);
  await allow(page); // the upstream asks its own consent for the downstream ("Acme")

  await expectPage(page, 'signup');
  expect(onDownstream(h, page)).toBe(true);
  await expect(page.getByLabel('Email').inputValue()).resolves.toBe(email);
  await expect(page.getByLabel('First name').inputValue()).resolves.toBe('Grace');
  await expect(page.getByLabel('Last name').inputValue()).resolves.toBe('Hopper');
  await expect(page.getByLabel('Date of birth').inputValue()).resolves.toBe('');
  await expect(page.locator('main').innerText()).resolves.toContain(PROVIDER);
  await expectAxeClean(page);
  await shoot(page, 'upstream-signup');
  expect(await userByEmail(h, tenant, email)).toBeUndefined(); // nobody is created before the form

  // The spec's rule holds for upstream sign-ups too: no date of birth, no account.
  const refused = await clickAndLoad(page, page.getByRole('button', { name: 'Create account' }));
  expect(refused?.status()).toBe(400);
  await expectPage(page, 'signup');
  expect(await userByEmail(h, tenant, email)).toBeUndefined();

  await page.getByLabel('Date of birth').fill('1990-05-17');
  await clickAndLoad(page, page.getByRole('button', { name: 'Create account' }));
  await allow(page);
  const { idToken } = await finishAtCallback(h, tenant, page, state);
  expect(idToken).toMatchObject({
    email,
    email_verified: true,
    given_name: 'Grace',
    family_name: 'Hopper',
    birthdate: '1990-05-17',
    amr: ['fed'],
  });

  const user = await userByEmail(h, tenant, email);
  expect(user.id).toBe(idToken!.sub);
  expect(user.password_hash).toBeNull(); // signs in through its upstream identity
  const identities = await identitiesOf(h, user.id);
  expect(identities).toHaveLength(1);
  expect(identities[0]).toMatchObject({
    provider_id: provider.id,
    subject: upstreamUser.sub,
    email,
    sealed_tokens: null,
  });
});

it('signs a returning person straight through: no sign-up, no second account', async () => {
  const { email, sub } = await upstreamSignUp('up-back');
  await context.close();
  ({ context, page } = await freshPage(h)); // a new browser: signed in nowhere

  await throughUpstream(email);
  // Consent for Acme Notes was given at the sign-up: the code comes at once.
  const { idToken } = await finishAtCallback(h, tenant, page);
  expect(idToken).toMatchObject({ sub, email, amr: ['fed'] });
  expect(
    (await h.t.database.db('users').where({ platform_id: tenant.platform.id, email_normalized: email })).length,
  ).toBe(1);
});

it("signs a returning person through to an app on a third origin: the upstream form's CSP form-action does not stop the way back", async () => {
  // Chromium applies the CSP form-action of the upstream's sign-in page to every redirect after its
  // POST: to the downstream's callback (allowed there), then on to the app (not allowed there).
  const elsewhere = await recordingServer();
  try {
    const client = await buildClient(h.t.services, tenant.platform.id, {
      redirectUris: [`${elsewhere.base}/__rp/callback`],
      name: 'Acme Notes',
    });
    const app: Tenant = { platform: tenant.platform, client };
    const { email, sub } = await upstreamSignUp('up-third', app); // account, link and consent at both providers
    await context.close();
    ({ context, page } = await freshPage(h)); // a new browser: signed in nowhere
    const refused: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/.test(m.text())) refused.push(m.text());
    });

    const state = 'state-third-origin';
    await openAuthorize(page, authorizeUrl(h, app, { state }));
    await continueWith(page, PROVIDER);
    expect(new URL(page.url()).origin).toBe(upstream.url);
    // The upstream's sign-in, and nothing else: no consent is asked anywhere (both were given at the sign-up).
    await expectPage(page, 'signin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(UPSTREAM_PASSWORD);
    const atApp = page.waitForURL(`${elsewhere.base}/__rp/callback?**`).then(
      () => undefined,
      (err: Error) => err,
    );
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const missed = await atApp;
    if (missed)
      throw new Error(
        `never reached the app (at ${page.url()}; ${refused.join(' | ') || 'no CSP message seen'}): ${missed.message}`,
      );
    expect(refused).toEqual([]);
    const { idToken } = await finishAtCallback(h, app, page, state);
    expect(idToken).toMatchObject({ sub, email, amr: ['fed'] });
  } finally {
    await elsewhere.close();
  }
});

it('links an existing account with the same email only after its password proves it; the account page lists the linked provider and unlinks it', async () => {
  const email = newEmail('up-link');
  const local = await createUser(h, tenant, { email });
  const upstreamUser = await upstream.createUser({ email });

  await throughUpstream(email);
  await page.getByRole('heading', { name: `Link your ${PROVIDER} account` }).waitFor();
  await expect(page.locator('main').innerText()).resolves.toContain(email);
  await expectAxeClean(page);
  await shoot(page, 'upstream-link');
  expect(await identitiesOf(h, local.id)).toHaveLength(0);

  // A wrong password links nothing and says so.
  await page.getByLabel('Password').fill('not-the-password');
  const wrong = await clickAndLoad(page, page.getByRole('button', { name: /^Link/ }));
  expect(wrong?.status()).toBe(400);
  await page.getByRole('heading', { name: `Link your ${PROVIDER} account` }).waitFor();
  await expect(page.getByRole('alert').first().innerText()).resolves.toMatch(/password/i);
  expect(await identitiesOf(h, local.id)).toHaveLength(0);

  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await clickAndLoad(page, page.getByRole('button', { name: /^Link/ }));
  if ((await pageKind(page)) === 'consent') await allow(page);
  const { idToken } = await finishAtCallback(h, tenant, page);
  expect(idToken!.sub).toBe(local.id);
  const identities = await identitiesOf(h, local.id);
  expect(identities).toHaveLength(1);
  expect(identities[0]).toMatchObject({ provider_id: provider.id, subject: upstreamUser.sub });

  // The account page of this browser (signed in by the flow) lists it under the sign-in methods.
  await openAccount(h, tenant, page);
  await page.getByRole('heading', { name: 'Sign-in methods' }).waitFor();
  const linked = await linkedAccounts(page);
  expect(linked).toHaveLength(1);
  expect(linked[0]).toContain(PROVIDER);
  expect(linked[0]).toContain(email);
  await expectAxeClean(page);
  await shoot(page, 'upstream-account', 'h2:text-is("Sign-in methods")');

  // It has a password too: the identity may go.
  await clickAndLoad(
    page,
    page.getByRole('list', { name: 'Linked accounts' }).getByRole('button', { name: /^Unlink/ }),
  );
  await page.getByRole('heading', { name: 'Your account' }).waitFor();
  await expect(page.getByRole('status').first().innerText()).resolves.toContain(PROVIDER);
  expect(await linkedAccounts(page)).toEqual([]);
  expect(await identitiesOf(h, local.id)).toHaveLength(0);
});

it('links with the emailed link opened in the browser that asked (another browser links nothing)', async () => {
  const email = newEmail('up-mail');
  const local = await createUser(h, tenant, { email });
  await upstream.createUser({ email });

  await throughUpstream(email);
  await page.getByRole('heading', { name: `Link your ${PROVIDER} account` }).waitFor();
  await clickAndLoad(page, page.getByRole('button', { name: 'Email me a link' }));
  await expect(page.getByRole('status').first().innerText()).resolves.toContain(email);
  const mail = await waitForMail(h.t.config.dataDir, email, new RegExp(`Link your ${PROVIDER} account`));
  const link = mail.text.match(/https?:\/\/\S+/g)?.find((u) => new URL(u).pathname.endsWith('/link-account/email'));
  expect(link).toBeDefined();

  // Someone else's browser (the mail forwarded, read elsewhere): nothing linked, nobody signed in.
  const other = await freshPage(h);
  try {
    await other.page.goto(link!);
    await expect(other.page.getByRole('heading', { name: 'Your account' }).count()).resolves.toBe(0);
    expect(isCallback(other.page)).toBe(false);
    expect(await identitiesOf(h, local.id)).toHaveLength(0);
  } finally {
    await other.context.close();
  }

  await page.goto(link!);
  if ((await pageKind(page)) === 'consent') await allow(page);
  const { idToken } = await finishAtCallback(h, tenant, page);
  expect(idToken!.sub).toBe(local.id);
  expect(await identitiesOf(h, local.id)).toEqual([expect.objectContaining({ provider_id: provider.id })]);

  // Used once: opening it again links nothing more and signs nobody in elsewhere.
  const again = await page.goto(link!);
  expect(again?.status()).toBeLessThan(500);
  expect(isCallback(page)).toBe(false);
});

it('never links silently: without the proof nothing is linked and the browser is not signed in', async () => {
  const email = newEmail('up-silent');
  const local = await createUser(h, tenant, { email });
  await upstream.createUser({ email });

  await throughUpstream(email);
  await page.getByRole('heading', { name: `Link your ${PROVIDER} account` }).waitFor();

  // Decline: back to the sign-in page of the same authorization, nobody signed in.
  await clickAndLoad(page, page.getByRole('link', { name: /^Cancel/ }));
  await expectPage(page, 'signin');
  // Nor does walking away from the link page sign anyone in: the app's next authorization asks again,
  // and the account page asks to sign in.
  await openAuthorize(page, authorizeUrl(h, tenant));
  await expectPage(page, 'signin');
  await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}`);
  await expect(page.getByRole('heading', { name: 'Your account' }).count()).resolves.toBe(0);
  await expect(page.getByLabel('Password').count()).resolves.toBe(1);

  expect(await identitiesOf(h, local.id)).toHaveLength(0);
  expect(
    await h.t.database
      .db('user_identities')
      .where({ platform_id: tenant.platform.id, provider_id: provider.id })
      .whereIn('email', [email]),
  ).toHaveLength(0);
  const audit = await h.t.database
    .db('audit_events')
    .where({ platform_id: tenant.platform.id, subject: local.id })
    .select('kind');
  expect(audit.map((a) => a.kind)).not.toContain('identity.linked');
});

it('signs in on the account page through the upstream, and refuses to unlink the last way in', async () => {
  const { email, sub } = await upstreamSignUp('up-last');
  await context.close();
  ({ context, page } = await freshPage(h));

  // The account page's own sign-in offers the same button; the linked identity signs in there.
  await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}`);
  await continueWith(page, PROVIDER);
  await signIn(page, email, UPSTREAM_PASSWORD);
  await page.getByRole('heading', { name: 'Your account' }).waitFor();
  await expect(page.locator('main').innerText()).resolves.toContain(email);

  await clickAndLoad(page, page.getByRole('link', { name: 'Security', exact: true })); // where the linked accounts are
  expect(await linkedAccounts(page)).toEqual([expect.stringContaining(PROVIDER)]);
  const res = await clickAndLoad(
    page,
    page.getByRole('list', { name: 'Linked accounts' }).getByRole('button', { name: /^Unlink/ }),
  );
  expect(res?.status()).toBeLessThan(500);
  await expect(page.getByRole('alert').first().innerText()).resolves.toMatch(/only way|last way|sign in/i);
  expect(await identitiesOf(h, sub)).toHaveLength(1);
  expect((await userByEmail(h, tenant, email)).id).toBe(sub);
});
