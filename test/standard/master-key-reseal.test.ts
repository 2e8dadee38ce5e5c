import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as jose from 'jose';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { TEST_ENV } from '../helpers';
import { createSealer } from '../../src/crypto/seal';

// `admin master-key reseal` covers the sealed private JWKs of standard platforms, on a database of its own.
const key = () => randomBytes(32).toString('base64url');
const ROOT = path.resolve(__dirname, '..', '..');

let fresh: FreshDatabase;
beforeAll(async () => {
  fresh = await freshDatabase();
});
afterAll(() => fresh.drop());

const baseEnv = () => ({
  ...fresh.env,
  NODE_ENV: 'development',
  SESSION_SECRET: TEST_ENV.SESSION_SECRET,
  RATE_LIMIT_SCALE: '0',
  LOG_LEVEL: 'silent',
});

/** A node process with tsx (the admin CLI, a script) until it exits: its exit code and output. */
function run(env: Record<string, string>, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
const cli = (env: Record<string, string>, argv: string[]) => run(env, ['src/cli/main.ts', ...argv]);

// Read in a process of its own: the embedded database cannot be opened inside jest.
const READ_SEALED_KEYS = `
  const { openDatabase } = require('./src/db');
  (async () => {
    const d = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR, poolMax: 2 });
    const rows = await d.db('signing_keys').whereNotNull('sealed_private_jwk').select('alg', 'sealed_private_jwk');
    await d.close();
    process.stdout.write(JSON.stringify(rows));
  })();`;

it('reseals the private JWKs of a standard platform under the new MASTER_KEY', async () => {
  const [a, b] = [key(), key()];
  const created = await cli({ ...baseEnv(), MASTER_KEY: a }, [
    'platform',
    'create',
    '--name',
    'Standard',
    '--profile',
    'standard',
  ]);
  expect(created.code).toBe(0);
  expect(JSON.parse(created.output)).toMatchObject({ signing_profile: 'standard' });

  const reseal = await cli({ ...baseEnv(), MASTER_KEY: b, MASTER_KEY_PREVIOUS: a }, ['master-key', 'reseal']);
  expect(reseal.code).toBe(0);
  expect(JSON.parse(reseal.output).resealed).toMatchObject({
    'signing_keys.sealed_secret': 1,
    'signing_keys.sealed_private_jwk': 3,
  });

  const read = await run(baseEnv(), ['-e', READ_SEALED_KEYS]);
  expect(read.code).toBe(0);
  const rows = JSON.parse(read.output) as Array<{ alg: string; sealed_private_jwk: string }>;
  expect(rows.map((r) => r.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
  for (const row of rows) {
    expect(() => createSealer(a).unseal(row.sealed_private_jwk)).toThrow();
    const jwk = JSON.parse(createSealer(b).unseal(row.sealed_private_jwk).toString('utf8'));
    expect(jwk.d).toEqual(expect.any(String));
    await expect(jose.importJWK(jwk, row.alg)).resolves.toBeDefined();
  }
}, 180_000);
