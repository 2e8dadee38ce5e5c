// A device with no browser (a TV app, a CLI) signs a person in with the Device Authorization Grant
// (RFC 8628), driven by openid-client's own initiateDeviceAuthorization and
// pollDeviceAuthorizationGrant against a standard platform's issuer. While openid-client polls,
// the person opens BASE_URL/device in Chromium, types the code from the keyboard (small letters,
// no dash), signs in, reads the consent that names the device's client and warns about codes
// someone else started, and approves: the poll resolves with tokens. A denial ends the poll with
// access_denied.
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { DEVICE_CODE_GRANT } from '../src/domain/client';
import { buildClient, buildStandardPlatform, buildUser } from '../test/factories';
import { useBrowserSuite } from './support/browser-suite';
import { clickAndLoad, expectPage, heading, signIn, type Harness, type Tenant } from './support/harness';
import { expectAxeClean, shoot } from './support/page-checks';

jest.setTimeout(90_000);

let h: Harness;
let tenant: Tenant;
let page: Page;
useBrowserSuite((s) => ({ h, tenant, page } = s), {
  // Polls a second apart, so a test waits on the person, not on the default 5 s interval.
  env: { DEVICE_CODE_INTERVAL_SECONDS: '1' },
  tenant: async (harness) => {
    const platform = await buildStandardPlatform(harness.t.services, 'Acme Streaming');
    const c = await buildClient(harness.t.services, platform.id, {
      name: 'Living Room TV',
      type: 'public',
      redirectUris: [],
      grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
      scopes: 'openid profile email offline_access',
    });
    return { platform, client: c };
  },
  // bypassCSP only so that the test can inject axe-core; the page's own CSP is tested elsewhere.
  openPage: async (harness) => {
    const context = await harness.browser.newContext({
      viewport: { width: 1280, height: 800 },
      deviceScaleFactor: 1,
      bypassCSP: true,
    });
    return { context, page: await context.newPage() };
  },
});

/** openid-client configured from the issuer alone, as the device would be: a public client (no secret). */
async function deviceConfig() {
  return client.discovery(
    new URL(`${h.base}/platforms/${tenant.platform.id}`),
    tenant.client.id,
    undefined,
    client.None(),
    { execute: [client.allowInsecureRequests] },
  );
}

/** The person types the code at the verification URI with the keyboard only, then signs in. */
async function enterCodeAndSignIn(verificationUri: string, userCode: string, email: string) {
  await page.goto(verificationUri);
  // Keyboard first: the code field has the focus when the page loads.
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('user_code');
  await page.keyboard.type(userCode.toLowerCase().replace('-', ''));
  const nav = page.waitForNavigation({ waitUntil: 'load' });
  await page.keyboard.press('Enter');
  await nav;
  await signIn(page, email);
  await expectPage(page, 'consent');
}

it('approves a device: openid-client polls until the person approves, and gets tokens', async () => {
  const user = await buildUser(h.t.services, tenant.platform.id);
  const config = await deviceConfig();
  expect(config.serverMetadata().device_authorization_endpoint).toBe(
    `${h.base}/platforms/${tenant.platform.id}/oauth/device_authorization`,
  );
  const device = await client.initiateDeviceAuthorization(config, { scope: 'openid email offline_access' });
  expect(device.verification_uri).toBe(`${h.base}/device`);
  expect(device.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  expect(device.interval).toBe(1);
  const polling = client.pollDeviceAuthorizationGrant(config, device);
  polling.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile

  await page.goto(device.verification_uri);
  await expectAxeClean(page);
  await shoot(page, 'device-code');
  await enterCodeAndSignIn(device.verification_uri, device.user_code, user.email);

  // The consent names the device's client, shows the code to compare and warns.
  const main = await page.locator('main').innerText();
  expect(main).toContain('Living Room TV wants to access your account');
  expect(main).toContain(device.user_code);
  expect(main).toContain('Approve only if you started signing in to Living Room TV on a device of your own just now.');
  await expectAxeClean(page);
  await shoot(page, 'device-consent');
  await clickAndLoad(page, page.getByRole('button', { name: 'Approve' }));
  expect(await heading(page)).toBe('Device connected');
  await expect(page.locator('main').innerText()).resolves.toContain('Return to your device');
  await expectAxeClean(page);

  const tokens = await polling;
  expect(tokens.token_type).toBe('bearer');
  expect(tokens.refresh_token).toMatch(/^rt_/);
  expect(tokens.claims()).toMatchObject({ sub: user.id, aud: tenant.client.id, email: user.email });
  // The access token is the platform's RFC 9068 token, for this client.
  const info = await client.fetchUserInfo(config, tokens.access_token, user.id);
  expect(info.email).toBe(user.email);
  // A device code is spent once.
  await expect(client.pollDeviceAuthorizationGrant(config, device)).rejects.toMatchObject({ error: 'invalid_grant' });
});

it('denies a device: the poll ends with access_denied', async () => {
  const user = await buildUser(h.t.services, tenant.platform.id);
  const config = await deviceConfig();
  const device = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
  const outcome = client.pollDeviceAuthorizationGrant(config, device).then(
    () => 'tokens',
    (err: { error?: string }) => err.error,
  );
  // verification_uri_complete pre-fills the code: the person compares it with the device and confirms.
  await page.goto(device.verification_uri_complete!);
  expect(await page.inputValue('#user_code')).toBe(device.user_code);
  await clickAndLoad(page, page.getByRole('button', { name: 'Continue' }));
  await signIn(page, user.email);
  await expectPage(page, 'consent');
  await clickAndLoad(page, page.getByRole('button', { name: 'Deny' }));
  expect(await heading(page)).toBe('Device not connected');
  await expectAxeClean(page);
  expect(await outcome).toBe('access_denied');
});
