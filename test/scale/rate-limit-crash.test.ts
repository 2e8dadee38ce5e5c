import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { instanceEnv, startProvider, type ProviderProcess } from '../support/provider-process';

// A provider PROCESS killed (SIGKILL: no shutdown, no last flush) while it counts in memory
// (docs/decisions.md, "Ephemeral counters"). Real Postgres only: the embedded database serves one process.
const embedded = process.env.TEST_DATABASE_KIND === 'embedded';
if (embedded) console.warn('rate-limit-crash: skipped on the embedded database (run with DATABASE_URL for this test)');
const describeOnPostgres = embedded ? describe.skip : describe;

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let setup: TestApp;
let dataDir: string;
const started: ProviderProcess[] = [];

describeOnPostgres('rate-limit counters when an instance crashes', () => {
  const env = () =>
    instanceEnv(process.env.TEST_DATABASE_URL!, dataDir, {
      RATE_LIMIT_SCALE: '1', // discovery: 100 a minute, so the hits below are answered from memory
    });
  const start = async () => {
    const p = await startProvider(env());
    started.push(p);
    return p;
  };
  beforeAll(async () => {
    setup = await buildTestApp();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-crash-'));
  });
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop()));
    await setup?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('keeps what a killed instance flushed; only its hits since the last flush can be lost', async () => {
    const p = await buildPlatform(setup.services);
    const discovery = `/.well-known/openid-configuration?platform_guid=${p.id}`;
    const rows = () => setup.database.db('rate_limit_counters').where('key', 'like', `discovery:${p.id}:%`).select('*');
    const total = async () => (await rows()).reduce((n, r) => n + r.hits, 0);

    const a = await start();
    for (let i = 0; i < 30; i++) expect((await fetch(a.url + discovery)).status).toBe(200);
    // The background flush writes them (every ~200 ms); wait for it, without a deadline of our own.
    while ((await total()) < 30) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await total()).toBe(30);
    for (let i = 0; i < 10; i++) expect((await fetch(a.url + discovery)).status).toBe(200);
    a.child.kill('SIGKILL');

    const b = await start();
    const res = await fetch(b.url + discovery); // B's first hit of the key: counted in the database
    expect(res.status).toBe(200);
    const after = await rows();
    const counted = after.reduce((n, r) => n + r.hits, 0);
    expect(counted).toBeGreaterThanOrEqual(31); // A's 30 flushed hits outlive A, and B's own
    expect(counted).toBeLessThanOrEqual(41); // at most A's last 10, not yet flushed, are gone
    expect(new Set(after.map((r) => r.instance_id)).size).toBe(2); // a row per instance
    if (new Set(after.map((r) => r.window_start)).size === 1) {
      // All in one window: B's answer counts A's rows (no window rolled over while the test ran).
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(100 - counted));
    }
  }, 90_000);
});
