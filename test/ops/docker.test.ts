import { execFile } from 'node:child_process';
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config';
import { all, execForm, last, parseDockerfile, stageEnv } from '../support/docker-image';
import { NODE_LTS } from '../support/node-releases';

/**
 * No Docker engine here: the Dockerfile and docker-compose.yml are read and checked for what can
 * be checked by reading them; test/ops/docker-image.test.ts carries out the Dockerfile's lines
 * and starts the image's command.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const exec = promisify(execFile);

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
    return kind === '-' ? (arg ?? '') : '';
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
      expect({
        from: stage.from,
        ltsSince: Date.parse(line.lts) <= now,
        beforeEol: now < Date.parse(line.eol),
      }).toEqual({ from: stage.from, ltsSince: true, beforeEol: true });
    }
    expect(new Set(dockerfile.stages.map((s) => s.from)).size).toBe(1);
  });

  it("labels the image with package.json's version, CHANGELOG.md's newest release", () => {
    const labels = Object.fromEntries(
      all(runtime, 'LABEL').flatMap((l) => [...l.args.matchAll(/([\w.-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]])),
    );
    expect(labels['org.opencontainers.image.version']).toBe(pkg.version);
    const newest = /^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/m.exec(read('CHANGELOG.md'))?.[1];
    expect(newest).toBe(pkg.version);
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
    const volumes = all(runtime, 'VOLUME').flatMap((v) =>
      v.args.startsWith('[') ? execForm(v.args) : v.args.split(/\s+/),
    );
    expect(volumes).toContain(env.DATA_DIR);
    // The directory exists and belongs to the user before VOLUME copies it into a new volume.
    expect(
      all(runtime, 'RUN')
        .map((r) => r.args)
        .join('\n'),
    ).toMatch(/chown node:node \/app\/data/);
  });

  it("caps V8's heap as `npm start` does, through NODE_OPTIONS so an operator can change it", () => {
    const start = JSON.parse(read('package.json')).scripts.start as string;
    const flag = /node (--max-old-space-size=\d+) dist\/main\.js/.exec(start)?.[1];
    expect(flag).toBeDefined();
    expect(stageEnv(runtime).NODE_OPTIONS).toBe(flag);
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
    const runs = all(runtime, 'RUN')
      .map((r) => r.args)
      .join('\n');
    expect(runs).toContain('ln -s /app/bin/latchkey-admin.js /usr/local/bin/latchkey-admin');
    expect(all(runtime, 'COPY').map((c) => c.args)).toContain('bin ./bin');
    expect(fs.statSync(path.join(ROOT, 'bin/latchkey-admin.js')).mode & 0o111).toBeTruthy();
    expect(read('bin/latchkey-admin.js').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('copies only files that exist and that .dockerignore lets through', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
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
      const { stderr } = await exec(process.execPath, [
        path.join(ROOT, 'scripts/generate-secrets.js'),
        '--write',
        envFile,
      ]);
      expect(stderr).toMatch(/added MASTER_KEY, SESSION_SECRET, POSTGRES_PASSWORD/);
      expect(fs.statSync(envFile).mode & 0o077).toBe(0);
      // What the operator adds by hand, as the README says.
      fs.appendFileSync(
        envFile,
        'BASE_URL=https://id.example.com\nSMTP_URL=smtps://mailer:secret@smtp.example.com:465\n',
      );
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
      expect(
        loadConfig({ ...stageEnv(runtime), ...dotenv, NODE_ENV: 'development', DEMO_SEED: 'true', ...composed })
          .isProduction,
      ).toBe(true);
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
      const { stderr } = await exec(process.execPath, [
        path.join(ROOT, 'scripts/generate-secrets.js'),
        '--write',
        envFile,
      ]);
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
    expect(() =>
      loadConfig({
        ...env,
        NODE_ENV: 'production',
        BASE_URL: 'https://id.example.com',
        SMTP_URL: 'smtp://mail.example.com',
      }),
    ).not.toThrow();
  });
});
