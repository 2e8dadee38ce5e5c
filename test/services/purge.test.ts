import { randomUUID, randomBytes } from 'node:crypto';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { startPurgeJob } from '../../src/jobs/purge.job';

// The purge runs with a clock in January 2001 and every row of this test lives then, so it can
// only ever delete this test's rows, whatever other suites keep in the shared database.
const NOW = new Date('2001-01-15T00:00:00Z');
const at = (iso: string) => new Date(`2001-${iso}Z`);
const EXPIRED = at('01-14T00:00:00'); // before NOW
const LIVE = at('02-01T00:00:00'); // after NOW
const BULK = 1500; // enough rows for concurrent purges to contend on them

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let a: TestApp;
let b: TestApp; // a second instance on the same database
beforeAll(async () => {
  a = await buildTestApp({}, () => NOW);
  b = await buildTestApp({}, () => NOW);
});
afterAll(async () => {
  await a.close();
  await b.close();
});

const hex = () => randomBytes(16).toString('hex');

async function seed() {
  const db = a.database.db;
  const p = await buildPlatform(a.services);
  const c = await buildClient(a.services, p.id);
  const u = await buildUser(a.services, p.id, { birthdate: '1970-01-01' }); // of age in 2001 too
  const owner = { platform_id: p.id, client_id: c.id, user_id: u.id };
  const code = (expires: Date) => ({
    id: randomUUID(),
    code_hash: hex(),
    ...owner,
    redirect_uri: c.redirectUris[0],
    scope: 'openid',
    auth_time: at('01-01T00:00:00'),
    expires_at: expires,
  });
  const family = (created: Date) => ({
    id: randomUUID(),
    ...owner,
    scope: 'openid offline_access',
    auth_time: at('01-01T00:00:00'),
    created_at: created,
  });
  const access = (expires: Date, familyId: string | null = null) => ({
    jti_hash: hex(),
    ...owner,
    scope: 'openid',
    family_id: familyId,
    expires_at: expires,
  });
  const refresh = (familyId: string, expires: Date) => ({
    id: randomUUID(),
    family_id: familyId,
    token_hash: hex(),
    expires_at: expires,
  });

  const ids = {
    user: u.id,
    codes: { gone: code(at('01-10T00:00:00')), keptForReplay: code(at('01-14T12:00:00')), live: code(LIVE) },
    // over: every token expired → the family goes; live: a live token; young: tokenless but created within a day
    families: {
      over: family(at('01-01T00:00:00')),
      live: family(at('01-01T00:00:00')),
      young: family(at('01-14T20:00:00')),
    },
  };
  await db('authorization_codes').insert(Object.values(ids.codes));
  await db('refresh_token_families').insert(Object.values(ids.families));
  await db('refresh_tokens').insert([
    refresh(ids.families.over.id, EXPIRED),
    refresh(ids.families.live.id, EXPIRED),
    refresh(ids.families.live.id, LIVE),
  ]);
  await db('access_tokens').insert([
    access(EXPIRED, ids.families.over.id),
    access(LIVE, ids.families.live.id),
    ...Array.from({ length: BULK }, () => access(EXPIRED)),
  ]);
  // Access tokens of this version have no row: a revoked one is denied, an exchanged one has its lineage, until they expire.
  await db('revoked_access_tokens').insert([
    { jti_hash: `purge-gone-${hex()}`, user_id: u.id, expires_at: EXPIRED },
    { jti_hash: `purge-live-${p.id}`, user_id: u.id, expires_at: LIVE },
  ]);
  const lineage = (expires: Date) => ({ jti_hash: hex(), subject_jti_hash: hex(), ...owner, expires_at: expires });
  await db('exchanged_access_tokens').insert([lineage(EXPIRED), lineage(LIVE)]);
  const sid = `purge-${hex()}`;
  const session = (suffix: string, expires: Date) => ({
    sid: `${sid}-${suffix}`,
    sess: JSON.stringify({ cookie: {} }),
    expire: db.raw('to_timestamp(?)', [expires.getTime() / 1000]),
  });
  await db('session').insert([session('gone', EXPIRED), session('live', LIVE)]);
  const counter = (key: string, expires: Date) => ({
    key,
    window_start: 0,
    instance_id: randomUUID(),
    hits: 3,
    expires_at: expires,
  });
  await db.batchInsert(
    'rate_limit_counters',
    [
      counter(`purge:${p.id}:live`, LIVE),
      ...Array.from({ length: BULK }, (_, i) => counter(`purge:${p.id}:${i}`, EXPIRED)),
    ],
    500,
  );
  const throttle = (key: string, expires: Date) => ({
    key,
    failures: 1,
    window_started_at: at('01-13T00:00:00'),
    locks: 0,
    expires_at: expires,
  });
  await db('attempt_throttles').insert([throttle(`purge:${p.id}:gone`, EXPIRED), throttle(`purge:${p.id}:live`, LIVE)]);
  await db('client_assertion_jtis').insert([
    { client_id: c.id, jti_hash: 'gone', expires_at: EXPIRED },
    { client_id: c.id, jti_hash: 'live', expires_at: LIVE },
  ]);
  return { p, c, ids, sid };
}

describe('purge of expired rows', () => {
  it('removes expired codes, tokens, families, sessions, counters, throttles and assertion jtis, keeps live ones, on many instances at once', async () => {
    const { p, c, ids, sid } = await seed();
    const runs = await Promise.all([
      ...Array.from({ length: 4 }, () => a.services.maintenance.purgeExpired()),
      ...Array.from({ length: 3 }, () => b.services.maintenance.purgeExpired()),
    ]);
    // Every expired row deleted exactly once, by whichever instance got to it first; no run failed.
    const total = (k: keyof (typeof runs)[number]) => runs.reduce((sum, r) => sum + r[k], 0);
    expect({
      codes: total('codes'),
      accessTokens: total('accessTokens'),
      revokedAccessTokens: total('revokedAccessTokens'),
      exchangedAccessTokens: total('exchangedAccessTokens'),
      refreshTokens: total('refreshTokens'),
      families: total('families'),
      sessions: total('sessions'),
      counters: total('counters'),
      throttles: total('throttles'),
      clientAssertionJtis: total('clientAssertionJtis'),
    }).toEqual({
      codes: 1,
      accessTokens: BULK + 1,
      revokedAccessTokens: 1,
      exchangedAccessTokens: 1,
      refreshTokens: 2,
      families: 1,
      sessions: 1,
      counters: BULK,
      throttles: 1,
      clientAssertionJtis: 1,
    });

    const db = a.database.db;
    expect((await db('authorization_codes').where({ platform_id: p.id }).pluck('id')).sort()).toEqual(
      [ids.codes.keptForReplay.id, ids.codes.live.id].sort(),
    );
    expect((await db('refresh_token_families').where({ platform_id: p.id }).pluck('id')).sort()).toEqual(
      [ids.families.live.id, ids.families.young.id].sort(),
    );
    expect(
      await db('refresh_tokens').whereIn('family_id', [ids.families.over.id, ids.families.live.id]).pluck('expires_at'),
    ).toEqual([LIVE]);
    expect(await db('access_tokens').where({ platform_id: p.id }).pluck('expires_at')).toEqual([LIVE]);
    expect(await db('revoked_access_tokens').where({ user_id: ids.user }).pluck('jti_hash')).toEqual([
      `purge-live-${p.id}`,
    ]);
    expect(await db('exchanged_access_tokens').where({ client_id: c.id }).pluck('expires_at')).toEqual([LIVE]);
    expect(await db('session').where('sid', 'like', `${sid}-%`).pluck('sid')).toEqual([`${sid}-live`]);
    expect(await db('rate_limit_counters').where('key', 'like', `purge:${p.id}:%`).pluck('key')).toEqual([
      `purge:${p.id}:live`,
    ]);
    expect(await db('attempt_throttles').where('key', 'like', `purge:${p.id}:%`).pluck('key')).toEqual([
      `purge:${p.id}:live`,
    ]);

    expect(await db('client_assertion_jtis').where({ client_id: c.id }).pluck('jti_hash')).toEqual(['live']);

    // Nothing left to do: a second round deletes nothing.
    expect(Object.values(await b.services.maintenance.purgeExpired()).every((n) => n === 0)).toBe(true);
  });

  it('runs from the periodic job and survives a failing run', async () => {
    const { p } = await seed();
    const job = startPurgeJob(a.services, a.services.deps.logger, 3600);
    try {
      await job.run();
      expect(await a.database.db('access_tokens').where({ platform_id: p.id }).count({ n: '*' }).first()).toEqual({
        n: 1,
      });
    } finally {
      job.stop();
    }
    const down = await buildTestApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' }, () => NOW);
    try {
      const downJob = startPurgeJob(down.services, down.services.deps.logger, 3600);
      try {
        await expect(downJob.run()).resolves.toBeUndefined(); // logged, retried next interval
      } finally {
        downJob.stop(); // an hour-long interval would keep this file's module registry alive
      }
    } finally {
      await down.close();
    }
  });
});

describe('purge at scale', () => {
  it('walks every family, however many windows it takes', async () => {
    const p = await buildPlatform(a.services);
    const c = await buildClient(a.services, p.id);
    const u = await buildUser(a.services, p.id, { birthdate: '1970-01-01' });
    const count = 6001; // more than one window of the walk
    await a.database.db.raw(
      `INSERT INTO refresh_token_families (id, platform_id, client_id, user_id, scope, auth_time, created_at)
       SELECT gen_random_uuid(), ?, ?, ?, 'openid offline_access', ?, ? FROM generate_series(1, ?)`,
      [p.id, c.id, u.id, at('01-01T00:00:00'), at('01-01T00:00:00'), count],
    );
    await a.services.maintenance.purgeExpired();
    expect(
      await a.database.db('refresh_token_families').where({ platform_id: p.id }).count({ n: '*' }).first(),
    ).toEqual({ n: 0 });
  });

  // The embedded database cannot forward NOTIFY to other connections.
  const withNotify = process.env.TEST_DATABASE_KIND === 'embedded' ? it.skip : it;
  withNotify(
    'raises no cache invalidation for the expired tokens it deletes, while a revocation still does',
    async () => {
      const { Client } = await import('pg');
      const listener = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(String(n.payload)));
      await listener.query('LISTEN latchkey_cache');
      try {
        const p = await buildPlatform(a.services);
        const c = await buildClient(a.services, p.id);
        const purged = await buildUser(a.services, p.id, { birthdate: '1970-01-01' });
        const revoked = await buildUser(a.services, p.id, { birthdate: '1970-01-01' });
        const token = (userId: string, expires: Date) => ({
          jti_hash: hex(),
          platform_id: p.id,
          client_id: c.id,
          user_id: userId,
          scope: 'openid',
          expires_at: expires,
          created_at: at('01-01T00:00:00'),
        });
        await a.database.db('access_tokens').insert([token(purged.id, EXPIRED), token(purged.id, EXPIRED)]);
        const live = token(revoked.id, LIVE);
        await a.database.db('access_tokens').insert(live);

        expect((await a.services.maintenance.purgeExpired()).accessTokens).toBeGreaterThanOrEqual(2);
        expect(await a.database.db('access_tokens').where({ user_id: purged.id }).count({ n: '*' }).first()).toEqual({
          n: 0,
        });
        await a.database.db('access_tokens').where({ jti_hash: live.jti_hash }).update({ revoked_at: NOW });
        // Notifications arrive in commit order: once the revocation's is here, any of the purge's would be too.
        for (let i = 0; i < 250 && !heard.includes(`user:${revoked.id}`); i++)
          await new Promise((r) => setTimeout(r, 20));
        expect(heard).toContain(`user:${revoked.id}`);
        expect(heard).not.toContain(`user:${purged.id}`);
      } finally {
        await listener.end();
      }
    },
  );
});
