import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { generateSync } from 'otplib';
import {
  authorizeUrl,
  clickAndLoad,
  createUser,
  isCallback,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './harness';

// The hosted pages driven by their form fields and buttons' names and values, never their texts:
// the same steps work in every language.

/** Which hosted page the browser shows, by its controls (the h1 differs per language). */
export async function pageKindAnyLanguage(
  page: Page,
): Promise<'signin' | 'signup' | 'consent' | 'chooser' | 'second-factor' | 'error' | 'callback' | 'other'> {
  if (isCallback(page)) return 'callback';
  if (await page.locator('button[name=decision][value=allow]').count()) return 'consent';
  if (await page.locator('button[name=account], button[name=another]').count()) return 'chooser';
  if (await page.locator('#given_name').count()) return 'signup';
  if (await page.locator('input#password[autocomplete=current-password]').count()) return 'signin';
  if (await page.locator('input#code').count()) return 'second-factor';
  if (await page.locator('.status-icon-error').count()) return 'error';
  return 'other';
}

export async function expectKind(page: Page, kind: Awaited<ReturnType<typeof pageKindAnyLanguage>>) {
  const actual = await pageKindAnyLanguage(page);
  if (actual !== kind)
    throw new Error(
      `expected the ${kind} page, got ${actual} at ${page.url()}\n${(
        await page
          .locator('body')
          .innerText()
          .catch(() => '')
      ).slice(0, 1200)}`,
    );
}

/** The sign-in form's own submit button (the page has other forms: "use another email", passkeys). */
export const signInSubmit = (page: Page) => page.locator('form:has(#password) button[type=submit]').first();

/** Fills the sign-in form (the email when it is editable) and submits it. */
export async function submitSignIn(page: Page, email: string, password = TEST_PASSWORD) {
  await expectKind(page, 'signin');
  const field = page.locator('#email');
  if (await field.isEditable()) await field.fill(email);
  await page.locator('#password').fill(password);
  return clickAndLoad(page, signInSubmit(page));
}

export const allowConsent = (page: Page) => clickAndLoad(page, page.locator('button[name=decision][value=allow]'));

/** An app's sign-in through to its callback, in whatever language the pages speak. */
export async function signInThroughAnyLanguage(
  h: Harness,
  tenant: Tenant,
  page: Page,
  email: string,
  params: Record<string, string> = {},
) {
  await page.goto(authorizeUrl(h, tenant, params));
  if ((await pageKindAnyLanguage(page)) === 'chooser') await clickAndLoad(page, page.locator('button[name=another]'));
  await submitSignIn(page, email);
  if ((await pageKindAnyLanguage(page)) === 'consent') await allowConsent(page);
  await expectKind(page, 'callback');
}

/** A user with a confirmed authenticator app (TOTP), and a function for its current code. */
export async function createTotpUser(h: Harness, tenant: Tenant, email: string) {
  const user = await createUser(h, tenant, { email });
  const enrolment = (await h.t.services.mfa.totp.beginEnrolment(user, tenant.platform.name))!;
  const code = (offsetSteps = 0) =>
    generateSync({ secret: enrolment.secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });
  if (!(await h.t.services.mfa.totp.confirmEnrolment(user.id, code())))
    throw new Error('TOTP enrolment was not confirmed');
  return { user, code };
}

/** The catalogs' namespaces: a text like "signin:title" or "errors:page.expired" on a page is a key nobody translated. */
const NAMESPACES = fs
  .readdirSync(path.resolve(__dirname, '..', '..', 'locales', 'en'))
  .map((f) => f.replace(/\.json$/, ''));
const RAW_KEY = [/\b[a-z]+:[a-zA-Z]+\.[a-zA-Z.]+\b/, new RegExp(`\\b(${NAMESPACES.join('|')}):[A-Za-z_]+\\b`)];

/** Raw catalog keys in the page's visible text, its title and its labels (empty: none). */
export async function rawKeysOn(page: Page): Promise<string[]> {
  const texts = await page.evaluate(() =>
    [
      document.body.innerText,
      document.title,
      ...Array.from(document.querySelectorAll('[aria-label], [title], [placeholder], img[alt]')).flatMap((el) =>
        ['aria-label', 'title', 'placeholder', 'alt'].map((a) => el.getAttribute(a) ?? ''),
      ),
    ].join('\n'),
  );
  return RAW_KEY.flatMap((re) =>
    texts
      .split('\n')
      .filter((line) => re.test(line))
      .map((line) => line.trim().slice(0, 120)),
  );
}
