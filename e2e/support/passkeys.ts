import fs from 'node:fs';
import type { CDPSession, Page } from 'playwright-core';
import { clickAndLoad, TEST_PASSWORD, type Harness, type Tenant } from './harness';

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface VirtualAuthenticator {
  cdp: CDPSession;
  authenticatorId: string;
}

/** A platform authenticator (resident keys, user verification) attached to this page. */
export async function addVirtualAuthenticator(page: Page, options: { isUserVerified?: boolean } = {}): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: options.isUserVerified ?? true, automaticPresenceSimulation: true },
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
