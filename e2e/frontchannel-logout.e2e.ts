// Front-Channel Logout 1.0 in a real browser: a relying party on its own port registers a
// frontchannel_logout_uri; RP-initiated logout and the account page's "Sign out" load it in a hidden
// iframe (with iss and sid), and the browser then goes on to the post_logout_redirect_uri.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import {
  clickAndLoad,
  createUser,
  newPage,
  signInThrough,
  startHarness,
  type Harness,
  type Tenant,
} from './support/harness';
import { browserContexts, expectAxeClean, shoot } from './support/page-checks';
import * as clientRepo from '../src/repositories/client.repository';
import { buildClient, buildPlatform } from '../test/factories';

/** The test relying party: records each GET to /fc; while `held`, answers it only on release(). */
function startRp() {
  const hits: URL[] = [];
  const waiters: Array<() => void> = [];
  let held: http.ServerResponse[] | null = null;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://rp.test');
    if (url.pathname === '/fc' && req.method === 'GET') {
      hits.push(url);
      waiters.splice(0).forEach((w) => w());
      res.setHeader('cache-control', 'no-store');
      if (held) return void held.push(res);
      return void res.end('logged out');
    }
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>RP</title><h1>Signed out of the app</h1>');
  });
  return {
    hits,
    server,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    /** Resolves once there are n hits. */
    hit: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (hits.length >= n ? resolve() : waiters.push(check));
        check();
      }),
    hold: () => {
      held = [];
    },
    release: () => {
      const pending = held ?? [];
      held = null;
      pending.forEach((r) => r.end('logged out'));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let h: Harness;
let rp: ReturnType<typeof startRp>;
let rpBase: string;
let tenant: Tenant;
const pages = browserContexts(() => h);

beforeAll(async () => {
  h = await startHarness();
  rp = startRp();
  rpBase = await rp.listen();
  const platform = await buildPlatform(h.t.services, 'Acme Travel'); // a name for the screenshot
  const client = await buildClient(h.t.services, platform.id, {
    redirectUris: [`${h.base}/__rp/callback`],
    name: 'Acme Notes',
    postLogoutRedirectUris: [`${rpBase}/signed-out`],
  });
  tenant = { platform, client };
  await clientRepo.update(h.t.services.deps.db, tenant.platform.id, tenant.client.id, {
    frontchannelLogoutUri: `${rpBase}/fc?app=notes`,
  });
});
afterAll(async () => {
  await pages.closeAll();
  await rp?.close();
  await h?.close();
});

const logoutUrl = (params: Record<string, string>) =>
  `${h.base}/oauth/logout?${new URLSearchParams({ platform_guid: tenant.platform.id, ...params })}`;

async function signedIn(page: Page) {
  const user = await createUser(h, tenant);
  const { tokens, idToken } = await signInThrough(h, tenant, page, user.email);
  return { user, idTokenJwt: tokens.id_token!, sid: idToken!.sid as string };
}

it('RP-initiated logout: the RP gets its front-channel GET with iss and sid, then the browser is at the post_logout_redirect_uri with state', async () => {
  const { context, page } = await newPage(h); // the pages' own CSP applies (frame-src)
  try {
    const { idTokenJwt, sid } = await signedIn(page);
    expect(sid).toBeTruthy();
    const before = rp.hits.length;
    const arrived = page.waitForURL(`${rpBase}/signed-out?state=bye-1`);
    await page.goto(
      logoutUrl({ id_token_hint: idTokenJwt, post_logout_redirect_uri: `${rpBase}/signed-out`, state: 'bye-1' }),
      { waitUntil: 'commit' },
    );
    await arrived;
    await expect(page.locator('h1').innerText()).resolves.toBe('Signed out of the app');
    const hit = rp.hits[before];
    expect(hit).toBeDefined();
    expect(Object.fromEntries(hit.searchParams)).toEqual({ app: 'notes', iss: h.base, sid });
  } finally {
    await context.close();
  }
});

it('the intermediate page waits for the frames (axe-clean, screenshot) and has a Continue link', async () => {
  const page = await pages.freshPage();
  const { idTokenJwt } = await signedIn(page);
  const before = rp.hits.length;
  rp.hold(); // the RP answers its front-channel request only when released
  try {
    await page.goto(
      logoutUrl({ id_token_hint: idTokenJwt, post_logout_redirect_uri: `${rpBase}/signed-out`, state: 'bye-2' }),
      { waitUntil: 'domcontentloaded' },
    );
    await rp.hit(before + 1);
    await expect(page.locator('h1').innerText()).resolves.toBe('Signing you out of 1 app…');
    await expect(page.getByRole('link', { name: 'Continue' }).getAttribute('href')).resolves.toBe(
      `${rpBase}/signed-out?state=bye-2`,
    );
    await expect(page.locator('iframe').getAttribute('title')).resolves.toBeTruthy();
    expect(new URL(page.url()).pathname).toBe('/oauth/logout'); // still here: the refresh waits for the frame's load
    await expectAxeClean(page);
    await shoot(page, 'frontchannel-logout');
  } finally {
    const arrived = page.waitForURL(`${rpBase}/signed-out?state=bye-2`);
    rp.release();
    await arrived;
  }
});

it('the account page\'s "Sign out": the signed-out page sends the RP its front-channel GET', async () => {
  const { context, page } = await newPage(h);
  try {
    const { sid } = await signedIn(page);
    const before = rp.hits.length;
    await page.goto(`${h.base}/account?platform_guid=${tenant.platform.id}`);
    await clickAndLoad(page, page.getByRole('button', { name: 'Sign out', exact: true }));
    await expect(page.locator('h1').first().innerText()).resolves.toBe('You are signed out');
    await rp.hit(before + 1);
    expect(Object.fromEntries(rp.hits[before].searchParams)).toEqual({ app: 'notes', iss: h.base, sid });
  } finally {
    await context.close();
  }
});
