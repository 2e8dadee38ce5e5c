// Latchkey itself: `node dist/main.js` as a child process on a fresh Postgres database
// (created here, dropped at the end), tenants set up through the admin CLI, codes and
// tokens pre-issued by driving the hosted browser flow over plain HTTP.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { OidcDriver, type Target } from './lib/oidc';
import { machineRows } from './machines';
import { freePort, onCleanup, startChild, stopChild, waitForHttp200, type Child } from './lib/proc';

export const ROOT = path.resolve(__dirname, '..');
/** Where the built provider lives (its dist/, views/, migrations/): this checkout unless overridden. */
export const APP_DIR = path.resolve(process.env.BENCH_LATCHKEY_DIR ?? ROOT);
const MAIN = path.join(APP_DIR, 'dist', 'main.js');
const CLI = path.join(APP_DIR, 'dist', 'cli', 'main.js');

export const ADMIN_DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const USER = {
  email: 'bench@example.com',
  password: 'correct horse battery staple',
  given: 'Bench',
  family: 'User',
  birthdate: '1990-01-01',
};
const REDIRECT_URI = 'http://127.0.0.1:9/cb';
const SCOPES = 'openid profile email phone address offline_access';
const REQUEST_SCOPE = 'openid profile email offline_access';

/** Why our rows cannot run (dist/ not built), or null when they can. */
export function oursUnavailable(): string | null {
  const missing = [MAIN, CLI].filter((f) => !fs.existsSync(f));
  if (missing.length === 0) return null;
  return `${missing.map((f) => path.relative(ROOT, f)).join(' and ')} missing: build the provider first (npm run build)`;
}

function dbUrl(name: string): string {
  const u = new URL(ADMIN_DB_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: ADMIN_DB_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates an empty database, registered for dropping at exit. */
export async function freshDatabase(tag: string): Promise<string> {
  const name = `latchkey_bench_${tag}_${Date.now().toString(36)}_${crypto.randomBytes(3).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  onCleanup(() => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined));
  return dbUrl(name);
}

function tempDir(tag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `latchkey-bench-${tag}-`));
  onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface OursEnvOpts {
  databaseUrl?: string;
  dataDir: string;
  port: number;
  extraEnv?: Record<string, string>;
}

/**
 * RATE_LIMIT_SCALE of the provider under test: off unless BENCH_RATE_LIMIT_SCALE says otherwise, to
 * measure what limits cost (pick a scale at which no row reaches its limit: 429s count as non-2xx).
 */
export const OURS_RATE_LIMIT_SCALE = process.env.BENCH_RATE_LIMIT_SCALE ?? '0';

/** The report's words for OURS_RATE_LIMIT_SCALE. */
export const oursRateLimitNote = () =>
  OURS_RATE_LIMIT_SCALE === '0'
    ? 'Rate limiting off (`RATE_LIMIT_SCALE=0`)'
    : `Rate limiting on, \`RATE_LIMIT_SCALE=${OURS_RATE_LIMIT_SCALE}\` (\`BENCH_RATE_LIMIT_SCALE\`; counters in Postgres)`;

function oursEnv(o: OursEnvOpts): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(o.port),
    BASE_URL: `http://127.0.0.1:${o.port}`,
    RATE_LIMIT_SCALE: OURS_RATE_LIMIT_SCALE,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATA_DIR: o.dataDir,
    // Pools of single-use codes are minted before each run; give them time to be used.
    CODE_TTL_SECONDS: '600',
  };
  if (o.databaseUrl) env.DATABASE_URL = o.databaseUrl;
  // Profiling hook (e.g. `--require ./profile-hook.js`); nothing else of the caller's environment leaks in.
  if (process.env.BENCH_OURS_NODE_OPTIONS) env.NODE_OPTIONS = process.env.BENCH_OURS_NODE_OPTIONS;
  Object.assign(env, o.extraEnv);
  return env;
}

export interface Started {
  child: Child;
  readyMs: number;
  base: string;
  env: NodeJS.ProcessEnv;
}

/** The Node flags `npm start` gives dist/main.js (the heap ceiling): the bench runs what ships. */
function startFlags(): string[] {
  const start = JSON.parse(fs.readFileSync(path.join(APP_DIR, 'package.json'), 'utf8')).scripts.start as string;
  const m = /\bnode ((?:--\S+ )*)dist\/main\.js/.exec(start);
  if (!m) throw new Error(`package.json's start script does not run dist/main.js: ${start}`);
  return m[1].split(' ').filter(Boolean);
}

/** Spawns `node dist/main.js` (with `npm start`'s flags) and measures spawn → first 200 on /readyz. */
export async function spawnOurs(o: {
  databaseUrl?: string;
  dataDir: string;
  name?: string;
  extraEnv?: Record<string, string>;
}): Promise<Started> {
  const port = await freePort();
  const env = oursEnv({ ...o, port });
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = startChild(o.name ?? 'ours', process.execPath, [...startFlags(), MAIN], { env, cwd: APP_DIR });
  const readyMs = await waitForHttp200(child, `${base}/readyz`, t0, 60_000, 5);
  return { child, readyMs, base, env };
}

function cli(env: NodeJS.ProcessEnv, args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd: APP_DIR, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err)
        return reject(
          new Error(
            `admin CLI ${args.slice(0, 2).join(' ')} failed (${err.message.split('\n')[0]}):\n${stderr}${stdout}`,
          ),
        );
      const s = stdout.indexOf('{');
      const e = stdout.lastIndexOf('}');
      try {
        resolve(JSON.parse(stdout.slice(s, e + 1)));
      } catch {
        reject(new Error(`admin CLI ${args.slice(0, 2).join(' ')}: no JSON on stdout:\n${stdout}\n${stderr}`));
      }
    });
  });
}

export interface OursTarget extends Target {
  coldStartFreshPgMs: number;
  databaseUrl: string;
  dataDir: string;
  /** The provider's environment (for admin CLI calls against the same database). */
  env: NodeJS.ProcessEnv;
  /** The benchmark platform and its confidential client. */
  platformGuid: string;
  clientId: string;
}

/** Runs the built admin CLI (dist/cli/main.js) with `env`; resolves with its JSON output. */
export const adminCli = (env: NodeJS.ProcessEnv, args: string[]) => cli(env, args);

/** A provider on a fresh, migrated and empty database (no platform yet), stopped and dropped at exit. */
export async function startBareOurs(
  opts: { extraEnv?: Record<string, string>; tag?: string } = {},
): Promise<Started & { databaseUrl: string; dataDir: string }> {
  const why = oursUnavailable();
  if (why) throw new Error(why);
  const databaseUrl = await freshDatabase(opts.tag ?? 'main');
  const dataDir = tempDir('pg');
  return { ...(await spawnOurs({ databaseUrl, dataDir, extraEnv: opts.extraEnv })), databaseUrl, dataDir };
}

/** `extraEnv` is added to the provider's environment (e.g. PURGE_INTERVAL_SECONDS for the large-data mode). */
export async function startOurs(opts: { extraEnv?: Record<string, string>; tag?: string } = {}): Promise<OursTarget> {
  const s = await startBareOurs(opts);
  const { databaseUrl, dataDir } = s;
  try {
    const platform = await cli(s.env, ['platform', 'create', '--name', 'Bench']);
    const G = String(platform.platform_guid ?? '');
    if (!G) throw new Error(`platform create: no platform_guid in ${JSON.stringify(platform)}`);
    const client = await cli(s.env, [
      'client',
      'create',
      '--platform',
      G,
      '--name',
      'B',
      '--type',
      'confidential',
      '--redirect-uri',
      REDIRECT_URI,
      '--scopes',
      SCOPES,
    ]);
    const clientId = String(client.client_id ?? '');
    const clientSecret = String(client.client_secret ?? '');
    if (!clientId || !clientSecret)
      throw new Error(`client create: no client_id/client_secret in ${JSON.stringify(client)}`);
    await cli(s.env, [
      'user',
      'create',
      '--platform',
      G,
      '--email',
      USER.email,
      '--password',
      USER.password,
      '--given-name',
      USER.given,
      '--family-name',
      USER.family,
      '--birthdate',
      USER.birthdate,
    ]);

    const driver = new OidcDriver({
      base: s.base,
      paths: {
        discovery: '/.well-known/openid-configuration',
        jwks: '/oauth/jwks',
        authorize: '/oauth/authorize',
        token: '/oauth/token',
        userinfo: '/oauth/userinfo',
        introspect: '/oauth/introspect',
      },
      tenant: { platform_guid: G },
      clientId,
      clientSecret,
      redirectUri: REDIRECT_URI,
      scope: REQUEST_SCOPE,
      creds: { email: USER.email, password: USER.password },
      freshAuthorizeParams: { action: 'login' },
      // With a session, login_hint pins the account and skips the chooser (spec).
      sessionAuthorizeParams: { login_hint: USER.email },
    });
    const rows = await driver.rows();
    try {
      Object.assign(rows, await machineRows({ base: s.base, env: s.env, cli, user: USER, redirectUri: REDIRECT_URI }));
    } catch (err) {
      const reason = `could not set up the machine platform: ${(err as Error).message.slice(0, 400)}`;
      rows.client_credentials = { kind: 'na', reason };
      rows.token_exchange = { kind: 'na', reason };
    }
    return {
      name: 'ours',
      label: 'Latchkey',
      base: s.base,
      pid: s.child.pid,
      rows,
      stop: () => stopChild(s.child, 10_000),
      notes: driver.notes,
      driver,
      coldStartFreshPgMs: s.readyMs,
      databaseUrl,
      dataDir,
      env: s.env,
      platformGuid: G,
      clientId,
    };
  } catch (err) {
    await stopChild(s.child);
    throw new Error(
      `${(err as Error).message}\n--- provider output (last lines) ---\n${s.child.output.slice(-25).join('\n')}`,
      { cause: err },
    );
  }
}

export interface ColdStart {
  label: string;
  ms: number[];
  error?: string;
}

/**
 * Cold start to ready: spawn → first 200 on /readyz. Postgres on a fresh database (runs the
 * migrations) and on an already-migrated one; embedded (PGlite, DATA_DIR) on a fresh and on
 * an already-initialised directory. Each `runs` times; the provider is stopped after each.
 */
/** `migrated`: the benchmark's database with its DATA_DIR, whose development MASTER_KEY sealed that database. */
export async function measureColdStarts(
  runs: number,
  migrated?: { databaseUrl: string; dataDir: string },
): Promise<ColdStart[]> {
  const out: ColdStart[] = [];
  const one = async (label: string, prep: () => Promise<{ databaseUrl?: string; dataDir: string }>) => {
    const cs: ColdStart = { label, ms: [] };
    out.push(cs);
    try {
      for (let i = 0; i < runs; i++) {
        const o = await prep();
        const s = await spawnOurs({ ...o, name: `ours-cold-${label}` });
        cs.ms.push(s.readyMs);
        await stopChild(s.child, 10_000);
      }
    } catch (err) {
      cs.error = (err as Error).message.split('\n').slice(0, 6).join(' | ');
    }
  };
  await one('Postgres, fresh database (runs migrations)', async () => ({
    databaseUrl: await freshDatabase('cold'),
    dataDir: tempDir('cold'),
  }));
  if (migrated) await one('Postgres, migrated database', async () => migrated);
  await one('embedded (PGlite), fresh DATA_DIR', async () => ({ dataDir: tempDir('emb') }));
  const embDir = tempDir('emb');
  let first = true;
  await one('embedded (PGlite), existing DATA_DIR', async () => {
    if (first) {
      // Initialise the directory once, untimed.
      first = false;
      const s = await spawnOurs({ dataDir: embDir, name: 'ours-emb-init' });
      await stopChild(s.child, 10_000);
    }
    return { dataDir: embDir };
  });
  return out;
}
