import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import type { Express } from 'express';
import { buildTestApp, TEST_ENV } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { startProvider, type ProviderProcess } from '../support/provider-process';
import { browser } from '../support/browser';
import { exchange, signInThrough, userinfo } from '../support/account-flows';
import { freshDatabase } from '../support/fresh-database';
import { adminProcess } from '../support/admin-process';

// `admin backup` of the embedded database while the provider runs, `admin restore`
// into a fresh data directory, and a provider on the restored directory signs the same user in
// with the same client (its sealed secret opens under the MASTER_KEY kept with the backup).
// The embedded database is the one under test here, whatever database the rest of the run uses.
const OTHER_MASTER_KEY = 'b3RoZXItbWFzdGVyLWtleS0zMi1ieXRlcy1sb25nISE';
const env = { ...TEST_ENV, LOG_LEVEL: 'warn', DEMO_SEED: 'false' };
const onPostgres = process.env.TEST_DATABASE_KIND === 'postgres';
if (!onPostgres)
  console.warn(
    'backup: the restore into Postgres is skipped on the embedded database run (run with DATABASE_URL for it)',
  );

/** `admin …` on DATA_DIR, the embedded database. */
const admin = (dataDir: string, argv: string[], extraEnv: Record<string, string> = {}) =>
  adminProcess({ ...env, DATA_DIR: dataDir, ...extraEnv }, argv);

const dirs: string[] = [];
const freshDir = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `latchkey-${name}-`));
  dirs.push(dir);
  return dir;
};
const providers: ProviderProcess[] = [];
let setup: Awaited<ReturnType<typeof buildTestApp>> | undefined;
afterAll(async () => {
  await setup?.close();
  await Promise.all(providers.map((p) => p.stop()));
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
}, 30_000);

// A PNG signature and bytes of every value: the picture must come back byte for byte (bytea).
const PICTURE = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)),
]);

it('backs up the embedded database while the provider serves, and a provider on the restored copy signs the user in with the client', async () => {
  const source = freshDir('backup-source');
  const running = await startProvider({ ...env, DATA_DIR: source });
  providers.push(running);
  setup = await buildTestApp({
    DATABASE_URL: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(source)}`,
  });
  const p = await buildPlatform(setup.services);
  const c = await buildClient(setup.services, p.id, { scopes: 'openid profile email offline_access' });
  await setup.services.platforms.setRateLimit(p.id, 'token', 1234); // a jsonb column
  const u = await buildUser(setup.services, p.id, { givenName: 'Zoë' });
  const row = (await setup.services.users.findById(p.id, u.id))!;
  expect(await setup.services.account.profile.setPictureUpload(row as never, PICTURE)).toEqual({ ok: true });
  await setup.close();
  setup = undefined;

  // The backup runs through the provider's socket while the provider keeps answering.
  const file = path.join(freshDir('backup-file'), 'latchkey.backup');
  let backupDone = false;
  const statuses: number[] = [];
  const serving = (async () => {
    while (!backupDone)
      statuses.push((await fetch(`${running.url}/.well-known/openid-configuration?platform_guid=${p.id}`)).status);
  })();
  const backup = await admin(source, ['backup', '--out', file]).finally(() => (backupDone = true));
  await serving;
  expect(backup.err).toBe('');
  expect(backup.out).toMatchObject({
    backup: file,
    rows: { platforms: 1, clients: 1, users: 1, user_pictures: 1, signing_keys: 1 },
  });
  expect(statuses.length).toBeGreaterThan(0);
  expect(statuses.every((s) => s === 200)).toBe(true);
  expect(fs.statSync(file).mode & 0o077).toBe(0); // password hashes and sealed secrets: owner only
  expect(fs.readFileSync(file, 'utf8')).not.toContain(c.secret!);

  // A truncated copy is refused before anything is written; the same directory then takes the real one.
  const target = freshDir('backup-target');
  const truncated = path.join(path.dirname(file), 'truncated.backup');
  fs.writeFileSync(truncated, fs.readFileSync(file, 'utf8').split('\n').slice(0, -3).join('\n'));
  const refused = await admin(target, ['restore', '--in', truncated]);
  expect([refused.code, refused.err]).toEqual([1, expect.stringMatching(/truncated/)]);

  const restored = await admin(target, ['restore', '--in', file]);
  expect(restored.err).toBe('');
  expect(restored.out).toMatchObject({ restored: file, rows: backup.out.rows, migrated: [] });
  const again = await admin(target, ['restore', '--in', file]);
  expect([again.code, again.err]).toEqual([1, expect.stringMatching(/restore needs an empty database/)]);

  const copy = await startProvider({ ...env, DATA_DIR: target });
  providers.push(copy);
  const app = copy.url as unknown as Express;
  const callback = await signInThrough(browser(app), p, c, u.email);
  const tokens = await exchange(app, p, c, callback); // the client secret, sealed under MASTER_KEY, opens
  const info = await userinfo(app, p, tokens.access_token);
  expect([info.status, info.body.email, info.body.given_name]).toEqual([200, u.email, 'Zoë']);
  const picture = await fetch(info.body.picture.replace(TEST_ENV.BASE_URL, copy.url));
  expect([picture.status, Buffer.from(await picture.arrayBuffer()).equals(PICTURE)]).toEqual([200, true]);
  setup = await buildTestApp({
    DATABASE_URL: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(target)}`,
  });
  expect((await setup.database.db('platforms').where({ id: p.id }).first()).rate_limit_overrides).toEqual({
    token: 1234,
  });
}, 120_000);

it('says what to keep with a backup: the MASTER_KEY of the environment is never in it, and another key is refused before anything is written', async () => {
  const source = freshDir('backup-key-source');
  const file = path.join(freshDir('backup-key-file'), 'latchkey.backup');
  expect((await admin(source, ['platform', 'create', '--name', 'Keyed'])).code).toBe(0); // provider stopped: the CLI opens the directory
  expect((await admin(source, ['backup', '--out', file])).code).toBe(0);
  const text = fs.readFileSync(file, 'utf8');
  expect([
    text.includes(TEST_ENV.MASTER_KEY),
    text.includes(TEST_ENV.SESSION_SECRET),
    text.includes('developmentSecrets'),
  ]).toEqual([false, false, false]);
  const target = freshDir('backup-key-target');
  const refused = await admin(target, ['restore', '--in', file], { MASTER_KEY: OTHER_MASTER_KEY });
  expect([refused.code, refused.err]).toEqual([
    1,
    expect.stringMatching(
      /^error: MASTER_KEY does not match this backup: .*set the MASTER_KEY of the deployment it was taken from.*; nothing was restored/,
    ),
  ]);
  const restored = await admin(target, ['restore', '--in', file]);
  expect([restored.code, restored.err]).toEqual([0, '']);
}, 60_000);

// The format does not depend on the server: the way from the embedded database to Postgres.
(onPostgres ? it : it.skip)(
  'restores a backup of the embedded database into an empty Postgres database',
  async () => {
    const source = freshDir('backup-pg-source');
    const file = path.join(freshDir('backup-pg-file'), 'latchkey.backup');
    const created = await admin(source, ['platform', 'create', '--name', 'Moving']);
    expect((await admin(source, ['backup', '--out', file])).code).toBe(0);
    const pgDatabase = await freshDatabase();
    try {
      const restored = await admin(pgDatabase.dataDir, ['restore', '--in', file], pgDatabase.env);
      expect(restored.err).toBe('');
      expect(restored.out.rows).toMatchObject({ platforms: 1, signing_keys: 1 });
      const listed = await admin(
        pgDatabase.dataDir,
        [
          'platform',
          'rate-limit',
          '--platform',
          created.out.platform_guid,
          '--endpoint',
          'token',
          '--per-minute',
          '10',
        ],
        pgDatabase.env,
      );
      expect(listed.code).toBe(0);
    } finally {
      await pgDatabase.drop();
    }
  },
  60_000,
);
