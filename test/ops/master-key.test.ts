import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort, startProvider, type ProviderProcess } from '../support/provider-process';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { TEST_ENV } from '../helpers';

// Provider processes on a database of their own: MASTER_KEY is checked at start and rotated there.
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
  LOG_LEVEL: 'info',
});

/** The demo client authenticates at introspection with the secret sealed under the key in force. */
async function clientAuthenticates(p: ProviderProcess): Promise<number> {
  const demo = JSON.parse(fs.readFileSync(path.join(fresh.dataDir, 'demo-client.json'), 'utf8'));
  const res = await fetch(`${p.url}/oauth/introspect`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${demo.client_id}:${demo.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ platform_guid: demo.platform_guid, token: 'not-a-token' }),
  });
  return res.status;
}

/** Runs src/main.ts (or another entry) until it exits; resolves with its exit code and what it printed. */
function runToExit(
  env: Record<string, string>,
  argv = ['src/main.ts'],
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...argv], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const [a, b, wrong] = [key(), key(), key()];

describe('MASTER_KEY at start and its rotation (live provider)', () => {
  it('seals a sentinel at first start; a wrong key is refused with one clear line; MASTER_KEY_PREVIOUS reseals', async () => {
    const first = await startProvider({ ...baseEnv(), MASTER_KEY: a });
    try {
      expect(await clientAuthenticates(first)).toBe(200);
    } finally {
      await first.stop();
    }

    const refused = await runToExit({ ...baseEnv(), MASTER_KEY: wrong, PORT: String(await freePort()) });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/^Latchkey failed to start: MASTER_KEY does not match this database/m);
    expect(refused.output).not.toMatch(/Latchkey is ready|\n\s+at /);

    const rotating = await startProvider({ ...baseEnv(), MASTER_KEY: b, MASTER_KEY_PREVIOUS: a });
    try {
      expect(rotating.output()).toMatch(/resealed under the new MASTER_KEY/);
      expect(await clientAuthenticates(rotating)).toBe(200);
    } finally {
      await rotating.stop();
    }

    // Everything now opens under the new key alone, and the old one is refused.
    const rotated = await startProvider({ ...baseEnv(), MASTER_KEY: b });
    try {
      expect(await clientAuthenticates(rotated)).toBe(200);
    } finally {
      await rotated.stop();
    }
    expect((await runToExit({ ...baseEnv(), MASTER_KEY: a, PORT: String(await freePort()) })).output).toMatch(
      /MASTER_KEY does not match this database/,
    );

    // The operator's command reseals on demand, and refuses a wrong key too.
    const reseal = await runToExit({ ...baseEnv(), MASTER_KEY: b }, ['src/cli/main.ts', 'master-key', 'reseal']);
    expect(reseal.code).toBe(0);
    expect(JSON.parse(reseal.output).resealed).toMatchObject({
      'clients.sealed_secret': 1,
      'signing_keys.sealed_secret': 1,
    });
    const wrongCli = await runToExit({ ...baseEnv(), MASTER_KEY: wrong }, ['src/cli/main.ts', 'master-key', 'reseal']);
    expect([wrongCli.code, wrongCli.output]).toEqual([
      1,
      expect.stringMatching(/^error: MASTER_KEY does not match this database/),
    ]);
  }, 180_000);
});

describe('start-up on a taken port', () => {
  it('exits non-zero naming the port, never "ready"', async () => {
    const blocker = net.createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, () => resolve((blocker.address() as net.AddressInfo).port)),
    );
    try {
      // After the rotation above the database is sealed under b: everything before listening succeeds.
      const run = await runToExit({ ...baseEnv(), MASTER_KEY: b, PORT: String(port) });
      expect(run.code).not.toBe(0);
      expect(run.output).toContain(`Latchkey failed to start: port ${port} is already in use`);
      expect(run.output).not.toContain('Latchkey is ready');
    } finally {
      blocker.close();
    }
  }, 120_000);
});
