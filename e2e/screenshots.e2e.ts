// Screenshots of the hosted pages at 1280x800, taken on the way through a real flow (so they
// show what users see). Every run takes and checks them; they are written to docs/screenshots/
// only with UPDATE_SCREENSHOTS=1 (avatars differ per run, so a plain `npm test` must not leave
// changed PNGs in the tree), otherwise to a temporary directory.
//   UPDATE_SCREENSHOTS=1 npx jest --selectProjects e2e --testPathPatterns screenshots
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import {
  allow,
  authorizeUrl,
  clickAndLoad,
  createUser,
  expectPage,
  openAuthorize,
  signInThrough,
  signOutButton,
  signUp,
  startHarness,
  type Harness,
  type Tenant,
} from './support/harness';
import { buildClient, buildPlatform } from '../test/factories';

const OUT =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.resolve(__dirname, '..', 'docs', 'screenshots')
    : fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-screenshots-'));

let h: Harness;
let tenant: Tenant;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  fs.mkdirSync(OUT, { recursive: true });
  h = await startHarness({ hostName: 'localhost' }); // a host name, as in production: the sign-in page offers passkeys
  // Named "Acme" from the start: platforms are cached, so renaming the row afterwards would not show.
  const platform = await buildPlatform(h.t.services, 'Acme');
  tenant = {
    platform,
    client: await buildClient(h.t.services, platform.id, {
      redirectUris: [`${h.base.replace('://localhost:', '://127.0.0.1:')}/__rp/callback`],
      name: 'Acme Notes',
    }),
  };
});
afterAll(() => h?.close());
beforeEach(async () => ({ context, page } = await newPage1280()));
afterEach(() => context?.close());

async function newPage1280() {
  const ctx = await h.browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  return { context: ctx, page: await ctx.newPage() };
}

async function shoot(name: string) {
  await page.evaluate(() => document.fonts.ready);
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  const png = fs.readFileSync(file);
  expect(png.subarray(1, 4).toString()).toBe('PNG');
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
}

it('sign-in, sign-up and consent pages', async () => {
  await openAuthorize(page, authorizeUrl(h, tenant, { scope: 'openid profile email phone offline_access' }));
  await expectPage(page, 'signin');
  await shoot('signin');

  await clickAndLoad(page, page.getByRole('link', { name: 'Create account' }));
  await expectPage(page, 'signup');
  await shoot('signup');

  await signUp(page, {
    email: 'grace.hopper@example.com',
    givenName: 'Grace',
    familyName: 'Hopper',
    birthdate: '1990-05-17',
    phone: '+1 415 555 0123',
  });
  await expectPage(page, 'consent');
  await shoot('consent');
  await allow(page);
});

it('account chooser', async () => {
  const ada = await createUser(h, tenant, {
    email: 'ada.lovelace@example.com',
    givenName: 'Ada',
    familyName: 'Lovelace',
  });
  const alan = await createUser(h, tenant, {
    email: 'alan.turing@example.com',
    givenName: 'Alan',
    familyName: 'Turing',
  });
  await signInThrough(h, tenant, page, alan.email);
  await signInThrough(h, tenant, page, ada.email);
  await openAuthorize(page, authorizeUrl(h, tenant));
  await clickAndLoad(page, signOutButton(page, alan.email)); // one signed in, one signed out
  await expectPage(page, 'chooser');
  await shoot('chooser');
});
