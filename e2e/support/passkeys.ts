import fs from 'node:fs';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { buildClient, buildPlatform } from '../../test/factories';
import { clickAndLoad, createUser, TEST_PASSWORD, type Harness, type Tenant } from './harness';

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface VirtualAuthenticator {
  cdp: CDPSession;
  authenticatorId: string;
}

/** A platform authenticator (resident keys, user verification) attached to this page. */
export async function addVirtualAuthenticator(
  page: Page,
  options: { isUserVerified?: boolean } = {},
): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: options.isUserVerified ?? true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

export async function credentialsOf(a: VirtualAuthenticator) {
  return (await a.cdp.send('WebAuthn.getCredentials', { authenticatorId: a.authenticatorId })).credentials;
}

/** Signs in on the account page's own sign-in form (password) and lands on the account page. */
export async function openAccountPage(h: Harness, tenant: Tenant, page: Page, email: string) {
  await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign in', exact: true }));
  await page.getByRole('heading', { name: 'Your account' }).waitFor();
  // Passkeys are listed on the account page's Security tab.
  await clickAndLoad(page, page.getByRole('link', { name: 'Security', exact: true }));
}

/** Names and adds a passkey from the account page (keyboard: type the name, Enter). */
export async function addPasskey(page: Page, name: string, how: 'click' | 'keyboard' = 'click') {
  const field = page.getByLabel('Passkey name');
  await field.fill(name);
  const nav = page.waitForNavigation({ waitUntil: 'load' });
  if (how === 'keyboard') await field.press('Enter');
  else await page.getByRole('button', { name: 'Add a passkey' }).click();
  await nav;
}

/** axe-core's WCAG 2 A/AA violations on this page, as "rule (count)". */
export async function axeViolations(page: Page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() => (window as any).axe.run(document, { runOnly: ['wcag2a', 'wcag2aa'] }));
  return (result.violations as { id: string; nodes: unknown[] }[]).map((v) => `${v.id} (${v.nodes.length})`);
}

export { SCREENSHOTS } from './page-checks';

/** A user with one passkey on this page's authenticator; the browser then forgets every cookie. */
export async function userWithPasskey(h: Harness, tenant: Tenant, page: Page, context: BrowserContext) {
  const user = await createUser(h, tenant);
  const authenticator = await addVirtualAuthenticator(page);
  await openAccountPage(h, tenant, page, user.email);
  await addPasskey(page, 'Laptop');
  await page.getByText('Passkey “Laptop” added.').waitFor();
  await context.clearCookies();
  return { user, authenticator };
}

/** A tenant whose platform is named "Acme" (for the screenshots), its app on the loopback IP. */
export async function acmeTenant(h: Harness): Promise<Tenant> {
  const platform = await buildPlatform(h.t.services, 'Acme');
  const rp = h.base.replace('://localhost:', '://127.0.0.1:');
  return {
    platform,
    client: await buildClient(h.t.services, platform.id, { redirectUris: [`${rp}/__rp/callback`], name: 'Acme Notes' }),
  };
}

/** Chromium's virtual authenticator answers a conditional (autofill) request at once: off for the button's tests. */
export const withoutAutofill = (page: Page) =>
  page.addInitScript(() => {
    (window as any).PublicKeyCredential.isConditionalMediationAvailable = async () => false;
  });
