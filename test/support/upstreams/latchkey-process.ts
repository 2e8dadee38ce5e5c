import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { freePort } from '../provider-process';
import { freshDatabase, type FreshDatabase } from '../fresh-database';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const run = promisify(execFile);

export const UPSTREAM_PASSWORD = 'upstream-correct-horse-battery';

export interface LatchkeyUpstreamUser {
  sub: string;
  email: string;
  given_name: string;
  family_name: string;
}

export interface LatchkeyProcess {
  /** Its BASE_URL: http://localhost:PORT (see below why not 127.0.0.1). */
  url: string;
  child: ChildProcess;
  /** `latchkey-admin GROUP VERB …` against this process's database; the printed JSON object. */
  admin(...argv: string[]): Promise<Record<string, any>>;
  /** What the process printed, for failure messages. */
  output(): string;
  /** Ends the process and drops its database. Safe to call twice. */
  stop(): Promise<void>;
}

export interface LatchkeyUpstream extends LatchkeyProcess {
  platformId: string;
  /** The standard platform's issuer: {url}/platforms/{guid} (discovery below it). */
  issuer: string;
  client: { id: string; secret: string };
  /** A user of the upstream platform (password UPSTREAM_PASSWORD), created with the admin CLI. */
  createUser(input: {
    email: string;
    givenName?: string;
    familyName?: string;
    emailVerified?: boolean;
  }): Promise<LatchkeyUpstreamUser>;
}

/**
 * A second Latchkey as its own OS process: the compiled `node dist/main.js` (run `npm run build`
 * first; CI's `npm ci` builds it), its own database (a new Postgres database on the run's server,
 * or a fresh embedded DATA_DIR) and its own port.
 *
 * Its BASE_URL uses the host name `localhost`, not 127.0.0.1: cookies are not kept apart by port,
 * so two Latchkeys on 127.0.0.1 would overwrite each other's `latchkey.sid` in the browser. The
 * downstream under test stays on 127.0.0.1: two hosts, two cookie jars.
 */
export async function startLatchkeyProcess(timeoutMs = 60_000): Promise<LatchkeyProcess> {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'main.js')))
    throw new Error('dist/ is missing: run `npm run build` first (CI builds it with `npm ci`)');
  const db: FreshDatabase = await freshDatabase();
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'test',
    ...db.env,
    PORT: String(port),
    BASE_URL: url,
    MASTER_KEY: randomBytes(32).toString('base64url'),
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    DEMO_SEED: 'false',
    RATE_LIMIT_SCALE: '0',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
  };
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d).slice(-20_000)));
  child.stderr!.on('data', (d) => (out = (out + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    await db.drop();
  };

  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`upstream Latchkey exited with ${child.exitCode}:\n${out}`);
    }
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > timeoutMs) {
      await stop();
      throw new Error(`upstream Latchkey not ready after ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    url,
    child,
    output: () => out,
    stop,
    async admin(...argv) {
      try {
        const { stdout } = await run(process.execPath, ['bin/latchkey-admin.js', ...argv], {
          cwd: ROOT,
          env,
          encoding: 'utf8',
        });
        return JSON.parse(stdout);
      } catch (err) {
        const e = err as { stderr?: string; message: string };
        throw new Error(`latchkey-admin ${argv.slice(0, 2).join(' ')} failed: ${e.stderr?.trim() || e.message}`, {
          cause: err,
        });
      }
    },
  };
}

/**
 * A second Latchkey ready to be an upstream: a `standard` platform (discovery at its issuer) and a
 * confidential client whose redirect URI is the downstream's upstream callback.
 */
export async function startLatchkeyUpstream(options: {
  redirectUri: string;
  platformName?: string;
  clientName?: string;
}): Promise<LatchkeyUpstream> {
  const p = await startLatchkeyProcess();
  try {
    const platform = await p.admin(
      'platform',
      'create',
      '--name',
      options.platformName ?? 'Upstream Corp',
      '--profile',
      'standard',
    );
    const client = await p.admin(
      'client',
      'create',
      '--platform',
      platform.platform_guid,
      '--name',
      options.clientName ?? 'Downstream',
      '--type',
      'confidential',
      '--redirect-uri',
      options.redirectUri,
      '--scopes',
      'openid profile email',
    );
    const platformId = platform.platform_guid as string;
    return {
      ...p,
      platformId,
      issuer: `${p.url}/platforms/${platformId}`,
      client: { id: client.client_id, secret: client.client_secret },
      async createUser(input) {
        const argv = [
          'user',
          'create',
          '--platform',
          platformId,
          '--email',
          input.email,
          '--password',
          UPSTREAM_PASSWORD,
          '--given-name',
          input.givenName ?? 'Ada',
          '--family-name',
          input.familyName ?? 'Lovelace',
          '--birthdate',
          '1990-01-02',
        ];
        if (input.emailVerified ?? true) argv.push('--email-verified');
        const u = await p.admin(...argv);
        return { sub: u.sub, email: u.email, given_name: u.given_name, family_name: u.family_name };
      },
    };
  } catch (err) {
    await p.stop();
    throw err;
  }
}
