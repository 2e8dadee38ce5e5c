import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Express } from 'express';
import pg from 'pg';
import { buildTestApp, TEST_ENV } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { startProvider, type ProviderProcess } from '../support/provider-process';
import { browser } from '../support/browser';
import { authorizeQuery, exchange, signInThrough, userinfo } from '../support/account-flows';

// `pg_dump` or psql on the embedded database's socket changed the one PGlite session
// that the provider's own connections shared — afterwards every page answered 500 ("relation
// platforms does not exist") while /readyz still said ready. A real provider process serves its
// own embedded database here, whatever database the rest of the run uses.
type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let dataDir: string;
let provider: ProviderProcess;
let setup: TestApp; // fixtures through the real services, over the provider's socket
const outsiders: pg.Client[] = [];

/** A client of the socket that is not Latchkey (no application_name 'latchkey'). */
async function outsideClient(): Promise<pg.Client> {
  const c = new pg.Client({ host: dataDir, user: 'postgres', database: 'postgres', application_name: 'outsider' });
  c.on('error', () => {});
  await c.connect();
  outsiders.push(c);
  return c;
}

const psql = (sql: string) =>
  promisify(execFile)('psql', [
    `host=${dataDir} user=postgres dbname=postgres`,
    '-X',
    '-v',
    'ON_ERROR_STOP=1',
    '-Atc',
    sql,
  ]);

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-isolation-'));
  provider = await startProvider({ ...TEST_ENV, LOG_LEVEL: 'warn', DEMO_SEED: 'false', DATA_DIR: dataDir });
  setup = await buildTestApp({
    DATABASE_URL: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(dataDir)}`,
  });
}, 90_000);
afterAll(async () => {
  await Promise.all(outsiders.map((c) => c.end().catch(() => {})));
  await setup?.close();
  await provider?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

/** Discovery, authorize, the account sign-in page and /readyz: what answered 500 before. */
async function providerStatuses(p: { id: string }, c: { id: string; redirectUris: string[]; secret: string | null }) {
  const get = async (route: string) => (await fetch(provider.url + route, { redirect: 'manual' })).status;
  return {
    discovery: await get(`/.well-known/openid-configuration?platform_guid=${p.id}`),
    authorize: await get(`/oauth/authorize?${authorizeQuery(p, c)}`),
    account: await get(`/account/signin?platform_guid=${p.id}`),
    readyz: await get('/readyz'),
  };
}
const healthy = { discovery: 200, authorize: 303, account: 200, readyz: 200 };

describe('the embedded database socket keeps each client’s session to itself', () => {
  it('psql setting an empty search_path changes nothing for the provider', async () => {
    const p = await buildPlatform(setup.services);
    const c = await buildClient(setup.services, p.id);
    await psql("SET search_path = ''");
    await psql("SELECT pg_catalog.set_config('search_path', '', false)");
    expect(await providerStatuses(p, c)).toEqual(healthy);
  });

  it('a connected client whose settings would break every query keeps them, while the provider runs a whole code flow', async () => {
    const p = await buildPlatform(setup.services);
    const c = await buildClient(setup.services, p.id);
    const u = await buildUser(setup.services, p.id);
    const outsider = await outsideClient();
    await outsider.query(
      "SET search_path = ''; SET default_transaction_read_only = on; SET DateStyle = 'SQL, DMY'; SET bytea_output = 'escape'; SET TIME ZONE 'Pacific/Chatham'",
    );
    const settings = async () =>
      (
        await outsider.query(
          "select current_setting('search_path') as s, current_setting('default_transaction_read_only') as r, current_setting('DateStyle') as d, current_setting('TimeZone') as z",
        )
      ).rows[0];
    const own = { s: '""', r: 'on', d: 'SQL, DMY', z: 'Pacific/Chatham' };

    // The outsider keeps querying while the flow runs, so the session passes back and forth.
    let flowDone = false;
    const seen: unknown[] = [];
    const watching = (async () => {
      while (!flowDone) seen.push(await settings());
    })();
    const app = provider.url as unknown as Express;
    const flow = (async () => {
      try {
        const callback = await signInThrough(browser(app), p, c, u.email);
        const tokens = await exchange(app, p, c, callback);
        return await userinfo(app, p, tokens.access_token);
      } finally {
        flowDone = true;
      }
    })();
    const [info] = await Promise.all([flow, watching]);

    expect([info.status, info.body.email]).toEqual([200, u.email]);
    expect(await providerStatuses(p, c)).toEqual(healthy);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => JSON.stringify(s) === JSON.stringify(own))).toBe(true);
    expect(await settings()).toEqual(own);
    // The outsider's read-only default is its own: writes through the provider went through.
    await expect(outsider.query('create table should_fail (id int)')).rejects.toThrow(/read-only transaction/);
  }, 30_000);

  // pg_dump here (PostgreSQL 15) refuses PGlite's server version 18 ("server version mismatch"),
  // so a pg client sends what pg_dump sends: its settings, then a read-only snapshot it reads in.
  it('a pg_dump-like client — its preamble of settings and a repeatable-read snapshot — runs alongside the provider', async () => {
    const p = await buildPlatform(setup.services);
    const c = await buildClient(setup.services, p.id);
    const dump = await outsideClient();
    for (const sql of [
      "SELECT pg_catalog.set_config('search_path', '', false)",
      'SET DATESTYLE = ISO',
      'SET INTERVALSTYLE = POSTGRES',
      'SET extra_float_digits TO 3',
      'SET synchronize_seqscans TO off',
      'SET statement_timeout = 0',
      'SET lock_timeout = 0',
      'SET idle_in_transaction_session_timeout = 0',
      'SET row_security = off',
      'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY',
    ])
      await dump.query(sql);
    const reading = (async () => {
      let rows = 0;
      for (let i = 0; i < 20; i++) {
        const tables = await dump.query(
          "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'",
        );
        rows += tables.rowCount ?? 0;
        await dump.query('SELECT id, name FROM public.platforms');
      }
      await dump.query('COMMIT');
      return rows;
    })();
    const requests = Promise.all(Array.from({ length: 10 }, () => providerStatuses(p, c)));
    const [tables, statuses] = await Promise.all([reading, requests]);
    expect(tables).toBeGreaterThan(0);
    expect(statuses).toEqual(Array(10).fill(healthy));
    expect((await dump.query('SHOW search_path')).rows[0].search_path).toBe('');
    await expect(dump.query('SELECT 1 FROM platforms')).rejects.toThrow(/relation "platforms" does not exist/);
  }, 30_000);

  it('an outside client idle inside a transaction is cut off after 5 s; the provider waits, then answers', async () => {
    const p = await buildPlatform(setup.services);
    const c = await buildClient(setup.services, p.id);
    const idle = new pg.Client({ host: dataDir, user: 'postgres', database: 'postgres' });
    const cutOff = new Promise<Error & { code?: string }>((resolve) => idle.on('error', resolve));
    await idle.connect();
    await idle.query('BEGIN');
    await idle.query('SELECT 1 FROM public.platforms');
    const started = Date.now();
    expect(await providerStatuses(p, c)).toEqual(healthy);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await cutOff).code).toBe('25P03');
  }, 30_000);
});
