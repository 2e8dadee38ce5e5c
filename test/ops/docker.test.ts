import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { builtinModules } from 'node:module';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import knex from 'knex';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config';
import { freePort } from '../support/provider-process';

/**
 * No Docker engine here (issue 11 §3): the Dockerfile and docker-compose.yml are parsed and
 * checked for what can be checked, and the image's exact start command (its CMD, its ENV, the
 * layout it copies) is run against the built dist/ in production mode.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const exec = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// A Dockerfile reader: enough of the format for this repository's file (continuations, comments,
// ARG defaults in FROM, exec- and shell-form arguments).

interface Instruction { op: string; args: string }
interface Stage { from: string; name?: string; instructions: Instruction[] }

function parseDockerfile(text: string): { stages: Stage[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line) || (!current && !line.trim())) continue; // comments, also inside continuations
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const l of logical) {
    const m = /^\s*(\w+)\s+([\s\S]*)$/.exec(l);
    if (!m) continue;
    const op = m[1].toUpperCase();
    const rest = m[2].trim();
    if (op === 'ARG' && !stages.length) {
      const [k, v = ''] = rest.split('=');
      args[k] = v;
    } else if (op === 'FROM') {
      const [image, , name] = rest.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => args[a ?? b] ?? '').split(/\s+/);
      stages.push({ from: image, name, instructions: [] });
    } else {
      stages[stages.length - 1].instructions.push({ op, args: rest });
    }
  }
  return { stages };
}

/** `ENV A=1 B=2` (and the legacy `ENV A 1`) of one stage, in order. */
function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of stage.instructions.filter((x) => x.op === 'ENV')) {
    if (!i.args.includes('=')) {
      const [k, ...v] = i.args.split(/\s+/);
      env[k] = v.join(' ');
      continue;
    }
    for (const pair of i.args.match(/\w+=("[^"]*"|\S*)/g) ?? []) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1).replace(/^"|"$/g, '');
    }
  }
  return env;
}

const execForm = (args: string): string[] => JSON.parse(args);
const all = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op);
const last = (stage: Stage, op: string) => all(stage, op).at(-1);

// Node.js release lines (nodejs/Release schedule): when each became LTS and when it ends.
const NODE_LTS: Record<number, { lts: string; eol: string }> = {
  20: { lts: '2023-10-24', eol: '2026-04-30' },
  22: { lts: '2024-10-29', eol: '2027-04-30' },
  24: { lts: '2025-10-28', eol: '2028-04-30' },
  26: { lts: '2026-10-28', eol: '2029-04-30' },
};

/** A minimal dotenv reader: `KEY=value` lines; comments and blank lines skipped. */
function parseDotenv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^(["'])(.*)\1$/, '$2');
  }
  return env;
}

/** Compose interpolation: ${VAR}, ${VAR:-default}, ${VAR:?error} (an unset VAR with :? aborts). */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, kind?: string, arg?: string) => {
    const v = vars[name];
    if (v) return v;
    if (kind === '?') throw new Error(`compose refuses: ${name}: ${arg}`);
    return kind === '-' ? arg ?? '' : '';
  });
}

/** A service's `environment`, as map or list. */
function serviceEnv(service: any): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
  return Object.fromEntries(env.map((e: string) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

const dockerfile = parseDockerfile(read('Dockerfile'));
const runtime = dockerfile.stages.at(-1)!;
const compose = parseYaml(read('docker-compose.yml'));
const pkg = JSON.parse(read('package.json'));

describe('Dockerfile', () => {
  it('builds from an active Node LTS line, the same image in every stage', () => {
    const now = Date.now();
    for (const stage of dockerfile.stages) {
      const m = /^node:(\d+)(?:\.[\d.]+)?-([a-z]+)-slim$/.exec(stage.from);
      expect({ from: stage.from, tagged: Boolean(m) }).toEqual({ from: stage.from, tagged: true });
      const line = NODE_LTS[Number(m![1])];
      expect({ from: stage.from, knownLts: Boolean(line) }).toEqual({ from: stage.from, knownLts: true });
      expect({ from: stage.from, ltsSince: Date.parse(line.lts) <= now, beforeEol: now < Date.parse(line.eol) })
        .toEqual({ from: stage.from, ltsSince: true, beforeEol: true });
    }
    expect(new Set(dockerfile.stages.map((s) => s.from)).size).toBe(1);
  });

  it('runs as a non-root user', () => {
    const user = last(runtime, 'USER')?.args.split(':')[0];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
  });

  it('is production by default, with its data directory on a volume', () => {
    const env = stageEnv(runtime);
    expect(env.NODE_ENV).toBe('production');
    expect(env.DATA_DIR).toBe('/app/data');
    const volumes = all(runtime, 'VOLUME').flatMap((v) => (v.args.startsWith('[') ? execForm(v.args) : v.args.split(/\s+/)));
    expect(volumes).toContain(env.DATA_DIR);
    // The directory exists and belongs to the user before VOLUME copies it into a new volume.
    expect(all(runtime, 'RUN').map((r) => r.args).join('\n')).toMatch(/chown node:node \/app\/data/);
  });

  it('has a health check on /healthz', () => {
    const hc = last(runtime, 'HEALTHCHECK');
    expect(hc?.args).toMatch(/\bCMD\b.*\/healthz/);
  });

  it('starts with `node dist/main.js` in exec form (signals reach node)', () => {
    expect(execForm(last(runtime, 'CMD')!.args)).toEqual(['node', 'dist/main.js']);
  });

  it('installs production dependencies only, without lifecycle scripts, and copies only dist/ from the build', () => {
    const installs = all(runtime, 'RUN').filter((r) => /\bnpm (ci|install)\b/.test(r.args));
    expect(installs).toHaveLength(1);
    expect(installs[0].args).toMatch(/npm ci\b/);
    expect(installs[0].args).toMatch(/--omit=dev/);
    expect(installs[0].args).toMatch(/--ignore-scripts/);
    const fromBuild = all(runtime, 'COPY').filter((c) => c.args.startsWith('--from='));
    expect(fromBuild.map((c) => c.args)).toEqual(['--from=build /app/dist ./dist']);
  });

  it('puts the admin CLI on PATH as `latchkey-admin`, the package.json bin entry', () => {
    expect(pkg.bin).toEqual({ 'latchkey-admin': 'bin/latchkey-admin.js' });
    const runs = all(runtime, 'RUN').map((r) => r.args).join('\n');
    expect(runs).toContain('ln -s /app/bin/latchkey-admin.js /usr/local/bin/latchkey-admin');
    expect(all(runtime, 'COPY').map((c) => c.args)).toContain('bin ./bin');
    expect(fs.statSync(path.join(ROOT, 'bin/latchkey-admin.js')).mode & 0o111).toBeTruthy();
    expect(read('bin/latchkey-admin.js').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('copies only files that exist and that .dockerignore lets through', () => {
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter(Boolean);
    for (const stage of dockerfile.stages) {
      for (const copy of all(stage, 'COPY').filter((c) => !c.args.startsWith('--from='))) {
        const sources = copy.args.split(/\s+/).slice(0, -1);
        for (const source of sources) {
          expect({ source, exists: fs.existsSync(path.join(ROOT, source)) }).toEqual({ source, exists: true });
          expect({ source, ignored: ignored.includes(source.split('/')[0]) }).toEqual({ source, ignored: false });
        }
      }
    }
    expect(ignored).toEqual(expect.arrayContaining(['.env', 'node_modules', 'dist', 'data']));
  });

  it('needs no dev dependency at run time: every package required by dist/ and bin/ is a dependency', () => {
    const mainJs = path.join(ROOT, 'dist', 'main.js');
    if (!fs.existsSync(mainJs)) throw new Error('dist/ is missing: run `npm ci` or `npm run build` before this test');
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    const allowed = new Set(Object.keys(pkg.dependencies));
    const files: string[] = [path.join(ROOT, 'bin', 'latchkey-admin.js')];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) walk(full);
        else if (e.name.endsWith('.js')) files.push(full);
      }
    };
    walk(path.join(ROOT, 'dist'));
    const outside: string[] = [];
    for (const file of files) {
      for (const [, spec] of fs.readFileSync(file, 'utf8').matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)) {
        if (spec.startsWith('.') || spec.startsWith('/') || builtins.has(spec)) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (!allowed.has(name)) outside.push(`${path.relative(ROOT, file)}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  });
});

describe('docker-compose.yml with a .env made from .env.example', () => {
  const app = compose.services.latchkey;
  const db = compose.services.postgres;

  it('sets NODE_ENV=production in `environment`, which wins over env_file', () => {
    expect([app.env_file].flat().map((f: any) => (typeof f === 'string' ? f : f.path))).toEqual(['.env']);
    expect(serviceEnv(app).NODE_ENV).toBe('production');
  });

  it('keeps both databases on named volumes', () => {
    const named = Object.keys(compose.volumes ?? {});
    const mounts = (service: any) =>
      Object.fromEntries((service.volumes ?? []).map((v: string) => [v.split(':')[1], v.split(':')[0]]));
    const dataDir = serviceEnv(app).DATA_DIR ?? stageEnv(runtime).DATA_DIR;
    expect(dataDir).toBe('/app/data');
    expect(named).toContain(mounts(app)[dataDir]);
    expect(named).toContain(mounts(db)['/var/lib/postgresql/data']);
    // Renaming the Postgres volume would start upgraded deployments on an empty database.
    expect(mounts(db)['/var/lib/postgresql/data']).toBe('pgdata');
  });

  it('starts the provider once Postgres is healthy, and publishes it on loopback only', () => {
    expect(db.healthcheck.test.join(' ')).toMatch(/pg_isready/);
    expect(app.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(app.ports).toEqual(['127.0.0.1:3000:3000']);
    expect(db.ports).toBeUndefined();
  });

  it('gives no default database password', () => {
    expect(() => interpolate(serviceEnv(db).POSTGRES_PASSWORD, {})).toThrow(/POSTGRES_PASSWORD/);
    expect(() => interpolate(serviceEnv(app).DATABASE_URL, {})).toThrow(/POSTGRES_PASSWORD/);
  });

  it('runs in production, without demo data, when .env is .env.example plus generated secrets', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-compose-'));
    try {
      const envFile = path.join(dir, '.env');
      const { stderr } = await exec(process.execPath, [path.join(ROOT, 'scripts/generate-secrets.js'), '--write', envFile]);
      expect(stderr).toMatch(/added MASTER_KEY, SESSION_SECRET, POSTGRES_PASSWORD/);
      expect(fs.statSync(envFile).mode & 0o077).toBe(0);
      // What the operator adds by hand, as the README says.
      fs.appendFileSync(envFile, 'BASE_URL=https://id.example.com\nSMTP_URL=smtps://mailer:secret@smtp.example.com:465\n');
      const dotenv = parseDotenv(fs.readFileSync(envFile, 'utf8'));
      // Docker's precedence: the image's ENV < env_file < the service's `environment`.
      const composed = Object.fromEntries(Object.entries(serviceEnv(app)).map(([k, v]) => [k, interpolate(v, dotenv)]));
      const env = { ...stageEnv(runtime), ...dotenv, ...composed };
      const config = loadConfig(env);
      expect(config.isProduction).toBe(true);
      expect(config.demoSeed).toBe(false);
      expect(config.databaseUrl).toBe(`postgres://latchkey:${dotenv.POSTGRES_PASSWORD}@postgres:5432/latchkey`);
      expect(config.masterKey).toBe(dotenv.MASTER_KEY);
      // Even an operator who uncomments NODE_ENV=development in .env stays in production.
      expect(loadConfig({ ...stageEnv(runtime), ...dotenv, NODE_ENV: 'development', DEMO_SEED: 'true', ...composed }).isProduction).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('.env.example never assigns NODE_ENV or DEMO_SEED (a commented line shows the default)', () => {
    const assigned = parseDotenv(read('.env.example'));
    expect(assigned.NODE_ENV).toBeUndefined();
    expect(assigned.DEMO_SEED).toBeUndefined();
    expect(read('.env.example')).toMatch(/^# NODE_ENV=development$/m);
    expect(read('.env.example')).toMatch(/^# DEMO_SEED=true$/m);
  });
});

describe('generate-secrets', () => {
  it('never replaces a secret that is already set', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-secrets-'));
    try {
      const envFile = path.join(dir, '.env');
      fs.writeFileSync(envFile, 'MASTER_KEY=kept-as-it-was\n');
      const { stderr } = await exec(process.execPath, [path.join(ROOT, 'scripts/generate-secrets.js'), '--write', envFile]);
      expect(stderr).toMatch(/added SESSION_SECRET, POSTGRES_PASSWORD/);
      expect(stderr).toMatch(/kept the existing MASTER_KEY/);
      const env = parseDotenv(fs.readFileSync(envFile, 'utf8'));
      expect(env.MASTER_KEY).toBe('kept-as-it-was');
      expect(env.SESSION_SECRET).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const again = await exec(process.execPath, [path.join(ROOT, 'scripts/generate-secrets.js'), '--write', envFile]);
      expect(again.stderr).toMatch(/kept the existing MASTER_KEY, SESSION_SECRET, POSTGRES_PASSWORD/);
      expect(parseDotenv(fs.readFileSync(envFile, 'utf8'))).toEqual(env);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints valid secrets on stdout without --write', async () => {
    const { stdout } = await exec(process.execPath, [path.join(ROOT, 'scripts/generate-secrets.js')]);
    const env = parseDotenv(stdout);
    expect(Object.keys(env)).toEqual(['MASTER_KEY', 'SESSION_SECRET', 'POSTGRES_PASSWORD']);
    expect(() => loadConfig({ ...env, NODE_ENV: 'production', BASE_URL: 'https://id.example.com', SMTP_URL: 'smtp://mail.example.com' })).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------
// The image's start command, run for real.

describe("the image's start command", () => {
  const BASE_URL = 'https://id.ops-test.example';
  const MASTER_KEY = randomBytes(32).toString('base64url');
  let child: ChildProcess;
  let output = '';
  let url: string;
  let port: number;
  let dataDir: string;
  let binDir: string;
  let env: Record<string, string>;
  let database: ReturnType<typeof knex>;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    if (!fs.existsSync(path.join(ROOT, 'dist', 'main.js'))) {
      throw new Error('dist/ is missing: run `npm ci` or `npm run build` before this test (.ci/run builds before testing)');
    }
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-image-data-'));
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // A fresh database, so "no demo data" means an empty platforms table. On Postgres a database of
    // its own (as compose gives); on the embedded kind the image's other mode: no DATABASE_URL,
    // the embedded database in DATA_DIR (the volume).
    let databaseUrl: string | undefined;
    if (process.env.TEST_DATABASE_KIND === 'postgres') {
      const name = `latchkey_image_${randomBytes(6).toString('hex')}`;
      const admin = knex({ client: 'pg', connection: process.env.DATABASE_URL });
      await admin.raw(`CREATE DATABASE ${name}`);
      await admin.destroy();
      const u = new URL(process.env.DATABASE_URL!);
      u.pathname = `/${name}`;
      databaseUrl = u.toString();
      dropDatabase = async () => {
        const a = knex({ client: 'pg', connection: process.env.DATABASE_URL });
        await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await a.destroy();
      };
    }
    const composeEnv = serviceEnv(compose.services.latchkey);
    env = {
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? os.tmpdir(),
      ...stageEnv(runtime),
      NODE_ENV: composeEnv.NODE_ENV,
      BASE_URL,
      MASTER_KEY,
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      SMTP_URL: 'smtp://127.0.0.1:9',
      DATA_DIR: dataDir,
      PORT: String(port),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    };
    const [command, ...args] = execForm(last(runtime, 'CMD')!.args);
    expect(command).toBe('node');
    // WORKDIR /app holds dist/, views/, public/ and bin/: the repository root has the same layout.
    child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const started = Date.now();
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the start command exited with ${child.exitCode}:\n${output}`);
      const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
      if (ready) break;
      if (Date.now() - started > 90_000) throw new Error(`not ready after 90 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    database = knex({
      client: 'pg',
      connection: databaseUrl ?? { host: dataDir, port: 5432, user: 'postgres', database: 'postgres' },
      pool: { min: 0, max: 1 },
    });
    // `latchkey-admin` as the image has it: a link on PATH to bin/latchkey-admin.js.
    binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-image-bin-'));
    fs.symlinkSync(path.join(ROOT, 'bin', 'latchkey-admin.js'), path.join(binDir, 'latchkey-admin'));
  }, 120_000);

  afterAll(async () => {
    await database?.destroy();
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    await dropDatabase?.();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    if (binDir) fs.rmSync(binDir, { recursive: true, force: true });
  }, 60_000);

  it('comes up in production: no demo data, no development outbox, no generated secrets', async () => {
    const platforms = (await database('platforms').count('* as n').first()) as { n: string | number } | undefined;
    expect(Number(platforms?.n)).toBe(0);
    expect((await fetch(`${url}/dev/outbox`)).status).toBe(404);
    expect(fs.readdirSync(dataDir).filter((f) => /secrets|demo-client/.test(f))).toEqual([]);
    expect(output).not.toContain(MASTER_KEY);
    expect(output).not.toMatch(/demo platform/i);
  });

  it("passes the image's HEALTHCHECK command", async () => {
    const command = last(runtime, 'HEALTHCHECK')!.args.replace(/^.*?\bCMD\s+/, '');
    await expect(exec('sh', ['-c', command], { env, cwd: ROOT })).resolves.toBeDefined();
  });

  it('runs `latchkey-admin platform create` and serves the new platform', async () => {
    const { stdout, stderr } = await exec('latchkey-admin', ['platform', 'create', '--name', 'First platform'], {
      env: { ...env, PATH: `${binDir}${path.delimiter}${env.PATH}` },
      cwd: os.tmpdir(), // like `docker compose exec`, from anywhere
    });
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const created = JSON.parse(stdout);
    expect(created).toMatchObject({ platform_guid: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'First platform' });
    const res = await fetch(`${url}/.well-known/openid-configuration?platform_guid=${created.platform_guid}`);
    expect(res.status).toBe(200);
    expect((await res.json()).issuer).toMatch(new RegExp(`^${BASE_URL.replace(/\./g, '\\.')}`));
  });

  it('stops cleanly on SIGTERM (docker stop)', async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);
});
