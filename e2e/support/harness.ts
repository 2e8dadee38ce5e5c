import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { chromium, type Browser, type BrowserContext, type Locator, type Page, type Response } from 'playwright-core';
import { buildTestApp } from '../../test/helpers';
import { freshDatabase, type FreshDatabase } from '../../test/support/fresh-database';
import { migrateLatest } from '../../src/db';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../../test/factories';

export { TEST_PASSWORD };

/** Debian's Chromium, headless; never a downloaded browser. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

export interface Harness {
  base: string;
  t: TestApp;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * The provider on a real port (BASE_URL = its own address), with a stand-in relying party at
 * /__rp/* on the same server, and one Chromium for the whole test file.
 */
export interface HarnessOptions {
  hostName?: string;
  env?: Record<string, string>;
  mailWorker?: boolean;
  backchannelWorker?: boolean;
  ownDatabase?: boolean;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // hostName 'localhost' for passkeys: browsers refuse an IP address as WebAuthn RP id.
  const base = `http://${options.hostName ?? '127.0.0.1'}:${port}`;
  // ownDatabase: screens that list everything (the admin console) must not see other suites' rows,
  // which the run's shared database gains while files run in parallel. Postgres runs only.
  const own: FreshDatabase | undefined =
    options.ownDatabase && process.env.TEST_DATABASE_KIND === 'postgres' ? await freshDatabase() : undefined;
  const t = await buildTestApp(
    { ...options.env, ...(own ? { DATABASE_URL: own.env.DATABASE_URL } : {}), BASE_URL: base },
    undefined,
    { mailWorker: options.mailWorker, backchannelWorker: options.backchannelWorker },
  );
  if (own) await migrateLatest(t.database.db);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url?.startsWith('/__rp/')) {
      res.setHeader('content-type', 'text/plain');
      res.end('rp ok');
    } else t.app(req, res);
  });
  const browser = await launchBrowser();
  return {
    base,
    t,
    browser,
    async close() {
      await browser.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
      await own?.drop();
    },
  };
}

export const unique = () => randomBytes(5).toString('hex');
export const newEmail = (prefix = 'e2e') => `${prefix}-${unique()}@example.com`;

/** A platform and a confidential client whose redirect_uri lands on the stand-in RP. */
export async function buildTenant(h: Harness, clientInput: Parameters<typeof buildClient>[2] = {}) {
  const platform = await buildPlatform(h.t.services);
  // A localhost provider (passkeys) keeps its stand-in RP on the loopback IP: localhost redirect URIs are refused (RFC 8252 §8.3).
  const rpBase = h.base.replace('://localhost:', '://127.0.0.1:');
  const client = await buildClient(h.t.services, platform.id, {
    redirectUris: [`${rpBase}/__rp/callback`],
    name: 'Acme Notes',
    ...clientInput,
  });
  return { platform, client };
}
export type Tenant = Awaited<ReturnType<typeof buildTenant>>;

export const createUser = (h: Harness, tenant: Tenant, input: Parameters<typeof buildUser>[2] = {}) =>
  buildUser(h.t.services, tenant.platform.id, input);

/** A fresh context (fresh cookies) at 1280x800 and its page. */
export async function newPage(h: Harness): Promise<{ context: BrowserContext; page: Page }> {
  const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  return { context, page };
}

export const DEFAULT_SCOPE = 'openid profile email phone offline_access';

export function authorizeUrl(h: Harness, tenant: Tenant, params: Record<string, string> = {}) {
  const q = new URLSearchParams({
    platform_guid: tenant.platform.id,
    response_type: 'code',
    client_id: tenant.client.id,
    redirect_uri: tenant.client.redirectUris[0],
    scope: DEFAULT_SCOPE,
    state: `st-${unique()}`,
    nonce: `n-${unique()}`,
    ...params,
  });
  return `${h.base}/oauth/authorize?${q}`;
}

/** Every URL the main frame went through for one navigation (redirects included), oldest first. */
export function redirectChain(res: Response | null): string[] {
  const urls: string[] = [];
  let r = res?.request() ?? null;
  while (r) {
    urls.unshift(r.url());
    r = r.redirectedFrom();
  }
  return urls;
}

/** Opens the authorize URL; returns the final response and the redirect chain. */
export async function openAuthorize(page: Page, url: string) {
  const res = await page.goto(url);
  return { res, chain: redirectChain(res), status: res?.status() ?? 0 };
}

/** Clicks and waits for the resulting document to load; returns its (final) response. */
export async function clickAndLoad(page: Page, target: Locator): Promise<Response | null> {
  const nav = page.waitForNavigation({ waitUntil: 'load' });
  await target.click();
  return nav;
}

export const isCallback = (page: Page) => new URL(page.url()).pathname === '/__rp/callback';

export function callbackParams(page: Page): URLSearchParams {
  const url = new URL(page.url());
  if (url.pathname !== '/__rp/callback') throw new Error(`expected the RP callback, got ${page.url()}:\n`);
  return url.searchParams;
}

export const heading = (page: Page) => page.locator('h1').first().innerText();

/**
 * Which hosted page the browser shows, by its h1. The h1 is waited for up to 10 s: on a loaded
 * machine (CI runs the API suites beside the browser) a page still loading after a redirect took
 * longer than 2 s, and was reported as "other".
 */
export async function pageKind(
  page: Page,
): Promise<'signin' | 'signup' | 'consent' | 'chooser' | 'error' | 'callback' | 'other'> {
  if (isCallback(page)) return 'callback';
  const h1 =
    (
      await page
        .locator('h1')
        .first()
        .textContent({ timeout: 10_000 })
        .catch(() => '')
    )?.trim() ?? '';
  if (h1 === 'Sign in') return 'signin';
  if (h1 === 'Create your account') return 'signup';
  if (h1 === 'Choose an account') return 'chooser';
  if (/wants to access your account/.test(h1)) return 'consent';
  if (await page.locator('.status-icon-error').count()) return 'error';
  // A navigation that was still under way (a double submit's second request) may have reached the app meanwhile.
  return isCallback(page) ? 'callback' : 'other';
}

/**
 * The page's HTML once it stopped navigating. After a double submit the second request may
 * still be replacing the page when the first navigation resolves; reading then throws.
 */
export async function settledContent(page: Page): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await page.content();
    } catch (err) {
      if (attempt >= 10 || !/navigating/.test(String(err))) throw err;
      await page.waitForLoadState('load');
    }
  }
}

export async function expectPage(page: Page, kind: Awaited<ReturnType<typeof pageKind>>) {
  const actual = await pageKind(page);
  if (actual !== kind) {
    const body = isCallback(page)
      ? page.url()
      : (
          await page
            .locator('body')
            .innerText()
            .catch(() => '')
        ).slice(0, 1500);
    throw new Error(`expected the ${kind} page, got ${actual} at ${page.url()}\n${body}`);
  }
}

export interface SignUpInput {
  /** undefined: leave the email field as it is (e.g. locked by a login_hint). */
  email: string | undefined;
  givenName?: string;
  familyName?: string;
  birthdate?: string;
  phone?: string;
  password?: string;
}

/** Fills the sign-up form (only the fields given) and submits it. */
export async function fillSignUp(page: Page, input: Partial<SignUpInput>) {
  if (input.email !== undefined) await page.getByLabel('Email').fill(input.email);
  if (input.givenName !== undefined) await page.getByLabel('First name').fill(input.givenName);
  if (input.familyName !== undefined) await page.getByLabel('Last name').fill(input.familyName);
  if (input.birthdate !== undefined) await page.getByLabel('Date of birth').fill(input.birthdate);
  if (input.phone !== undefined) await page.getByLabel('Phone number (optional)').fill(input.phone);
  if (input.password !== undefined) await page.getByLabel('Password').fill(input.password);
}

export async function signUp(page: Page, input: SignUpInput) {
  await expectPage(page, 'signup');
  await fillSignUp(page, {
    givenName: 'Grace',
    familyName: 'Hopper',
    birthdate: '1990-05-17',
    password: TEST_PASSWORD,
    ...input,
  });
  return clickAndLoad(page, page.getByRole('button', { name: 'Create account' }));
}

export async function signIn(page: Page, email: string | undefined, password = TEST_PASSWORD) {
  await expectPage(page, 'signin');
  if (email !== undefined) await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  return clickAndLoad(page, page.getByRole('button', { name: 'Sign in', exact: true }));
}

export async function allow(page: Page) {
  await expectPage(page, 'consent');
  return clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
}

export const accountButton = (page: Page, email: string) => page.locator('button[name=account]', { hasText: email });
export const signOutButton = (page: Page, email: string) =>
  page.getByRole('button', { name: `Sign out ${email}`, exact: true });

/** The emails the chooser lists, each with whether it shows the "Signed out" badge. */
export async function chooserAccounts(page: Page): Promise<{ email: string; signedOut: boolean }[]> {
  await expectPage(page, 'chooser');
  const rows = page.locator('button[name=account]');
  const out: { email: string; signedOut: boolean }[] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const row = rows.nth(i);
    out.push({
      email: (await row.locator('.account-email').innerText()).replace(/\s+/g, ''),
      signedOut: (await row.getByText('Signed out', { exact: true }).count()) > 0,
    });
  }
  return out;
}

export async function pickAccount(page: Page, email: string) {
  await expectPage(page, 'chooser');
  return clickAndLoad(page, accountButton(page, email));
}

/** Basic credentials, form-urlencoded first (RFC 6749 §2.3.1). */
export const basicAuth = (tenant: Tenant) =>
  `Basic ${Buffer.from(`${encodeURIComponent(tenant.client.id)}:${encodeURIComponent(tenant.client.secret!)}`).toString('base64')}`;

export interface TokenResponse {
  access_token: string;
  id_token?: string;
  refresh_token?: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

export async function exchangeCode(h: Harness, tenant: Tenant, code: string): Promise<TokenResponse> {
  const res = await fetch(`${h.base}/oauth/token`, {
    method: 'POST',
    headers: { authorization: basicAuth(tenant), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: tenant.client.redirectUris[0],
      platform_guid: tenant.platform.id,
    }),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${JSON.stringify(body)}`);
  return body as TokenResponse;
}

export async function userinfo(h: Harness, tenant: Tenant, accessToken: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${h.base}/oauth/userinfo?platform_guid=${tenant.platform.id}`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`userinfo failed: ${res.status} ${JSON.stringify(body)}`);
  return body as Record<string, unknown>;
}

export async function introspect(h: Harness, tenant: Tenant, token: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${h.base}/oauth/introspect`, {
    method: 'POST',
    headers: { authorization: basicAuth(tenant), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, platform_guid: tenant.platform.id }),
  });
  if (res.status !== 200) throw new Error(`introspect failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The payload of a JWT, unverified (the tests only read claims). */
export function jwtPayload(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));
}

/** At the callback: the code (with the state checked) exchanged for tokens. */
export async function finishAtCallback(h: Harness, tenant: Tenant, page: Page, state?: string) {
  const params = callbackParams(page);
  if (params.get('error')) throw new Error(`callback carries an error: ${page.url()}`);
  if (state !== undefined) expect(params.get('state')).toBe(state);
  expect(params.get('iss')).toBe(h.base);
  const code = params.get('code')!;
  expect(code).toBeTruthy();
  const tokens = await exchangeCode(h, tenant, code);
  return { params, tokens, idToken: tokens.id_token ? jwtPayload(tokens.id_token) : undefined };
}

/** A whole sign-up flow in this page: authorize, sign up, allow; returns the tokens. */
export async function signUpThrough(
  h: Harness,
  tenant: Tenant,
  page: Page,
  input: SignUpInput,
  params: Record<string, string> = {},
) {
  await openAuthorize(page, authorizeUrl(h, tenant, { action: 'register', ...params }));
  if ((await pageKind(page)) === 'chooser')
    await clickAndLoad(page, page.getByRole('button', { name: 'Use another account' }));
  if ((await pageKind(page)) === 'signin') await clickAndLoad(page, page.getByRole('link', { name: 'Create account' }));
  await signUp(page, input);
  await allow(page);
  return finishAtCallback(h, tenant, page);
}

/** A whole sign-in flow in this page for an existing user (through the chooser if shown). */
export async function signInThrough(
  h: Harness,
  tenant: Tenant,
  page: Page,
  email: string,
  params: Record<string, string> = {},
) {
  await openAuthorize(page, authorizeUrl(h, tenant, params));
  if ((await pageKind(page)) === 'chooser')
    await clickAndLoad(page, page.getByRole('button', { name: 'Use another account' }));
  await signIn(page, email);
  if ((await pageKind(page)) === 'consent') await allow(page);
  return finishAtCallback(h, tenant, page);
}
