import request from 'supertest';
import { migrateLatest } from '../../src/db';
import { createNotifications } from '../../src/db/notifications';
import { basic } from '../support/account-flows';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform } from '../factories';
import knex from 'knex';

/**
 * A hung database (docs/decisions.md, "Every database wait is bounded"): every process of a
 * Postgres of the test's own is stopped with SIGSTOP, so connections stay open, the kernel still
 * ACKs, and nothing answers. Requests holding a connection, waiting for one, or opening one must
 * answer 503 with Retry-After while the server is still frozen, and the app recovers by itself.
 */

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let pg: PrivatePostgres;
let t: TestApp;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const migrator = knex({ client: 'pg', connection: pg.url, pool: { min: 0, max: 1 } });
  await migrateLatest(migrator);
  await migrator.destroy();
  // Small bounds, so the frozen phase is short; the pool smaller than the requests sent.
  t = await buildTestApp({
    DATABASE_URL: pg.url,
    DB_STATEMENT_TIMEOUT_MS: '1000',
    DB_ACQUIRE_TIMEOUT_MS: '1500',
    DB_CONNECT_TIMEOUT_MS: '1000',
  });
}, 60_000);

afterAll(async () => {
  await pg?.thaw();
  await t?.close();
  await pg?.stop();
}, 30_000);

it('answers 503 temporarily_unavailable while the server is frozen, then recovers by itself', async () => {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id, { type: 'confidential' });
  // A token request reads the platform and authenticates the client: the database on every one.
  const tokenRequest = () =>
    request(t.app)
      .post('/oauth/token')
      .set('Authorization', basic(c))
      .type('form')
      .send({ platform_guid: p.id, grant_type: 'refresh_token', refresh_token: 'rt_unknown' });
  expectOAuthError(await tokenRequest(), 400, 'invalid_grant');

  await pg.freeze();
  try {
    // More requests than the pool has connections: some hold one, the rest wait for one. The thaw
    // comes only after every answer: a wait without a client-side bound hangs here until jest's timeout.
    const answers = await Promise.all(Array.from({ length: 8 }, () => tokenRequest()));
    for (const res of answers) {
      expectOAuthError(res, 503, 'temporarily_unavailable');
      expect(res.headers['retry-after']).toBe('5');
    }
    const ready = await request(t.app).get('/readyz');
    expect(ready.status).toBe(503);
  } finally {
    await pg.thaw();
  }

  // No restart: the pool's connections come back once the server answers again.
  let res = await tokenRequest();
  for (let i = 0; i < 50 && res.status === 503; i++) {
    await new Promise((r) => setTimeout(r, 200));
    res = await tokenRequest();
  }
  expectOAuthError(res, 400, 'invalid_grant');
  await request(t.app).get('/readyz').expect(200);
}, 60_000);

it('the LISTEN connection finds a hung server by its heartbeat, reconnects, and hears notifications again', async () => {
  const events: boolean[] = [];
  const heard: string[] = [];
  const notifications = createNotifications(
    { connectionString: pg.url, connectionTimeoutMillis: 1000 },
    { everyMs: 200, timeoutMs: 500 },
  );
  const waitFor = async (check: () => boolean, what: string) => {
    for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 100));
    if (!check()) throw new Error(`never: ${what} (listening events: ${JSON.stringify(events)})`);
  };
  try {
    notifications.subscribe('frozen_test', { onMessage: (m) => heard.push(m), onListening: (l) => events.push(l) });
    await waitFor(() => events.at(-1) === true, 'listening');
    await pg.freeze();
    try {
      await waitFor(() => events.at(-1) === false, 'the lost connection noticed while frozen');
    } finally {
      await pg.thaw();
    }
    await waitFor(() => events.at(-1) === true, 'listening again after the thaw');
    await t.database.db.raw("select pg_notify('frozen_test', 'after the thaw')");
    await waitFor(() => heard.includes('after the thaw'), 'a notification after the thaw');
  } finally {
    await notifications.close();
  }
}, 60_000);
