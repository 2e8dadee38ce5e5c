import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import knex from 'knex';
import { parse as parseYaml } from 'yaml';
import { assembleImage, execForm, last, parseDockerfile, type AssembledStage } from '../support/docker-image';
import { freePort } from '../support/provider-process';

/**
 * The image as the Dockerfile builds it: its stages carried out line by line into directories
 * that stand for the images' roots (both `npm ci`s for real, from this lockfile), then the
 * runtime stage's CMD started there in production, with nothing from the checkout on its path.
 * A file the runtime stage forgets to copy fails here: the process cannot start, or a page
 * cannot render.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const exec = promisify(execFile);

const dockerfile = parseDockerfile(read('Dockerfile'));
const runtimeStage = dockerfile.stages.at(-1)!;
const compose = parseYaml(read('docker-compose.yml'));
const pkg = JSON.parse(read('package.json'));

const BASE_URL = 'https://id.image-test.example';
const REDIRECT_URI = 'https://app.image-test.example/callback';

/** What the proxy in front of the container would send: https, and the browser's cookies. */
function httpsBrowser(url: string, language = 'en') {
  const jar = new Map<string, string>();
  const local = (location: string) =>
    location.startsWith(BASE_URL) ? url + location.slice(BASE_URL.length) : new URL(location, url).toString();
  async function request(method: string, target: string, body?: URLSearchParams) {
    const res = await fetch(local(target), {
      method,
      redirect: 'manual',
      headers: {
        'x-forwarded-proto': 'https',
        'accept-language': language,
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded', origin: BASE_URL } : {}),
      },
      body,
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  }
  /** Follows redirects on the provider; stops at a page or at a redirect elsewhere. */
  async function follow(res: Response): Promise<{ status: number; html: string; location?: string }> {
    for (let i = 0; i < 10 && res.status >= 300 && res.status < 400; i++) {
      const location = res.headers.get('location')!;
      if (!location.startsWith('/') && !location.startsWith(BASE_URL))
        return { status: res.status, html: '', location };
      res = await request('GET', location);
    }
    return { status: res.status, html: await res.text() };
  }
  return {
    get: async (target: string) => follow(await request('GET', target)),
    /** Submits the page's form whose action ends with `suffix`: its hidden fields and `fields`. */
    async submit(html: string, suffix: string, fields: Record<string, string>) {
      const forms = [...html.matchAll(/<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)];
      const form = forms.find((f) => f[1].replace(/&amp;/g, '&').split('?')[0].endsWith(suffix));
      if (!form) throw new Error(`no form ending in ${suffix}:\n${html.slice(0, 2000)}`);
      const body = new URLSearchParams();
      for (const [, name, value] of form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
        body.set(name, value.replace(/&amp;/g, '&'));
      for (const [k, v] of Object.entries(fields)) body.set(k, v);
      return follow(await request('POST', form[1].replace(/&amp;/g, '&'), body));
    },
  };
}

describe('the image the Dockerfile builds', () => {
  const MASTER_KEY = randomBytes(32).toString('base64url');
  let scratch: string;
  let runtime: AssembledStage;
  let child: ChildProcess;
  let output = '';
  let url: string;
  let env: Record<string, string>;
  let database: ReturnType<typeof knex>;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-image-'));
    const nodePath = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
    // The build's RUN commands see this machine's environment (its registry and certificate
    // settings, as a build host's would), without the test run's own variables.
    const { NODE_ENV: _, DATABASE_URL: __, TEST_DATABASE_URL: ___, ...buildEnv } = process.env;
    ({ runtime } = await assembleImage(dockerfile, {
      context: ROOT,
      into: scratch,
      env: { ...(buildEnv as Record<string, string>), PATH: nodePath },
    }));
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
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = {
      // `latchkey-admin` is linked into the image's /usr/local/bin, which is on its PATH.
      PATH: `${runtime.binDir}${path.delimiter}${nodePath}`,
      HOME: process.env.HOME ?? os.tmpdir(),
      ...runtime.env,
      NODE_ENV: compose.services.latchkey.environment.NODE_ENV,
      BASE_URL,
      MASTER_KEY,
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      SMTP_URL: 'smtp://127.0.0.1:9',
      TRUST_PROXY: 'loopback',
      PORT: String(port),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    };
    const [command, ...args] = execForm(last(runtimeStage, 'CMD')!.args);
    expect(command).toBe('node');
    child = spawn(process.execPath, args, { cwd: runtime.workdir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const started = Date.now();
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the image's CMD exited with ${child.exitCode}:\n${output}`);
      if (
        await fetch(`${url}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        )
      )
        break;
      if (Date.now() - started > 90_000) throw new Error(`not ready after 90 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    database = knex({
      client: 'pg',
      connection: databaseUrl ?? { host: env.DATA_DIR, port: 5432, user: 'postgres', database: 'postgres' },
      pool: { min: 0, max: 1 },
    });
  }, 300_000);

  afterAll(async () => {
    await database?.destroy();
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    await dropDatabase?.();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  const admin = async (...args: string[]) => {
    // Like `docker compose exec latchkey latchkey-admin …`, from anywhere in the container.
    const { stdout, stderr } = await exec('latchkey-admin', args, { env, cwd: os.tmpdir() });
    expect(stderr).toBe('');
    return JSON.parse(stdout);
  };

  it('holds only what its own lines put there: no sources, no dev dependencies', () => {
    const top = fs.readdirSync(runtime.workdir).sort();
    expect(top).not.toContain('src');
    expect(top).not.toContain('tsconfig.json');
    expect(fs.existsSync(path.join(runtime.workdir, 'node_modules', 'jest'))).toBe(false);
    expect(fs.existsSync(path.join(runtime.workdir, 'node_modules', 'argon2'))).toBe(true);
  });

  it('comes up in production: no demo data, no development outbox, no generated secrets', async () => {
    const platforms = (await database('platforms').count('* as n').first()) as { n: string | number } | undefined;
    expect(Number(platforms?.n)).toBe(0);
    expect((await fetch(`${url}/dev/outbox`)).status).toBe(404);
    expect(fs.readdirSync(env.DATA_DIR).filter((f) => /secrets|demo-client/.test(f))).toEqual([]);
    expect(output).not.toContain(MASTER_KEY);
    expect(output).not.toMatch(/demo platform/i);
  });

  it('reports the version of package.json on /healthz', async () => {
    const res = await fetch(`${url}/healthz`);
    expect(await res.json()).toEqual({ status: 'ok', version: pkg.version });
  });

  it("passes the image's HEALTHCHECK command", async () => {
    const command = last(runtimeStage, 'HEALTHCHECK')!.args.replace(/^.*?\bCMD\s+/, '');
    await expect(exec('sh', ['-c', command], { env, cwd: runtime.workdir })).resolves.toBeDefined();
  });

  describe('with a platform and a client made by `latchkey-admin`', () => {
    let platform: { platform_guid: string };
    let clientId: string;

    beforeAll(async () => {
      platform = await admin('platform', 'create', '--name', 'First platform');
      const client = await admin(
        'client',
        'create',
        '--platform',
        platform.platform_guid,
        '--name',
        'Image app',
        '--type',
        'confidential',
        '--redirect-uri',
        REDIRECT_URI,
        '--scopes',
        'openid profile email',
      );
      clientId = client.client_id;
    }, 60_000);

    const authorize = (extra: Record<string, string> = {}) =>
      `/oauth/authorize?${new URLSearchParams({ platform_guid: platform.platform_guid, response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, scope: 'openid profile email', state: 'image-1', ...extra })}`;

    it('serves the new platform under BASE_URL', async () => {
      const res = await fetch(`${url}/.well-known/openid-configuration?platform_guid=${platform.platform_guid}`);
      expect(res.status).toBe(200);
      expect((await res.json()).issuer.startsWith(BASE_URL)).toBe(true);
    });

    it('signs a person up through the pages (argon2 from the image), to a code at the client', async () => {
      const browser = httpsBrowser(url);
      const signUp = await browser.get(authorize({ action: 'register' }));
      expect(signUp.status).toBe(200);
      expect(signUp.html).toContain('<title>Create account');
      const consent = await browser.submit(signUp.html, '/signup', {
        email: 'first.user@example.com',
        given_name: 'First',
        family_name: 'User',
        birthdate: '1990-05-17',
        phone_number: '',
        password: 'correct horse battery staple',
      });
      expect(consent.status).toBe(200);
      const done = await browser.submit(consent.html, '/consent', { decision: 'allow' });
      expect(done.location).toMatch(new RegExp(`^${REDIRECT_URI}\\?code=[^&]+&state=image-1`));
      const user = await database('users').where({ email: 'first.user@example.com' }).first();
      expect(user.password_hash).toMatch(/^\$argon2id\$/);
    });

    it('renders a page in German, with its stylesheet', async () => {
      const page = await httpsBrowser(url, 'de-DE,de;q=0.9').get(authorize());
      expect(page.status).toBe(200);
      expect(page.html).toMatch(/<html lang="de"/);
      expect(page.html).toContain('Anmelden');
      const stylesheet = /<link rel="stylesheet" href="([^"]+)"/.exec(page.html)?.[1];
      expect(stylesheet).toBeDefined();
      const css = await fetch(new URL(stylesheet!, url));
      expect({ stylesheet, status: css.status }).toEqual({ stylesheet, status: 200 });
    });
  });

  it('stops cleanly on SIGTERM (docker stop)', async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);
});
