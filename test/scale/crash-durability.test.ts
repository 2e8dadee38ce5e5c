import knex from 'knex';
import { migrateLatest } from '../../src/db';
import { accountSignIn, authorizeQuery, exchange, signInThrough } from '../support/account-flows';
import { browser, type Browser } from '../support/browser';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';

/**
 * Durable commits per sign-in (docs/decisions.md): a browser session's writes and a sign-in's
 * success event commit asynchronously; a sign-out's session write, and whatever the flow issues,
 * durably. On a Postgres of the test's own whose WAL writer is stopped, an asynchronous commit
 * stays in shared memory, so a crash then shows which writes a real crash could lose: only the
 * asynchronous ones that no durable commit followed.
 */

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let pg: PrivatePostgres;
let t: TestApp;
let db: ReturnType<typeof knex>;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  db = knex({ client: 'pg', connection: pg.url, pool: { min: 0, max: 2 } });
  await migrateLatest(db);
  t = await buildTestApp({ DATABASE_URL: pg.url });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await db?.destroy();
  await pg?.stop();
}, 30_000);

/** The session id behind a browser's cookie (express-session's `s:<id>.<signature>`). */
function sessionId(b: Browser): string {
  const cookie = b.agent.jar.getCookie('latchkey.sid', {
    domain: '127.0.0.1',
    path: '/',
    secure: false,
    script: false,
  });
  const id = /^s:([^.]+)\./.exec(decodeURIComponent(cookie?.value ?? ''))?.[1];
  if (!id) throw new Error('the browser holds no session cookie');
  return id;
}

async function untilReady() {
  for (let i = 0; i < 100; i++) {
    const res = await browser(t.app).get('/readyz');
    if (res.res.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('not ready after the crash');
}

it('a crash forgets an unflushed session write, never a sign-out, and never a sign-in event a code followed', async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);

  // Signed in through an app: the sign-in's event and session are asynchronous, the code durable after them.
  const signedIn = browser(t.app);
  const tokens = await exchange(t.app, p, c, await signInThrough(signedIn, p, c, u.email));
  expect(tokens.access_token).toBeTruthy();
  const signOut = browser(t.app);
  await accountSignIn(signOut, p, u.email);

  await pg.pauseWalWriter();
  // A sign-out (durable), then an authorization started in another browser (an asynchronous session write).
  await signOut.get(`/account?platform_guid=${p.id}`);
  await signOut.submit(`/account/signout?platform_guid=${p.id}`, { account: u.id });
  expect(signOut.pageTitle()).toBe('You are signed out');
  const pending = browser(t.app);
  await pending.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
  expect(pending.pageTitle()).toBe('Sign in');
  const pendingSession = sessionId(pending);
  expect(await db('session').where({ sid: pendingSession }).first()).toBeDefined();

  await pg.crash();
  await untilReady();

  // Lost: the pending authorization's session, committed asynchronously and flushed by nothing.
  expect(await db('session').where({ sid: pendingSession }).first()).toBeUndefined();
  // Kept: the sign-out.
  await signOut.get(`/account?platform_guid=${p.id}`);
  expect(signOut.pageTitle()).toBe('Sign in');
  // Kept: the sign-in event the code followed, and the signed-in browser.
  const events = await db('audit_events').where({ kind: 'sign_in.succeeded', subject: u.id });
  expect(events.length).toBeGreaterThanOrEqual(1);
  await signedIn.get(`/account?platform_guid=${p.id}`);
  expect(signedIn.pageTitle()).not.toBe('Sign in');
}, 60_000);
