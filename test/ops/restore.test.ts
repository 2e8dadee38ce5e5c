import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import type { Express } from 'express';
import { TEST_ENV } from '../helpers';
import { TEST_PASSWORD } from '../factories';
import { startProvider, type ProviderProcess } from '../support/provider-process';
import { browser } from '../support/browser';
import { exchange, signInThrough, userinfo } from '../support/account-flows';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { adminProcess } from '../support/admin-process';

// The README's restore steps ("Backups and upgrades") as a newcomer runs them in development:
// no MASTER_KEY or SESSION_SECRET set, so both are generated into DATA_DIR/secrets.json. Stop the
// provider, point DATA_DIR at a new empty directory, `admin restore --in FILE`, start the provider.
// On the embedded database always; on Postgres too when the run has one (a new database and a
// new DATA_DIR: the other machine a backup is restored on).
const DEV_ENV = { NODE_ENV: 'development', BASE_URL: TEST_ENV.BASE_URL, LOG_LEVEL: 'warn', DEMO_SEED: 'false' };
const OTHER_MASTER_KEY = 'b3RoZXItbWFzdGVyLWtleS0zMi1ieXRlcy1sb25nISE';
const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  BASE_URL: 'https://id.example.com',
  MASTER_KEY: OTHER_MASTER_KEY,
  SESSION_SECRET: 's'.repeat(32),
  SMTP_URL: 'smtp://127.0.0.1:1',
  LOG_LEVEL: 'warn',
};
const KINDS =
  process.env.TEST_DATABASE_KIND === 'postgres' ? (['embedded', 'postgres'] as const) : (['embedded'] as const);

const cleanups: Array<() => Promise<void>> = [];
const tmpDir = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `latchkey-${name}-`));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};
/** An empty database with its own DATA_DIR: a new embedded directory, or a new Postgres database. */
async function emptyDatabase(kind: (typeof KINDS)[number]): Promise<FreshDatabase> {
  if (kind === 'embedded') {
    const dataDir = tmpDir('restore-dir');
    return { env: { DATA_DIR: dataDir }, dataDir, drop: async () => undefined };
  }
  const database = await freshDatabase();
  cleanups.push(database.drop);
  return database;
}
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
}, 30_000);

/** A development deployment with a platform, a confidential client and a user, and its backup. */
async function developmentBackup(kind: (typeof KINDS)[number]) {
  const source = await emptyDatabase(kind);
  const admin = (argv: string[]) => adminProcess({ ...DEV_ENV, ...source.env }, argv);
  const platform = (await admin(['platform', 'create', '--name', 'Moving house'])).out;
  const client = (
    await admin([
      'client',
      'create',
      '--platform',
      platform.platform_guid,
      '--name',
      'Web app',
      '--type',
      'confidential',
      '--redirect-uri',
      'https://app.example.com/callback',
      '--scopes',
      'openid profile email offline_access',
    ])
  ).out;
  const user = await admin([
    'user',
    'create',
    '--platform',
    platform.platform_guid,
    '--email',
    'ada@example.com',
    '--password',
    TEST_PASSWORD,
    '--given-name',
    'Ada',
    '--family-name',
    'Lovelace',
    '--birthdate',
    '1990-12-10',
  ]);
  expect(user.err).toBe('');
  expect(fs.existsSync(path.join(source.dataDir, 'secrets.json'))).toBe(true); // the generated development key
  const file = path.join(tmpDir('restore-file'), 'latchkey.backup');
  const backup = await admin(['backup', '--out', file]);
  expect(backup.err).toBe('');
  return {
    file,
    p: { id: platform.platform_guid as string },
    c: {
      id: client.client_id as string,
      secret: client.client_secret as string,
      redirectUris: ['https://app.example.com/callback'],
    },
  };
}

describe.each(KINDS)('restore in development (%s database)', (kind) => {
  const providers: ProviderProcess[] = [];
  let backup: Awaited<ReturnType<typeof developmentBackup>>;
  beforeAll(async () => {
    backup = await developmentBackup(kind);
  }, 120_000);
  afterAll(() => Promise.all(providers.map((p) => p.stop())), 30_000);

  it("works by the README's steps as written: the new DATA_DIR takes the generated secrets the backup carries", async () => {
    const { file, p, c } = backup;
    const target = await emptyDatabase(kind);
    const restored = await adminProcess({ ...DEV_ENV, ...target.env }, ['restore', '--in', file]);
    expect([restored.code, restored.err]).toEqual([0, '']);
    expect(restored.out).toMatchObject({ restored: file, rows: { platforms: 1, clients: 1, users: 1 }, migrated: [] });

    const provider = await startProvider({ ...DEV_ENV, ...target.env });
    providers.push(provider);
    const app = provider.url as unknown as Express;
    const tokens = await exchange(app, p, c, await signInThrough(browser(app), p, c, 'ada@example.com')); // the client secret opens
    const info = await userinfo(app, p, tokens.access_token);
    expect([info.status, info.body.email]).toEqual([200, 'ada@example.com']);
  }, 180_000);

  it('refuses a key that cannot open the backup before writing anything, so the retry with the right one restores', async () => {
    const { file, p } = backup;
    const target = await emptyDatabase(kind);
    // Production never takes the key a development backup carries: it says so, and writes nothing.
    const refused = await adminProcess({ ...PRODUCTION_ENV, ...target.env }, ['restore', '--in', file]);
    expect([refused.code, refused.err]).toEqual([
      1,
      expect.stringMatching(
        /^error: MASTER_KEY does not match this backup.*taken in development.*nothing was restored/,
      ),
    ]);
    const wrongKey = await adminProcess({ ...DEV_ENV, ...target.env, MASTER_KEY: OTHER_MASTER_KEY }, [
      'restore',
      '--in',
      file,
    ]);
    expect([wrongKey.code, wrongKey.err]).toEqual([
      1,
      expect.stringMatching(/^error: MASTER_KEY does not match this backup.*nothing was restored/),
    ]);

    const retried = await adminProcess({ ...DEV_ENV, ...target.env }, ['restore', '--in', file]);
    expect([retried.code, retried.err]).toEqual([0, '']);
    const shown = await adminProcess({ ...DEV_ENV, ...target.env }, ['platform', 'show', '--platform', p.id]); // the CLI checks the key too
    expect([shown.code, shown.out?.name]).toEqual([0, 'Moving house']);
  }, 180_000);

  it('leaves nothing behind when loading the rows fails halfway, so the retry with a good file restores', async () => {
    const { file, p } = backup;
    // A whole file (counts and end marker intact) whose platform row cannot be stored: caught only while loading.
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const at = lines.indexOf(JSON.stringify(['table', 'platforms'])) + 1;
    lines[at] = JSON.stringify({ ...JSON.parse(lines[at]), id: 'not-a-uuid' });
    const damaged = path.join(path.dirname(file), 'damaged.backup');
    fs.writeFileSync(damaged, lines.join('\n'));

    const target = await emptyDatabase(kind);
    const failed = await adminProcess({ ...DEV_ENV, ...target.env }, ['restore', '--in', damaged]);
    expect([failed.code, failed.err]).toEqual([1, expect.stringMatching(/^error: nothing was restored: .*uuid/)]);
    const retried = await adminProcess({ ...DEV_ENV, ...target.env }, ['restore', '--in', file]);
    expect([retried.code, retried.err]).toEqual([0, '']);
    const shown = await adminProcess({ ...DEV_ENV, ...target.env }, ['platform', 'show', '--platform', p.id]);
    expect([shown.code, shown.out?.name]).toEqual([0, 'Moving house']);
  }, 180_000);
});
