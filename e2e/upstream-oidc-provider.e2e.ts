// With the `oidc-provider` package (its own node process) as the
// upstream: a new person signs up through it; a re-authentication goes on to it (prompt=login,
// max_age); a login_hint's account is kept; its error, its being down and tampering with the state
// or the nonce each end on the failure page, with nothing created.
import type { Page } from 'playwright-core';
import type { UpstreamProvider } from '../src/domain/upstream';
import { startOidcProvider, type OidcProviderProcess } from '../test/support/upstreams/oidc-provider-process';
import {
  allow,
  authorizeUrl,
  clickAndLoad,
  createUser,
  expectPage,
  finishAtCallback,
  newEmail,
  openAuthorize,
  pickAccount,
  unique,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';
import { acmeTenant } from './support/passkeys';
import {
  continueButton,
  continueWith,
  expectAxeClean,
  expectFailurePage,
  freshPage,
  identitiesOf,
  identitiesOfProvider,
  interceptRedirectTo,
  onDownstream,
  shoot,
  lastUpstreamFailure,
  upstreamAudit,
  upstreamCallbackUrl,
  userByEmail,
  withParam,
} from './support/upstreams';

// Each flow goes through two providers (and argon2 on both sides): more than the default 30 s on a busy machine.
jest.setTimeout(90_000);

const PROVIDER = 'Example ID';
const isCallback = (url: URL) => url.pathname.endsWith('/upstream/callback');
const CLIENT = { client_id: 'acme-downstream', client_secret: `secret-${unique()}-${unique()}` };

let h: Harness;
let tenant: Tenant;
let op: OidcProviderProcess;
let provider: UpstreamProvider;
let page: Page;

useBrowserSuite((s) => ({ h, tenant, page } = s), { tenant: acmeTenant, openPage: freshPage });
beforeAll(async () => {
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
});

/** A person of the upstream, with an account id and email of this test. */
async function upstreamPerson(prefix: string, issuer: OidcProviderProcess = op) {
  const id = `${prefix}-${unique()}`;
  const email = newEmail(prefix);
  await issuer.addAccount(id, { email, email_verified: true, given_name: 'Katherine', family_name: 'Johnson' });
  return { id, email };
}

/** The upstream's development sign-in: the account id (its password is not checked). */
async function upstreamLogin(accountId: string, issuer: OidcProviderProcess = op) {
  expect(new URL(page.url()).origin).toBe(issuer.issuer);
  await page.locator('input[name=login]').fill(accountId);
  await page.locator('input[name=password]').fill('anything');
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign-in' }));
}

/** The upstream's consent page: Continue. */
const upstreamConsent = () => clickAndLoad(page, page.getByRole('button', { name: 'Continue' }));

async function startAtSignIn(providerName = PROVIDER) {
  await openAuthorize(page, authorizeUrl(h, tenant));
  await expectPage(page, 'signin');
  await continueWith(page, providerName);
}

it('signs up a new person through it from the sign-up page: pre-filled, date of birth, consent, a code at the app', async () => {
  const person = await upstreamPerson('op-new');
  await openAuthorize(page, authorizeUrl(h, tenant, { action: 'register' }));
  await expectPage(page, 'signup');
  await continueWith(page, PROVIDER);
  await upstreamLogin(person.id);
  await upstreamConsent();

  expect(onDownstream(h, page)).toBe(true);
  await expectPage(page, 'signup');
  await expect(page.getByLabel('Email').inputValue()).resolves.toBe(person.email);
  await expect(page.getByLabel('First name').inputValue()).resolves.toBe('Katherine');
  await page.getByLabel('Date of birth').fill('1985-08-26');
  await clickAndLoad(page, page.getByRole('button', { name: 'Create account' }));
  await allow(page);
  const { idToken } = await finishAtCallback(h, tenant, page);
  expect(idToken).toMatchObject({
    email: person.email,
    email_verified: true,
    given_name: 'Katherine',
    family_name: 'Johnson',
    amr: ['fed'],
  });
  const identities = await identitiesOf(h, idToken!.sub as string);
  expect(identities).toEqual([
    expect.objectContaining({ provider_id: provider.id, subject: person.id, email: person.email }),
  ]);
});

it('sends a re-authentication (prompt=login, max_age) on to the upstream, and signs the same person in again', async () => {
  const person = await upstreamPerson('op-again');
  await startAtSignIn();
  await upstreamLogin(person.id);
  await upstreamConsent();
  await page.getByLabel('Date of birth').fill('1985-08-26');
  await clickAndLoad(page, page.getByRole('button', { name: 'Create account' }));
  await allow(page);
  const first = (await finishAtCallback(h, tenant, page)).idToken!;

  await openAuthorize(page, authorizeUrl(h, tenant, { prompt: 'login', max_age: '0' }));
  await pickAccount(page, person.email); // the chooser, then its sign-in page again for this account
  await expectPage(page, 'signin');
  const out = await interceptRedirectTo(
    page,
    (url) => url.origin === h.base && url.pathname.endsWith('/upstream/example'),
    (url) => url.origin === op.issuer && url.pathname === '/auth',
    () => undefined,
  );
  await continueWith(page, PROVIDER);
  expect(out.reached()?.searchParams.get('prompt')).toBe('login');
  expect(out.reached()?.searchParams.get('max_age')).toBe('0');
  await upstreamLogin(person.id); // the upstream asks again (its session would otherwise do)
  const { idToken } = await finishAtCallback(h, tenant, page);
  expect(idToken!.sub).toBe(first.sub);
  expect(idToken!.auth_time as number).toBeGreaterThanOrEqual(first.auth_time as number);
});

it('keeps the login_hint account: an upstream person with another email ends on its sign-in page, nothing created', async () => {
  const hinted = await createUser(h, tenant);
  const person = await upstreamPerson('op-other');
  await openAuthorize(page, authorizeUrl(h, tenant, { login_hint: hinted.email }));
  await expectPage(page, 'signin');
  await continueWith(page, PROVIDER);
  await upstreamLogin(person.id);
  const res = await upstreamConsent();

  expect(res?.status()).toBe(400);
  await expectPage(page, 'signin');
  await expect(page.getByRole('alert').first().innerText()).resolves.toContain(`This sign-in is for ${hinted.email}.`);
  expect(await userByEmail(h, tenant, person.email)).toBeUndefined();
  expect(await identitiesOf(h, hinted.id)).toEqual([]);
});

it('ends on the failure page when the upstream answers access_denied (consent refused there), offering the other ways in', async () => {
  const person = await upstreamPerson('op-deny');
  await startAtSignIn();
  await upstreamLogin(person.id);
  const res = await clickAndLoad(page, page.getByRole('link', { name: /Cancel/ }));

  await expectFailurePage(h, page, PROVIDER);
  expect([400, 502]).toContain(res?.status());
  await expectAxeClean(page);
  await shoot(page, 'upstream-failure');
  expect(await userByEmail(h, tenant, person.email)).toBeUndefined();
  expect((await upstreamAudit(h, tenant, 'sign_in.failed', 'example'))[0]?.details).toMatchObject({
    method: 'upstream',
    provider: 'example',
    reason: 'upstream_error',
  });

  // Other ways in: back to the sign-in page of the same authorization, its password form and buttons.
  await clickAndLoad(page, page.getByRole('link', { name: /sign.in/i }).first());
  await expectPage(page, 'signin');
  await expect(page.getByLabel('Password').count()).resolves.toBe(1);
  await expect(continueButton(page, PROVIDER).count()).resolves.toBe(1);
});

it('ends on the failure page, not a server error, when the upstream goes down in the middle of the sign-in', async () => {
  // A process of its own for this test: it is stopped on the way back.
  const flaky = await startOidcProvider({ clients: [{ ...CLIENT, redirect_uris: [upstreamCallbackUrl(h, tenant)] }] });
  try {
    await h.t.services.federation.providers.create(tenant.platform.id, {
      kind: 'oidc',
      slug: 'flaky',
      displayName: 'Flaky ID',
      issuer: flaky.issuer,
      clientId: CLIENT.client_id,
      clientSecret: CLIENT.client_secret,
    });
    const person = await upstreamPerson('op-down', flaky);
    await startAtSignIn('Flaky ID');
    await upstreamLogin(person.id, flaky);
    // The upstream redirects back with its code; before the browser gets there, it stops: the
    // downstream's code exchange finds nobody at the token endpoint.
    const back = await interceptRedirectTo(
      page,
      (url) => url.origin === flaky.issuer && url.pathname.startsWith('/interaction/'),
      isCallback,
      () => flaky.stop(),
    );
    const res = await upstreamConsent();
    expect(back.reached()).toBeDefined();
    await expectFailurePage(h, page, 'Flaky ID');
    expect([400, 502]).toContain(res?.status());
    expect(await userByEmail(h, tenant, person.email)).toBeUndefined();
    expect((await upstreamAudit(h, tenant, 'sign_in.failed', 'flaky'))[0]?.details).toMatchObject({
      reason: 'unreachable',
    });
    await page.unrouteAll();

    // Down from the start (a provider whose discovery was never read): the button itself ends there.
    await h.t.services.federation.providers.create(tenant.platform.id, {
      kind: 'oidc',
      slug: 'gone',
      displayName: 'Gone ID',
      issuer: flaky.issuer,
      clientId: CLIENT.client_id,
      clientSecret: CLIENT.client_secret,
    });
    await openAuthorize(page, authorizeUrl(h, tenant));
    const again = await continueWith(page, 'Gone ID');
    await expectFailurePage(h, page, 'Gone ID');
    expect([400, 502]).toContain(again?.status());
  } finally {
    await flaky.stop();
    for (const slug of ['flaky', 'gone'])
      await h.t.services.federation.providers.remove(tenant.platform.id, slug).catch(() => undefined);
  }
});

it('refuses an answer whose state was altered on the way back: failure page, nothing created', async () => {
  const person = await upstreamPerson('op-state');
  await startAtSignIn();
  await upstreamLogin(person.id);
  const back = await interceptRedirectTo(
    page,
    (url) => url.origin === op.issuer && url.pathname.startsWith('/interaction/'),
    isCallback,
    (url) => withParam(url, 'state', `${url.searchParams.get('state')}x`),
  );
  await upstreamConsent();
  expect(back.reached()?.searchParams.get('code')).toBeTruthy();

  // The pending sign-ins of a browser are kept by their state: an unknown one names no provider.
  await expectFailurePage(h, page, null);
  await expect(page.locator('main').innerText()).resolves.toMatch(/expired|another browser/);
  expect(await userByEmail(h, tenant, person.email)).toBeUndefined();
  expect((await identitiesOfProvider(h, provider.id)).filter((i) => i.subject === person.id)).toEqual([]);
  expect(await lastUpstreamFailure(h, tenant)).toMatchObject({ method: 'upstream', reason: 'state_mismatch' });
});

it('refuses an ID token whose nonce is not the one sent (the request altered on the way to the upstream): failure page, nothing created', async () => {
  const person = await upstreamPerson('op-nonce');
  await openAuthorize(page, authorizeUrl(h, tenant));
  await expectPage(page, 'signin');
  const out = await interceptRedirectTo(
    page,
    (url) => url.origin === h.base && url.pathname.endsWith('/upstream/example'),
    (url) => url.origin === op.issuer && url.pathname === '/auth',
    (url) => withParam(url, 'nonce', `tampered-${unique()}`),
  );
  await continueWith(page, PROVIDER);
  expect(out.reached()?.searchParams.get('nonce')).toBeTruthy();
  await upstreamLogin(person.id);
  await upstreamConsent();

  await expectFailurePage(h, page, PROVIDER);
  expect(await userByEmail(h, tenant, person.email)).toBeUndefined();
  expect((await identitiesOfProvider(h, provider.id)).filter((i) => i.subject === person.id)).toEqual([]);
  expect((await upstreamAudit(h, tenant, 'sign_in.failed', 'example'))[0]?.details).toMatchObject({
    reason: 'invalid_response',
  });
});
