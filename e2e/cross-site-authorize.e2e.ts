// An authorization request POSTed from another site arrives without the
// SameSite=Lax session cookie. It must not start a new session that replaces the browser's (every
// signed-in account lost): the provider answers 303 to the GET, which does carry the cookie.
// Sites: the provider is http://127.0.0.1:P, the other page http://localhost:Q. Ports do not make
// another site (SameSite compares scheme and registrable domain), host names do.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page, Request } from 'playwright-core';
import {
  authorizeUrl,
  chooserAccounts,
  createUser,
  finishAtCallback,
  pickAccount,
  signInThrough,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';

let h: Harness;
let tenant: Tenant;
let page: Page;
let other: http.Server;
let otherBase: string;
let formHtml = '';

useBrowserSuite((s) => ({ h, tenant, page } = s));
beforeAll(async () => {
  other = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(formHtml));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherBase = `http://localhost:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  other?.closeAllConnections();
  await new Promise<void>((resolve) => (other ? other.close(() => resolve()) : resolve()));
});

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** A page on the other site whose form posts the authorization request as soon as it loads. */
function autoSubmittingForm(params: URLSearchParams): string {
  const inputs = [...params]
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  return `<!doctype html><title>Another site</title><form method="post" action="${h.base}/oauth/authorize">${inputs}</form><script>document.forms[0].submit()</script>`;
}

it('with two accounts signed in, an authorization request POSTed from another site still shows the chooser with both', async () => {
  const ada = await createUser(h, tenant);
  const bob = await createUser(h, tenant, { givenName: 'Bob', familyName: 'Builder' });
  await signInThrough(h, tenant, page, ada.email);
  await signInThrough(h, tenant, page, bob.email); // via "Use another account"

  formHtml = autoSubmittingForm(new URL(authorizeUrl(h, tenant, { state: 'cross-site' })).searchParams);
  let posted: Request | undefined;
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().startsWith(`${h.base}/oauth/authorize`)) posted = r;
  });
  await page.goto(`${otherBase}/`);
  await page.waitForURL(/\/interaction\//);
  await page.waitForLoadState('load');

  // The scenario is real: the POST left the other site without the session cookie.
  expect(posted).toBeDefined();
  const headers = await posted!.allHeaders();
  expect(headers['sec-fetch-site']).toBe('cross-site');
  expect(headers.cookie ?? '').not.toMatch(/latchkey\.sid=/);

  const listed = await chooserAccounts(page);
  expect(listed.map((a) => a.email).sort()).toEqual([ada.email, bob.email].sort());
  expect(listed.every((a) => !a.signedOut)).toBe(true);

  // And the request itself goes through: Ada continues without a password.
  await pickAccount(page, ada.email);
  const { idToken } = await finishAtCallback(h, tenant, page, 'cross-site');
  expect(idToken!.sub).toBe(ada.id);
});
