// Shared steps of the upstream sign-in suites (e2e/upstream-*.e2e.ts): the downstream is the
// harness's provider on 127.0.0.1; the upstream is another process (test/support/upstreams/).
import fs from 'node:fs';
import path from 'node:path';
import type { Page, Route } from 'playwright-core';
import { clickAndLoad, expectPage, type Harness, type Tenant } from './harness';
import { SCREENSHOTS } from './page-checks';

/** The redirect_uri registered at the upstream: one fixed callback per platform. */
export const upstreamCallbackUrl = (h: Harness, tenant: Tenant) =>
  `${h.base}/platforms/${tenant.platform.id}/upstream/callback`;

export const continueButton = (page: Page, providerName: string) =>
  page.getByRole('button', { name: `Continue with ${providerName}`, exact: true });

/** Clicks "Continue with {name}" and waits for the page it ends on (the upstream's, usually). */
export const continueWith = (page: Page, providerName: string) =>
  clickAndLoad(page, continueButton(page, providerName));

/** The page the browser shows is the downstream's (not the upstream's). */
export const onDownstream = (h: Harness, page: Page) => new URL(page.url()).origin === h.base;

export const failureHeading = (providerName: string | null) =>
  new RegExp(
    `^Couldn[’']t sign in${providerName === null ? '' : ` with ${providerName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`}$`,
  );

/**
 * The failure page of an upstream sign-in: names the provider, and offers the other ways in.
 * null: an answer that matches no sign-in of this browser (unknown state) cannot name one.
 */
export async function expectFailurePage(h: Harness, page: Page, providerName: string | null) {
  const h1 = (
    await page
      .locator('h1')
      .first()
      .innerText()
      .catch(() => '')
  ).trim();
  if (!onDownstream(h, page) || !failureHeading(providerName).test(h1)) {
    const body = (
      await page
        .locator('body')
        .innerText()
        .catch(() => '')
    ).slice(0, 1500);
    throw new Error(`expected the failure page of ${providerName}, got "${h1}" at ${page.url()}\n${body}`);
  }
}

/** The identities linked to this user (user_identities rows). */
export const identitiesOf = (h: Harness, userId: string) =>
  h.t.database.db('user_identities').where({ user_id: userId }).select('*');

/** The identities of this upstream provider on the platform. */
export const identitiesOfProvider = (h: Harness, providerId: string) =>
  h.t.database.db('user_identities').where({ provider_id: providerId }).select('*');

export const userByEmail = (h: Harness, tenant: Tenant, email: string) =>
  h.t.database.db('users').where({ platform_id: tenant.platform.id, email_normalized: email.toLowerCase() }).first();

/**
 * The first navigation matching `from` is replayed outside the browser (with this browser's
 * cookies), redirect by redirect, until a redirect points to a URL matching `to`; `onTarget` may
 * change that URL (or act, e.g. stop a process) before the browser is sent there.
 *
 * Why: Playwright's page.route sees a navigation's first request only, never the hops of its
 * redirects, and the interesting URLs here (the upstream's authorization endpoint, the callback)
 * are always reached by a redirect.
 */
export async function interceptRedirectTo(
  page: Page,
  from: (url: URL) => boolean,
  to: (url: URL) => boolean,
  onTarget: (target: URL) => Promise<URL | void> | URL | void,
) {
  let reached: URL | undefined;
  let done = false;
  const handler = async (route: Route) => {
    if (done || !route.request().isNavigationRequest()) return route.continue();
    done = true;
    let res = await route.fetch({ maxRedirects: 0 });
    for (let hop = 0; hop < 10; hop++) {
      const location = res.headers().location;
      if (!location || res.status() < 300 || res.status() > 399) break;
      const next = new URL(location, res.url());
      if (to(next)) {
        reached = next;
        const target = (await onTarget(new URL(next))) ?? next;
        return route.fulfill({ response: res, headers: { ...res.headers(), location: target.toString() } });
      }
      res = await page.context().request.get(next.toString(), { maxRedirects: 0 });
    }
    throw new Error(
      `no redirect to the expected URL from ${route.request().url()} (ended at ${res.status()} ${res.url()})`,
    );
  };
  await page.route(from, handler);
  return { reached: () => reached };
}

/** One query parameter of a URL replaced. */
export function withParam(url: URL, name: string, value: string): URL {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u;
}

/** The newest failed upstream sign-in audited on this platform (its details: method, provider, reason). */
export const lastUpstreamFailure = async (h: Harness, tenant: Tenant): Promise<Record<string, unknown> | undefined> =>
  (
    await h.t.database
      .db('audit_events')
      .where({ platform_id: tenant.platform.id, kind: 'sign_in.failed' })
      .whereRaw("details->>'method' = 'upstream'")
      .orderBy('id', 'desc')
      .first()
  )?.details;

/** The audit events of one kind on this platform whose details name this provider, newest first. */
export const upstreamAudit = (h: Harness, tenant: Tenant, kind: string, slug: string) =>
  h.t.database
    .db('audit_events')
    .where({ platform_id: tenant.platform.id, kind })
    .whereRaw("details->>'provider' = ?", [slug])
    .orderBy('id', 'desc')
    .select('*');

/** Opens the account page of this platform in this browser, signing in with a password if asked. */
export async function openAccount(h: Harness, tenant: Tenant, page: Page) {
  // Linked accounts are on the account page's Security tab.
  await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}&section=security`);
  await page.getByRole('heading', { name: 'Your account' }).waitFor();
}

/** The "Linked accounts" list of the account page: each item's text. */
export async function linkedAccounts(page: Page): Promise<string[]> {
  const list = page.getByRole('list', { name: 'Linked accounts' });
  if (!(await list.count())) return [];
  return (await list.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
}

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core (WCAG 2.1 A/AA and best practices) finds nothing on the page. Evaluated, not added as a
 * script tag: these suites keep the pages' CSP on (form-action decides where the flows may go).
 */
export async function expectAxeClean(page: Page) {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: object,
          ) => Promise<{ violations: Array<{ id: string; nodes: Array<{ html: string }> }> }>;
        };
      }
    ).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.html).join(' | ')}`);
  });
  expect(violations).toEqual([]);
}

/** A 1280×800 screenshot into docs/screenshots (UPDATE_SCREENSHOTS=1) or a temporary directory; `at` scrolls to an element first. */
export async function shoot(page: Page, name: string, at?: string) {
  await page.evaluate(() => document.fonts.ready);
  if (at)
    await page
      .locator(at)
      .first()
      .evaluate((el) => window.scrollTo(0, Math.max(0, el.getBoundingClientRect().top + window.scrollY - 32)));
  else await page.evaluate(() => window.scrollTo(0, 0));
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file });
  const png = fs.readFileSync(file);
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
}

/** A fresh browser (cookies) at 1280×800, device scale 1 (the screenshots' size). */
export async function freshPage(h: Harness) {
  const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  return { context, page: await context.newPage() };
}

export { expectPage };
