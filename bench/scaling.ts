// Past one machine: `npx tsx bench/scaling.ts`.
// One fresh Postgres database, then the same load (autocannon, 32 connections in all,
// pipelining 1; full sign-in through 32 flow workers) against:
//   1. one instance            (node dist/main.js, DATABASE_URL straight to Postgres)
//   2. two instances           (the same database; the load split 16 + 16 connections)
//   3. one instance via PgBouncer  (transaction mode; DATABASE_LISTEN_URL straight to Postgres)
//   4. two instances via PgBouncer
// For every run it also records where the cost went: CPU seconds of each instance, of the
// Postgres backends serving the benchmark database, of PgBouncer and of the load generator
// (from /proc), the database's commits (pg_stat_database) and the WAL written (cluster-wide
// LSN delta). Writes bench/results/scaling-latest.md (also printed). The sizing on paper
// built on these figures is docs/scaling.md.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { OidcDriver, ROW_TITLES, type RowName } from './lib/oidc';
import { CONNECTIONS, type PoolRow, type RowSpec } from './lib/load';
import {
  cpuSeconds,
  freePort,
  installSignalHandlers,
  onCleanup,
  startChild,
  stopAll,
  stopChild,
  waitForHttp200,
  type Child,
} from './lib/proc';
import { ADMIN_DB_URL, APP_DIR, freshDatabase, oursUnavailable, ROOT } from './ours';
import { positiveNumber } from './lib/env';

// ---------------------------------------------------------------- knobs

const num = positiveNumber;
const DURATION = num('BENCH_DURATION', 10);
const RUNS = Math.round(num('BENCH_RUNS', 1));
const WARMUP = num('BENCH_WARMUP', 3);
const POOL_MAX = Math.round(num('BENCH_POOL_MAX', 40_000));
const PGB_POOL = Math.round(num('SCALING_PGBOUNCER_POOL', 10));
const RATE_LIMIT_SCALE = process.env.SCALING_RATE_LIMIT_SCALE ?? '0';
const SCALING_ROWS = ['userinfo', 'introspection', 'refresh', 'code', 'signin'] as const;
type Row = (typeof SCALING_ROWS)[number];
const ONLY = (process.env.BENCH_ONLY ?? 'userinfo,introspection,refresh,signin')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const r of ONLY)
  if (!(SCALING_ROWS as readonly string[]).includes(r))
    throw new Error(`BENCH_ONLY: unknown row "${r}" (rows: ${SCALING_ROWS.join(', ')})`);
const SELECTED = SCALING_ROWS.filter((r) => ONLY.includes(r));
const PHASES = ['one', 'two', 'one-pgb', 'two-pgb'] as const;
type Phase = (typeof PHASES)[number];
const ONLY_PHASES = (process.env.SCALING_PHASES ?? PHASES.join(','))
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const p of ONLY_PHASES)
  if (!(PHASES as readonly string[]).includes(p))
    throw new Error(`SCALING_PHASES: unknown phase "${p}" (phases: ${PHASES.join(', ')})`);
const PHASE_TITLES: Record<Phase, string> = {
  one: '1 instance',
  two: '2 instances',
  'one-pgb': '1 instance, PgBouncer',
  'two-pgb': '2 instances, PgBouncer',
};
const OUT = path.join(ROOT, 'bench', 'results', 'scaling-latest.md');
const log = (msg: string) => console.error(msg);

// ---------------------------------------------------------------- the provider (as bench/ours.ts, but with a shared BASE_URL)

const MAIN = path.join(APP_DIR, 'dist', 'main.js');
const CLI = path.join(APP_DIR, 'dist', 'cli', 'main.js');
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

/** The env bench/ours.ts gives the provider, plus what a fleet needs: one BASE_URL (the issuer) for every instance, and the pool's URLs. */
function providerEnv(o: {
  port: number;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string;
  listenUrl?: string;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(o.port),
    BASE_URL: o.baseUrl,
    // 0 (the bench's setting) turns limiting off; a huge scale keeps every counter write but never limits.
    RATE_LIMIT_SCALE: RATE_LIMIT_SCALE,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATA_DIR: o.dataDir, // shared: the generated development MASTER_KEY and SESSION_SECRET live here
    CODE_TTL_SECONDS: '600',
    DATABASE_URL: o.databaseUrl,
  };
  if (o.listenUrl) env.DATABASE_LISTEN_URL = o.listenUrl;
  return env;
}

interface Instance {
  child: Child;
  base: string;
  env: NodeJS.ProcessEnv;
}

async function spawnInstance(
  name: string,
  o: { baseUrl?: string; dataDir: string; databaseUrl: string; listenUrl?: string },
): Promise<Instance> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = providerEnv({ ...o, port, baseUrl: o.baseUrl ?? base });
  const child = startChild(name, process.execPath, [MAIN], { env, cwd: APP_DIR });
  await waitForHttp200(child, `${base}/readyz`, performance.now(), 60_000, 20);
  return { child, base, env };
}

function cli(env: NodeJS.ProcessEnv, args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd: APP_DIR, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err)
        return reject(
          new Error(
            `admin CLI ${args.slice(0, 2).join(' ')} failed: ${err.message.split('\n')[0]}\n${stderr}${stdout}`,
          ),
        );
      try {
        resolve(JSON.parse(stdout.slice(stdout.indexOf('{'), stdout.lastIndexOf('}') + 1)));
      } catch {
        reject(new Error(`admin CLI ${args.slice(0, 2).join(' ')}: no JSON on stdout:\n${stdout}\n${stderr}`));
      }
    });
  });
}

/** Platform, confidential client and one user, through the admin CLI (as bench/ours.ts). */
async function seedTenant(env: NodeJS.ProcessEnv, base: string): Promise<OidcDriver> {
  const platform = await cli(env, ['platform', 'create', '--name', 'Bench']);
  const G = String(platform.platform_guid ?? '');
  if (!G) throw new Error(`platform create: no platform_guid in ${JSON.stringify(platform)}`);
  const client = await cli(env, [
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
  await cli(env, [
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
  return new OidcDriver({
    base,
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
    sessionAuthorizeParams: { login_hint: USER.email },
  });
}

// ---------------------------------------------------------------- PgBouncer (as test/support/pgbouncer.ts, registered for cleanup)

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => fs.existsSync(p));

async function startPgBouncer(serverUrl: string): Promise<{ url: string; child: Child }> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-scaling-pgbouncer-'));
  onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.chmodSync(dir, 0o755); // it refuses to run as root and reads the files as `nobody`
  const password = server.password ? ` password=${decodeURIComponent(server.password)}` : '';
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    `[databases]
* = host=${server.hostname} port=${server.port || 5432} user=${user}${password}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${path.join(dir, 'userlist.txt')}
pool_mode = transaction
default_pool_size = ${PGB_POOL}
max_client_conn = 400
logfile =
`,
    { mode: 0o644 },
  );
  fs.writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  const child = startChild('pgbouncer', PGBOUNCER, [
    ...(asRoot ? ['-u', 'nobody'] : []),
    path.join(dir, 'pgbouncer.ini'),
  ]);
  for (let i = 0; ; i++) {
    if (child.proc.exitCode !== null)
      throw new Error(`pgbouncer exited with ${child.proc.exitCode}:\n${child.output.join('\n')}`);
    const c = new Client({ connectionString: `postgres://${user}@127.0.0.1:${port}/${server.pathname.slice(1)}` });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (i > 100) throw new Error(`pgbouncer not answering on ${port}: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return { url: url.toString(), child };
}

// ---------------------------------------------------------------- where the cost went

interface Probe {
  dbName: string;
  instancePids: number[];
  pgbouncerPid?: number;
  wal?: { client: Client; dbOid: number };
}
interface Snapshot {
  t: number;
  inst: number[];
  backends: Map<number, number>;
  pgb: number;
  self: number;
  commits: number;
  rollbacks: number;
  lsn: string;
  walSyncs: number;
}
interface Cost {
  instCpu: number[];
  pgCpu: number;
  pgbCpu: number;
  selfCpu: number;
  commits: number;
  walBytes: number;
  dbWalBytes?: number;
  writeCommits?: number;
  walSyncs: number;
  seconds: number;
}

async function snapshot(admin: Client, p: Probe): Promise<Snapshot> {
  const pids = (
    await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [p.dbName],
    )
  ).rows.map((r) => r.pid);
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const s = (
    await admin.query<{ c: string; r: string; lsn: string; syncs: string }>(
      'SELECT xact_commit::text AS c, xact_rollback::text AS r, pg_current_wal_flush_lsn()::text AS lsn, (SELECT wal_sync FROM pg_stat_wal)::text AS syncs FROM pg_stat_database WHERE datname = $1',
      [p.dbName],
    )
  ).rows[0];
  const self = process.cpuUsage();
  return {
    t: performance.now(),
    inst: p.instancePids.map((pid) => cpuSeconds(pid) ?? 0),
    backends: new Map(pids.map((pid) => [pid, cpuSeconds(pid) ?? 0])),
    pgb: p.pgbouncerPid ? (cpuSeconds(p.pgbouncerPid) ?? 0) : 0,
    self: (self.user + self.system) / 1e6,
    commits: Number(s.c),
    rollbacks: Number(s.r),
    lsn: s.lsn,
    walSyncs: Number(s.syncs),
  };
}

/**
 * WAL written for this database only (pg_walinspect over the run's LSN range): records whose
 * block references name the database, plus the commit records of their transactions; and the
 * number of those commits (each one a durable, flushed commit with synchronous_commit on).
 */
async function walOfDatabase(
  p: Probe,
  from: string,
  to: string,
): Promise<{ bytes: number; commits: number } | undefined> {
  if (!p.wal) return undefined;
  const like = `%1663/${p.wal.dbOid}/%`;
  const empty = (await p.wal.client.query<{ e: boolean }>('SELECT $1::pg_lsn >= $2::pg_lsn AS e', [from, to])).rows[0]
    .e;
  if (empty) return { bytes: 0, commits: 0 };
  // The range must end at or before the flushed WAL ("cannot accept future end LSN").
  for (let i = 0; i < 50; i++) {
    const ok = (
      await p.wal.client.query<{ ok: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok', [to])
    ).rows[0].ok;
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const r = (
    await p.wal.client.query<{ bytes: string; commits: string }>(
      `WITH r AS (SELECT xid, resource_manager, record_type, record_length, block_ref FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
          ours AS (SELECT DISTINCT xid FROM r WHERE block_ref LIKE $3 AND xid::text <> '0')
     SELECT coalesce(sum(record_length) FILTER (WHERE block_ref LIKE $3 OR (resource_manager = 'Transaction' AND xid IN (SELECT xid FROM ours))), 0)::text AS bytes,
            count(*) FILTER (WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%' AND xid IN (SELECT xid FROM ours))::text AS commits
     FROM r`,
      [from, to, like],
    )
  ).rows[0];
  return { bytes: Number(r.bytes), commits: Number(r.commits) };
}

async function cost(admin: Client, p: Probe, a: Snapshot, b: Snapshot): Promise<Cost> {
  let pg = 0;
  for (const [pid, cpu] of b.backends) pg += cpu - (a.backends.get(pid) ?? 0);
  const wal = (await admin.query<{ d: string }>('SELECT pg_wal_lsn_diff($1, $2)::text AS d', [b.lsn, a.lsn])).rows[0].d;
  let ours: { bytes: number; commits: number } | undefined;
  try {
    ours = await walOfDatabase(p, a.lsn, b.lsn);
  } catch (err) {
    log(`    pg_walinspect failed: ${(err as Error).message}`);
  }
  return {
    dbWalBytes: ours?.bytes,
    writeCommits: ours?.commits,
    instCpu: b.inst.map((x, i) => x - a.inst[i]),
    pgCpu: pg,
    pgbCpu: b.pgb - a.pgb,
    selfCpu: b.self - a.self,
    commits: b.commits - a.commits,
    walBytes: Number(wal),
    walSyncs: b.walSyncs - a.walSyncs,
    seconds: (b.t - a.t) / 1000,
  };
}

// ---------------------------------------------------------------- load (bench/lib/load.ts's engines, split over several bases)

interface Run {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
  seconds: number;
  short: boolean;
  sample?: string;
}

interface SharedPool {
  tokens: string[];
  next: number;
  short: boolean;
  body: (t: string) => string;
  stops: (() => void)[];
}

interface Req {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

function pct(sorted: number[], p: number): number {
  return sorted.length
    ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
    : NaN;
}

/** autocannon against each base with CONNECTIONS / bases.length connections, at the same time; exact percentiles over every response. */
async function acRun(bases: string[], req: Req, seconds: number, pool?: SharedPool): Promise<Run> {
  const conns = Math.round(CONNECTIONS / bases.length);
  const lat: number[] = [];
  let sample: string | undefined;
  const reserve = CONNECTIONS * 2;
  const one = (base: string) =>
    new Promise<{ total: number; secs: number; non2xx: number; errors: number }>((resolve, reject) => {
      const r: Record<string, unknown> = {
        method: req.method,
        path: req.path,
        headers: req.headers,
        body: req.body,
        onResponse: (status: number, body: string) => {
          if ((status < 200 || status > 299) && !sample) sample = `HTTP ${status} ${String(body).slice(0, 300)}`;
        },
      };
      if (pool) {
        r.setupRequest = (q: Record<string, unknown>) => {
          if (pool.tokens.length - pool.next <= reserve && !pool.short) {
            pool.short = true; // nearly used up: stop every client rather than ever reuse a token
            setImmediate(() => pool.stops.forEach((s) => s()));
          }
          return { ...q, body: pool.body(pool.tokens[Math.min(pool.next++, pool.tokens.length - 1)]) };
        };
      }
      const inst = autocannon(
        { url: base, connections: conns, pipelining: 1, duration: seconds, timeout: 10, requests: [r] },
        (err, res) => {
          if (err) return reject(err);
          resolve({
            total: res.requests.total,
            secs: res.duration,
            non2xx: res.non2xx,
            errors: res.errors + res.timeouts,
          });
        },
      ) as unknown as { stop: () => void; on: (ev: string, fn: (...a: unknown[]) => void) => void };
      inst.on('response', (_c, _s, _b, responseTime) => lat.push(responseTime as number));
      pool?.stops.push(() => inst.stop());
    });
  const rs = await Promise.all(bases.map(one));
  const secs = Math.max(...rs.map((r) => r.secs));
  const total = rs.reduce((a, r) => a + r.total, 0);
  lat.sort((a, b) => a - b);
  return {
    rps: total / secs,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    total,
    seconds: secs,
    short: !!pool?.short,
    sample,
  };
}

/** CONNECTIONS flow workers, worker i on flows[i % flows.length]. */
async function flowRun(flows: (() => Promise<void>)[], seconds: number): Promise<Run> {
  const lat: number[] = [];
  let errors = 0;
  let sample: string | undefined;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, i) => {
      const flow = flows[i % flows.length];
      while (performance.now() < deadline) {
        const s = performance.now();
        try {
          await flow();
          lat.push(performance.now() - s);
        } catch (err) {
          errors++;
          if (!sample) sample = (err as Error).message.slice(0, 400);
          if (errors > 1000) break;
        }
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return {
    rps: lat.length / secs,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    non2xx: errors,
    errors: 0,
    total: lat.length + errors,
    seconds: secs,
    short: false,
    sample,
  };
}

interface Measured {
  run: Run;
  cost: Cost;
  pool?: number;
}

interface RowSet {
  specs: Partial<Record<RowName, RowSpec>>;
  flows: (() => Promise<void>)[];
}

async function measure(row: Row, bases: string[], set: RowSet, admin: Client, probe: Probe): Promise<Measured[]> {
  const spec = set.specs[row];
  if (!spec || spec.kind === 'na') throw new Error(`${row}: ${spec && spec.kind === 'na' ? spec.reason : 'no row'}`);
  const timed = async (go: () => Promise<Run>, pool?: number): Promise<Measured> => {
    const a = await snapshot(admin, probe);
    const run = await go();
    await new Promise((r) => setTimeout(r, 600)); // backends report their stats at most every 500 ms when idle
    const b = await snapshot(admin, probe);
    return { run, cost: await cost(admin, probe, a, b), pool };
  };
  const out: Measured[] = [];
  if (spec.kind === 'flow') {
    await flowRun(set.flows, WARMUP);
    for (let i = 0; i < RUNS; i++) out.push(await timed(() => flowRun(set.flows, DURATION)));
    return out;
  }
  if (spec.kind === 'static') {
    const req = { method: spec.method, path: spec.path, headers: spec.headers, body: spec.body };
    await acRun(bases, req, WARMUP);
    for (let i = 0; i < RUNS; i++) out.push(await timed(() => acRun(bases, req, DURATION)));
    return out;
  }
  if (spec.kind !== 'pool') throw new Error(`${row}: unexpected row kind`);
  // Single-use tokens, sized like bench/lib/load.ts: a calibration on a small pool, the
  // warm-up's rate x1.6 for each measured run; minting (untimed) goes through instance 1.
  const p = spec as PoolRow;
  const req = { method: p.method, path: p.path, headers: p.headers };
  const mint = async (n: number): Promise<SharedPool> => {
    const t = performance.now();
    const tokens = await p.mint(n);
    log(`    minted ${tokens.length} single-use tokens in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    return { tokens, next: 0, short: false, body: p.body, stops: [] };
  };
  const calib = await acRun(bases, req, WARMUP, await mint(CONNECTIONS * 8));
  const warm = await acRun(
    bases,
    req,
    WARMUP,
    await mint(Math.min(POOL_MAX, Math.ceil(calib.rps * WARMUP * 1.3) + CONNECTIONS * 4)),
  );
  let rate = Math.max(calib.rps, warm.rps);
  let factor = 1.6;
  for (let i = 0; i < RUNS; i++) {
    const size = Math.min(POOL_MAX, Math.ceil(rate * DURATION * factor) + CONNECTIONS * 4);
    const pool = await mint(size);
    const m = await timed(() => acRun(bases, req, DURATION, pool), size);
    out.push(m);
    rate = Math.max(rate, m.run.rps);
    if (m.run.short) factor *= 1.5;
  }
  return out;
}

// ---------------------------------------------------------------- orchestration

interface Cell {
  phase: Phase;
  row: Row;
  runs: Measured[];
  error?: string;
}

const medianRun = (runs: Measured[]) => [...runs].sort((a, b) => a.run.rps - b.run.rps)[runs.length >> 1];

async function rowsFor(drivers: OidcDriver[]): Promise<RowSet> {
  const specs = await drivers[0].rows();
  const flows: (() => Promise<void>)[] = [];
  for (const d of drivers) {
    const s = d === drivers[0] ? specs : await d.rows(); // sanity checks through this instance too
    for (const r of SELECTED) {
      const x = s[r];
      if (x?.kind === 'na') throw new Error(`${r} through ${d.c.base}: ${x.reason}`);
    }
    flows.push(() => d.fullSignIn().then(() => undefined));
  }
  return { specs, flows };
}

async function main() {
  installSignalHandlers();
  const why = oursUnavailable();
  if (why) throw new Error(why);
  const started = new Date();
  const loadBefore = os.loadavg();
  const phases = PHASES.filter((p) => ONLY_PHASES.includes(p));
  log(
    `scaling: phases ${phases.join(', ')}; rows ${SELECTED.join(', ')}; warm-up ${WARMUP} s, ${RUNS} × ${DURATION} s per cell`,
  );

  const admin = new Client({ connectionString: ADMIN_DB_URL });
  await admin.connect();
  onCleanup(() => admin.end());
  const pgInfo = (
    await admin.query<{ v: string; sc: string; sb: string; mc: string; fs: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc, current_setting('shared_buffers') AS sb, current_setting('max_connections') AS mc, current_setting('fsync') AS fs",
    )
  ).rows[0];

  const databaseUrl = await freshDatabase('scaling');
  const dbName = new URL(databaseUrl).pathname.slice(1);
  // WAL per database: pg_walinspect (PostgreSQL 15+ contrib) in the benchmark database itself.
  let wal: Probe['wal'];
  try {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    onCleanup(() => client.end());
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const dbOid = Number(
      (await client.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = current_database()')).rows[0]
        .oid,
    );
    wal = { client, dbOid };
  } catch (err) {
    log(`pg_walinspect unavailable (${(err as Error).message}): WAL only as the cluster-wide LSN delta`);
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-scaling-'));
  onCleanup(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const cells: Cell[] = [];

  // Migrate and seed once, with a first instance whose URL becomes every instance's BASE_URL (the issuer).
  log('starting the seeding instance (migrations, tenant)…');
  const seed = await spawnInstance('latchkey-seed', { dataDir, databaseUrl });
  const baseUrl = seed.base;
  const driver = await seedTenant(seed.env, seed.base);
  await stopChild(seed.child, 10_000);

  const run = async (phase: Phase, instances: Instance[], pgb?: Child) => {
    const drivers = instances.map((i) => new OidcDriver({ ...driver.c, base: i.base }));
    log(`[${PHASE_TITLES[phase]}] building rows…`);
    const set = await rowsFor(drivers);
    const probe: Probe = { dbName, instancePids: instances.map((i) => i.child.pid), pgbouncerPid: pgb?.pid, wal };
    for (const row of SELECTED) {
      log(`[${PHASE_TITLES[phase]}] ${ROW_TITLES[row]}…`);
      try {
        const runs = await measure(
          row,
          instances.map((i) => i.base),
          set,
          admin,
          probe,
        );
        const m = medianRun(runs);
        log(
          `    ${m.run.rps.toFixed(0)} req/s, p50 ${m.run.p50} ms, p99 ${m.run.p99} ms, non-2xx ${m.run.non2xx}, errors ${m.run.errors}`,
        );
        cells.push({ phase, row, runs });
      } catch (err) {
        log(`    failed: ${(err as Error).message}`);
        cells.push({ phase, row, runs: [], error: (err as Error).message.split('\n').slice(0, 3).join(' | ') });
      }
    }
  };

  for (const via of ['direct', 'pgbouncer'] as const) {
    const one: Phase = via === 'direct' ? 'one' : 'one-pgb';
    const two: Phase = via === 'direct' ? 'two' : 'two-pgb';
    if (!phases.includes(one) && !phases.includes(two)) continue;
    let pool = databaseUrl;
    let listenUrl: string | undefined;
    let pgb: Child | undefined;
    if (via === 'pgbouncer') {
      log(`starting PgBouncer (transaction mode, default_pool_size ${PGB_POOL})…`);
      const b = await startPgBouncer(databaseUrl);
      pool = b.url;
      listenUrl = databaseUrl;
      pgb = b.child;
    }
    const a = await spawnInstance(`latchkey-${via}-1`, { baseUrl, dataDir, databaseUrl: pool, listenUrl });
    if (phases.includes(one)) await run(one, [a], pgb);
    if (phases.includes(two)) {
      const b = await spawnInstance(`latchkey-${via}-2`, { baseUrl, dataDir, databaseUrl: pool, listenUrl });
      await run(two, [a, b], pgb);
      await stopChild(b.child, 10_000);
    }
    await stopChild(a.child, 10_000);
    if (pgb) await stopChild(pgb, 5_000);
  }

  const sizes = (
    await admin.query<{ name: string; bytes: string }>(
      `SELECT pg_size_pretty(pg_database_size($1)) AS name, pg_database_size($1)::text AS bytes`,
      [dbName],
    )
  ).rows[0];
  const md = report({ started, loadBefore, loadAfter: os.loadavg(), cells, phases, pgInfo, dbSize: sizes.name });
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, md);
  console.log(md);
  log(`written ${path.relative(process.cwd(), OUT)}`);
}

// ---------------------------------------------------------------- report

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

function environment(): string {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
    if (dirty) commit += ' (src/ has uncommitted changes by others at the time)';
  } catch {
    /* not a checkout */
  }
  return `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}, commit ${commit}`;
}

function report(o: {
  started: Date;
  loadBefore: number[];
  loadAfter: number[];
  cells: Cell[];
  phases: Phase[];
  pgInfo: { v: string; sc: string; sb: string; mc: string; fs: string };
  dbSize: string;
}): string {
  const L: string[] = [];
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  L.push(`# Latchkey scaling benchmark — ${o.started.toISOString()}`, '');
  L.push(
    `\`npx tsx bench/scaling.ts\`: one fresh Postgres database; the same load for every phase — autocannon, ${CONNECTIONS} connections in all (split ${CONNECTIONS / 2} + ${CONNECTIONS / 2} over two instances), pipelining 1; full sign-in through ${CONNECTIONS} flow workers (split the same way). Warm-up ${WARMUP} s, then ${RUNS === 1 ? 'one run' : `the median of ${RUNS} runs`} of ${DURATION} s per cell. ${RATE_LIMIT_SCALE === '0' ? 'Rate limiting off (`RATE_LIMIT_SCALE=0`)' : `Rate limiting on with \`RATE_LIMIT_SCALE=${RATE_LIMIT_SCALE}\` (counters written in Postgres, limits out of reach)`}, \`LOG_LEVEL=warn\`, \`DB_POOL_MAX\` 10 per instance (default). PgBouncer: Debian's \`${PGBOUNCER ?? 'pgbouncer'}\`, \`pool_mode = transaction\`, \`default_pool_size = ${PGB_POOL}\`; instances get \`DATABASE_URL\` through it and \`DATABASE_LISTEN_URL\` straight to Postgres (which also turns off named prepared statements).`,
    '',
  );
  L.push(
    `Environment: ${environment()}; PostgreSQL ${o.pgInfo.v} on the same machine (\`synchronous_commit=${o.pgInfo.sc}\`, \`fsync=${o.pgInfo.fs}\`, \`shared_buffers=${o.pgInfo.sb}\`, \`max_connections=${o.pgInfo.mc}\`); benchmark database ${o.dbSize} at the end. Load average (1/5/15 min) ${la(o.loadBefore)} at the start, ${la(o.loadAfter)} at the end.`,
    '',
  );
  L.push(
    `> **Read this first.** This machine has ${os.cpus().length} cores, shared with other engineers' work during the run. The instances, Postgres, PgBouncer and the load generator all run on them, so a second instance adds no CPU: the 2-instance ratio measures contention (and whether one Node.js process was the limit), not scale-out. On separate machines, the per-request CPU columns below are what adds up — that is what docs/scaling.md sizes with.`,
    '',
  );

  const base = (row: Row) => o.cells.find((c) => c.phase === 'one' && c.row === row && c.runs.length);
  L.push(
    '| row | setup | req/s | vs 1 instance | p50 ms | p99 ms | non-2xx / errors | Latchkey CPU ms/req | Postgres backends CPU ms/req | PgBouncer CPU ms/req | load generator CPU ms/req | commits/req | writing commits/req | WAL flushes/req (whole cluster) | WAL bytes/req (this database) | WAL bytes/req (whole cluster) | CPU busy (all measured, of 2 cores) |',
  );
  L.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of SELECTED) {
    for (const phase of o.phases) {
      const c = o.cells.find((x) => x.phase === phase && x.row === row);
      if (!c) continue;
      if (!c.runs.length) {
        L.push(`| ${ROW_TITLES[row]} | ${PHASE_TITLES[phase]} | failed: ${c.error ?? ''} |||||||||||||||`);
        continue;
      }
      const m = medianRun(c.runs);
      const b = base(row);
      const ratio = b ? m.run.rps / medianRun(b.runs).run.rps : NaN;
      const n = m.run.total || 1;
      const inst = m.cost.instCpu.reduce((a, x) => a + x, 0);
      const busy = inst + m.cost.pgCpu + m.cost.pgbCpu + m.cost.selfCpu;
      const perInst =
        m.cost.instCpu.length > 1 ? ` (${m.cost.instCpu.map((x) => f2((x * 1000) / n)).join(' + ')})` : '';
      L.push(
        `| ${ROW_TITLES[row]} | ${PHASE_TITLES[phase]} | ${f0(m.run.rps)}${m.run.short ? '*' : ''} | ${b ? `${f2(ratio)}×` : 'n/a'} | ${f1(m.run.p50)} | ${f1(m.run.p99)} | ${m.run.non2xx} / ${m.run.errors} | ${f2((inst * 1000) / n)}${perInst} | ${f2((m.cost.pgCpu * 1000) / n)} | ${phase.endsWith('pgb') ? f2((m.cost.pgbCpu * 1000) / n) : '–'} | ${f2((m.cost.selfCpu * 1000) / n)} | ${f2(m.cost.commits / n)} | ${m.cost.writeCommits === undefined ? 'n/a' : f2(m.cost.writeCommits / n)} | ${f2(m.cost.walSyncs / n)} | ${m.cost.dbWalBytes === undefined ? 'n/a' : f0(m.cost.dbWalBytes / n)} | ${f0(m.cost.walBytes / n)} | ${f2(busy / m.cost.seconds)} |`,
      );
    }
  }
  L.push('');
  const samples = o.cells.flatMap((c) =>
    c.runs.filter((m) => m.run.sample).map((m) => `- ${ROW_TITLES[c.row]}, ${PHASE_TITLES[c.phase]}: ${m.run.sample}`),
  );
  if (samples.length) L.push('First failure seen per cell:', '', ...samples, '');
  if (RUNS > 1) {
    L.push('Per-run req/s:', '');
    for (const c of o.cells)
      if (c.runs.length)
        L.push(`- ${ROW_TITLES[c.row]}, ${PHASE_TITLES[c.phase]}: ${c.runs.map((m) => f0(m.run.rps)).join(' / ')}`);
    L.push('');
  }
  L.push('## Method', '');
  L.push(
    "- req/s = completed requests (full sign-in: completed flows) ÷ the run's actual duration; p50/p99 are exact percentiles over every response time autocannon reported (1 ms resolution) or every flow latency, across both clients. `*`: a single-use pool ran out and the run stopped early (never reusing a token).",
  );
  L.push(
    '- userinfo and introspection use one access token obtained through the real flow; refresh_token grant and code exchange take a fresh pre-issued token per request from one pool shared by both clients (minted untimed through instance 1, sized like `bench/lib/load.ts`); full sign-in is a whole fresh-browser flow (authorize → sign-in page → sign-in POST with argon2id m=19 MiB t=2 → code → token).',
  );
  L.push(
    '- Every instance runs with the same `BASE_URL` (the issuer, as behind a load balancer) and the same `DATA_DIR` (the generated development `MASTER_KEY`/`SESSION_SECRET`), so a token or session from one is valid on the other; each client talks to one instance directly (no proxy in the path).',
  );
  L.push(
    '- CPU ms/req: CPU time (user+system, `/proc/<pid>/stat`) over the run ÷ requests. "Postgres backends" sums the backends connected to the benchmark database (`pg_stat_activity`), so it excludes the WAL writer, checkpointer and any backend that exited mid-run. "load generator" is this process (autocannon clients and flow workers). commits/req from `pg_stat_database.xact_commit` of the benchmark database (read-only statements outside a transaction count as commits too). "writing commits" and "WAL bytes (this database)" come from `pg_walinspect` over the run\'s LSN range: the commit records of transactions that wrote to the benchmark database, durable or asynchronous alike (the WAL does not say which). "WAL flushes" is the `pg_stat_wal.wal_sync` delta of the whole cluster: the fsyncs of the WAL, one per durable commit or fewer (group commit shares one among concurrent commits), plus the WAL writer\'s background flushes of asynchronous commits (at most one per `wal_writer_delay`) and anything else the shared server did and the bytes of the records naming its relations plus those commit records (full-page images included). "whole cluster" is the `pg_current_wal_flush_lsn()` delta, which includes other databases\' writes on this shared Postgres. "CPU busy" = the sum of those CPU times ÷ wall time: near 2.0 means the two cores were saturated by what we measured; above it is impossible, far below it with low req/s means something else (other engineers\' processes, I/O waits on commit) held the run back.',
  );
  L.push(
    '- The machine is shared and was busy: compare figures within this report only, and read absolute numbers as a floor.',
  );
  L.push('');
  return L.join('\n');
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => stopAll().finally(() => process.exit()));
