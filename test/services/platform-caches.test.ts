import { buildTestApp } from '../helpers';
import { buildStandardPlatform } from '../factories';
import { newId } from '../../src/crypto/random';
import { eventually } from '../support/eventually';

// Per-platform caches live until changed (docs/decisions.md, "Caches sized for the tenants"):
// another instance drops its copy when the database NOTIFYs the change, and starts over when its
// LISTEN connection was lost. The embedded database has no NOTIFY: its caches keep short lifetimes.
type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
const viaNotify = process.env.TEST_DATABASE_KIND === 'embedded' ? describe.skip : describe;

viaNotify('per-platform caches across instances', () => {
  let t: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
    other = await buildTestApp();
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  // First: the LISTEN connections' last statement is still their LISTEN (their heartbeat runs every 10 s).
  it('a lost LISTEN connection: the instance reconnects and answers what changed meanwhile', async () => {
    const p = await buildStandardPlatform(t.services);
    await other.services.platforms.findPlatform(p.id); // cached
    await t.database.db.raw(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
          AND (query LIKE 'LISTEN%' OR query = 'SELECT 1')`, // a LISTEN connection's last query, or its heartbeat
    );
    await t.database.db('platforms').where({ id: p.id }).update({ name: 'Renamed while deaf' });
    const seen = await eventually(
      () => other.services.platforms.findPlatform(p.id),
      (v) => v?.name === 'Renamed while deaf',
    );
    expect(seen?.name).toBe('Renamed while deaf');
  });
  it("a platform's change reaches the instance that cached it", async () => {
    const p = await buildStandardPlatform(t.services);
    expect((await other.services.platforms.findPlatform(p.id))?.rateLimitOverrides).toEqual({}); // cached there
    await t.services.platforms.setRateLimit(p.id, 'token', 500);
    const seen = await eventually(
      () => other.services.platforms.findPlatform(p.id),
      (v) => v?.rateLimitOverrides.token === 500,
    );
    expect(seen?.rateLimitOverrides).toEqual({ token: 500 });
  });

  it('an id cached as unknown is found once the platform is created elsewhere', async () => {
    const id = newId();
    expect(await other.services.platforms.findPlatform(id)).toBeUndefined(); // cached as unknown
    await t.database.db('platforms').insert({ id, name: 'Arrived later', signing_profile: 'seed' });
    const seen = await eventually(
      () => other.services.platforms.findPlatform(id),
      (v) => v !== undefined,
    );
    expect(seen).toMatchObject({ id, name: 'Arrived later' });
  });

  it("a rotation's new key is published by the instance that cached the old set", async () => {
    const p = await buildStandardPlatform(t.services);
    const before = (await other.services.signingKeys.publishedKeys(p.id)).map((k) => k.kid);
    const rotated = await t.database.db.transaction((trx) =>
      t.services.signingKeys.rotateAsymmetric(trx, p.id, 'ES256'),
    );
    const after = await eventually(
      async () => (await other.services.signingKeys.publishedKeys(p.id)).map((k) => k.kid),
      (kids) => kids.includes(rotated.kid),
    );
    expect(after).toEqual(expect.arrayContaining([...before, rotated.kid]));
  });
});
