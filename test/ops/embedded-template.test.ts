import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../support/provider-process';

// A first `npm start` on a fresh DATA_DIR opens the migrated template the build packed
// (dist/pglite-template.tgz) instead of running initdb and every migration.
const ROOT = path.resolve(__dirname, '..', '..');

describe('the embedded database template', () => {
  it('is built with dist/, and a fresh DATA_DIR starts from it with nothing left to migrate', async () => {
    if (!fs.existsSync(path.join(ROOT, 'dist', 'main.js')))
      throw new Error('dist/ is missing: run `npm ci` or `npm run build` first (.ci/run does)');
    expect(fs.statSync(path.join(ROOT, 'dist', 'pglite-template.tgz')).size).toBeGreaterThan(0);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-template-test-'));
    const port = await freePort();
    const child = spawn(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NODE_ENV: 'development',
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    try {
      for (let i = 0; !out.includes('Latchkey is ready'); i++) {
        if (child.exitCode !== null || i > 600) throw new Error(`not ready:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).not.toContain('database migrated'); // the template holds every migration already
      const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-client.json'), 'utf8'));
      const discovery = await fetch(
        `http://127.0.0.1:${port}/.well-known/openid-configuration?platform_guid=${demo.platform_guid}`,
      );
      expect(discovery.status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }

    // The compiled CLI restores into a fresh DATA_DIR: there it must not start from the template.
    const backup = path.join(dataDir, 'latchkey.backup');
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-template-restore-'));
    const secrets = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
    const cli = (dir: string, ...argv: string[]) =>
      execFileSync(process.execPath, ['bin/latchkey-admin.js', ...argv], {
        cwd: ROOT,
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH ?? '',
          NODE_ENV: 'development',
          DATA_DIR: dir,
          MASTER_KEY: secrets.masterKey,
          SESSION_SECRET: secrets.sessionSecret,
        },
      });
    try {
      expect(JSON.parse(cli(dataDir, 'backup', '--out', backup)).rows.platforms).toBe(1);
      expect(JSON.parse(cli(fresh, 'restore', '--in', backup)).rows.platforms).toBe(1);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  }, 120_000);
});
