// A real browser follows a redirect as soon as it has the response headers. The provider must
// therefore have persisted the browser session before it sends a redirect; otherwise the next
// request reads the session as it was before (lost interaction, lost sign-in, lost choice).
// Here the session store answers writes slowly, as a busy database would, to make that
// ordering observable on every run instead of now and then.
import type { Page } from 'playwright-core';
import {
  accountButton,
  authorizeUrl,
  clickAndLoad,
  createUser,
  expectPage,
  finishAtCallback,
  openAuthorize,
  signIn,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';

const WRITE_DELAY_MS = 400;

let h: Harness;
let tenant: Tenant;
let page: Page;

useBrowserSuite((s) => ({ h, tenant, page } = s));
beforeAll(async () => {
  const pool = h.t.database.sessionPool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  const query = pool.query.bind(pool);
  pool.query = async (...args: unknown[]) => {
    const sql = typeof args[0] === 'string' ? args[0] : '';
    if (/^\s*(insert|update)/i.test(sql)) await new Promise((r) => setTimeout(r, WRITE_DELAY_MS));
    return query(...args);
  };
});

it('the first page of an authorization is not "expired" when the session store is slow', async () => {
  await openAuthorize(page, authorizeUrl(h, tenant));
  await expectPage(page, 'signin');
});

it('a sign-in and a choice in the chooser survive a slow session store', async () => {
  const user = await createUser(h, tenant);
  await openAuthorize(page, authorizeUrl(h, tenant, { scope: 'openid' }));
  await signIn(page, user.email);
  await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
  await finishAtCallback(h, tenant, page);

  await openAuthorize(page, authorizeUrl(h, tenant, { scope: 'openid', state: 'again' }));
  await expectPage(page, 'chooser');
  await clickAndLoad(page, accountButton(page, user.email));
  await finishAtCallback(h, tenant, page, 'again');
});
