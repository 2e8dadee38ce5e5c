// BENCH_DATA=admin: the admin REST API's lists on a large platform — user search by email and the
// audit log — at 1M users and 10M audit events (scale 1; bench/admin-data.ts loads them with SQL).
// Each row is one GET with a global admin token (made with the admin CLI's `token create`), measured
// by autocannon at modest concurrency (BENCH_ADMIN_CONNECTIONS, 4 by default) against the target
// p99 < 100 ms; beside it, the plan Postgres chose for the row's statement: the exact SQL the provider
// runs, built by its own repository function (dist/repositories/…), under EXPLAIN (ANALYZE, BUFFERS).
// Writes bench/results/<timestamp>-admin.md (and .json) and bench/results/admin-latest.md.
import os from 'node:os';
import path from 'node:path';
import { knex, type Knex } from 'knex';
import { adminCounts, loadAdminData } from './admin-data';
import { tableSizes, withClient, type LoadReport, type TableSize } from './large-data';
import { sizeTable } from './large-run';
import { f0, f1, writeModeReport } from './lib/compare';
import { environmentLine } from './lib/env';
import { request } from './lib/http';
import { measureRow, type RowResult } from './lib/load';
import { stopAll } from './lib/proc';
import { waitForQuiet, type QuietReport } from './lib/quiet';
import { adminCli, APP_DIR, ROOT, startBareOurs } from './ours';

export interface AdminOptions {
  scale: number;
  connections: number;
  warmup: number;
  duration: number;
  runs: number;
  loadOnly: boolean;
  quietMaxSeconds: number;
  log: (msg: string) => void;
}

/** The target: p99 under 100 ms for every row. */
const P99_MS = 100;
const API = '/admin/api/v1';
const PAGE = 50;

interface AdminRow {
  group: 'users' | 'audit';
  title: string;
  path: string;
  /** Runs the provider's own repository function for this row (its statement is what is explained). */
  query: (db: Knex) => Promise<unknown>;
}

interface Measured {
  row: Omit<AdminRow, 'query'>;
  items: number;
  result?: RowResult;
  error?: string;
  plan: string[];
}

// The provider's repositories, from its build (what the API runs; the filters as the services pass them).
const repo = (name: string) => require(path.join(APP_DIR, 'dist', 'repositories', `${name}.repository.js`));
const listUsers = (db: Knex, platformId: string, p: { email?: string; after?: { at: string; id: string } }) =>
  repo('user-admin').listPage(db, platformId, { ...p, limit: PAGE + 1 }) as Promise<unknown>;
const listAudit = (db: Knex, filter: Record<string, unknown>) =>
  repo('audit-event').list(db, filter, PAGE + 1) as Promise<unknown>;

export async function runAdminMode(o: AdminOptions): Promise<void> {
  const started = new Date();
  const loadBefore = os.loadavg()[0];
  const { log } = o;
  const n = adminCounts(o.scale);
  log(`Latchkey bench, admin mode: ${n.users} users and ${n.auditEvents} audit events on one platform`);
  const ours = await startBareOurs({
    tag: 'admin',
    // No demo platform; no purge (the log spans a year: it stays whole while measured).
    extraEnv: { DEMO_SEED: 'false', PURGE_INTERVAL_SECONDS: '604800', AUDIT_RETENTION_DAYS: '3650' },
  });
  const platform = await adminCli(ours.env, ['platform', 'create', '--name', 'Admin bench']);
  const G = String(platform.platform_guid);
  const client = await adminCli(ours.env, [
    ...['client', 'create', '--platform', G, '--name', 'Web', '--type', 'confidential'],
    ...['--redirect-uri', 'https://app.example.com/cb', '--scopes', 'openid profile email'],
  ]);
  // A second client whose only event is its creation, at the start of the log.
  const rare = await adminCli(ours.env, [
    ...['client', 'create', '--platform', G, '--name', 'Rarely used', '--type', 'confidential'],
    ...['--redirect-uri', 'https://rare.example.com/cb', '--scopes', 'openid'],
  ]);
  const token = String((await adminCli(ours.env, ['token', 'create', '--name', 'bench'])).token ?? '');
  if (!token.startsWith('lk_admin_')) throw new Error('token create: no lk_admin_ token in its output');
  log('phase 1: loading users and audit events with SQL…');
  const load = await loadAdminData(ours.databaseUrl, o.scale, { id: G, clientId: String(client.client_id) }, log);
  log(`  loaded in ${load.seconds.toFixed(1)} s: ${JSON.stringify(load.counts)}`);
  const sizes = await tableSizes(ours.databaseUrl, ['users', 'audit_events']);

  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  const get = async (p: string) => {
    const r = await request(ours.base + p, { headers });
    if (r.status !== 200) throw new Error(`GET ${p}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
    return JSON.parse(r.body) as { items: Record<string, unknown>[]; next_cursor: string | null };
  };
  const rows = await adminRows(
    ours.databaseUrl,
    G,
    { busy: String(client.client_id), rare: String(rare.client_id) },
    get,
  );

  const measured: Measured[] = [];
  let quiet: QuietReport | undefined;
  const db = knex({ client: 'pg', connection: ours.databaseUrl, pool: { min: 1, max: 1 } });
  try {
    if (!o.loadOnly) {
      quiet = await waitForQuiet(ours.databaseUrl, { maxSeconds: o.quietMaxSeconds, log });
      log(`  ${quiet.quiet ? 'quiet' : 'still busy'} after ${quiet.seconds.toFixed(0)} s`);
    }
    for (const row of rows) {
      log(`row: ${row.title} — ${row.path}`);
      const m: Measured = { row: { group: row.group, title: row.title, path: row.path }, items: 0, plan: [] };
      measured.push(m);
      try {
        m.items = (await get(row.path)).items.length;
        m.plan = await explain(db, ours.databaseUrl, row.query);
        log(`  plan: ${planSummary(m.plan)}`);
        if (!o.loadOnly) {
          m.result = await measureRow(
            ours.base,
            { kind: 'static', method: 'GET', path: row.path, headers },
            { warmup: o.warmup, duration: o.duration, runs: o.runs, poolMax: 0, connections: o.connections, log },
          );
          log(`  ${f0(m.result.rps)} req/s, p50 ${f1(m.result.p50)} ms, p99 ${f1(m.result.p99)} ms`);
        }
      } catch (err) {
        m.error = (err as Error).message.slice(0, 400);
        log(`  failed: ${m.error}`);
      }
    }
  } finally {
    await db.destroy();
    await stopAll();
  }

  const md = report({
    started,
    o,
    load,
    sizes,
    measured,
    quiet,
    loadAvg: { before: loadBefore, after: os.loadavg()[0] },
  });
  const stamp = writeModeReport('admin', started, md, {
    started,
    settings: { ...o, log: undefined },
    load,
    sizes,
    measured,
    quiet,
  });
  log(`\nwritten: bench/results/${stamp}-admin.md and bench/results/admin-latest.md`);
}

/** The rows: their paths, and the values they need read from the loaded data and from the API itself. */
async function adminRows(
  databaseUrl: string,
  G: string,
  clients: { busy: string; rare: string },
  get: (p: string) => Promise<{ items: Record<string, unknown>[]; next_cursor: string | null }>,
): Promise<AdminRow[]> {
  // One user from the middle of the alphabet: an exact address to search for, a subject for the audit log.
  const one = await withClient(databaseUrl, async (c) => {
    const r = await c.query(
      `SELECT id, email_normalized FROM users WHERE platform_id = $1 AND email_normalized >= 'm' ORDER BY email_normalized LIMIT 1`,
      [G],
    );
    return { id: String(r.rows[0].id), email: String(r.rows[0].email_normalized) };
  });
  const users = `${API}/platforms/${G}/users`;
  const audit = `${API}/platforms/${G}/audit-events`;
  const first = await get(users);
  const after = first.next_cursor ?? undefined;
  const afterKey = after
    ? (JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as { at: string; id: string })
    : undefined;
  // A cursor half a year back: the next_cursor of a page that ends there (the API's own cursor).
  const halfYear = new Date(Date.now() - 182 * 86_400_000);
  const mid = await get(`${audit}?until=${encodeURIComponent(halfYear.toISOString())}&limit=1`);
  const midId = String(mid.items[0]?.id ?? '1');
  const midCursor = mid.next_cursor ?? '';
  const day = { since: new Date(halfYear.getTime() - 86_400_000), until: halfYear };
  const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;
  const search = (title: string, email: string): AdminRow => ({
    group: 'users',
    title,
    path: `${users}${q({ email })}`,
    query: (db) => listUsers(db, G, { email }),
  });
  const auditRow = (title: string, params: Record<string, string>, filter: Record<string, unknown>): AdminRow => ({
    group: 'audit',
    title,
    path: `${audit}${Object.keys(params).length ? q(params) : ''}`,
    query: (db) => listAudit(db, { platformId: G, ...filter }),
  });
  return [
    { group: 'users', title: 'first page, no filter', path: users, query: (db) => listUsers(db, G, {}) },
    {
      group: 'users',
      title: 'second page (cursor)',
      path: `${users}${q({ cursor: after ?? '' })}`,
      query: (db) => listUsers(db, G, { after: afterKey }),
    },
    search('email: a common first name ("emma", 1 in 16)', 'emma'),
    search('email: first and last name ("emma.rossi", 1 in 224)', 'emma.rossi'),
    search('email: name and number prefix ("emma.rossi.12")', 'emma.rossi.12'),
    search('email: a domain ("example.org", 1 in 3)', 'example.org'),
    search('email: one exact address', one.email),
    search('email: no match ("nobody")', 'nobody'),
    auditRow('first page', {}, {}),
    {
      group: 'audit',
      title: 'first page, every platform (global)',
      path: `${API}/audit-events`,
      query: (db) => listAudit(db, {}),
    },
    auditRow('later page (cursor half a year back)', { cursor: midCursor }, { before: midId }),
    auditRow('by user (subject)', { subject: one.id }, { subject: one.id }),
    auditRow('by kind, common (sign_in.failed, 8 %)', { kind: 'sign_in.failed' }, { kind: 'sign_in.failed' }),
    auditRow('by kind, rare (user.disabled, 1 %)', { kind: 'user.disabled' }, { kind: 'user.disabled' }),
    auditRow('by kind, none (user.deleted)', { kind: 'user.deleted' }, { kind: 'user.deleted' }),
    auditRow('by client (6 % of the events)', { client_id: clients.busy }, { clientId: clients.busy }),
    auditRow('by client, one event (its creation)', { client_id: clients.rare }, { clientId: clients.rare }),
    auditRow('by actor type (admin_token, 4 %)', { actor_type: 'admin_token' }, { actorType: 'admin_token' }),
    auditRow('by actor type, none (anonymous)', { actor_type: 'anonymous' }, { actorType: 'anonymous' }),
    auditRow(
      'one day half a year back (since/until)',
      { since: day.since.toISOString(), until: day.until.toISOString() },
      { since: day.since, until: day.until },
    ),
  ];
}

/** The statement the row's repository function runs, under EXPLAIN (ANALYZE, BUFFERS). */
async function explain(db: Knex, databaseUrl: string, query: (db: Knex) => Promise<unknown>): Promise<string[]> {
  const seen: { sql: string; bindings: unknown[] }[] = [];
  const listener = (q: { sql: string; bindings?: unknown[] }) => seen.push({ sql: q.sql, bindings: q.bindings ?? [] });
  db.on('query', listener);
  try {
    await query(db);
  } finally {
    db.removeListener('query', listener);
  }
  const last = seen.at(-1);
  if (!last) return ['(no statement seen)'];
  return withClient(databaseUrl, async (c) => {
    const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${last.sql}`, last.bindings);
    return [last.sql, ...r.rows.map((x) => String(x['QUERY PLAN']))];
  });
}

/** The scans of a plan and its execution time, on one line. */
function planSummary(plan: string[]): string {
  const scans = plan
    .slice(1)
    .map((l) =>
      /(Seq Scan|Index Scan Backward|Index Only Scan|Index Scan|Bitmap Index Scan|Bitmap Heap Scan)( using| on)? (\S+)/.exec(
        l,
      ),
    )
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => `${m[1]} ${m[3]}`);
  const time = plan.find((l) => l.startsWith('Execution Time'));
  return `${[...new Set(scans)].join(', ') || 'no scan'}${time ? `; ${time.replace('Execution Time: ', 'executed in ')}` : ''}`;
}

function report(r: {
  started: Date;
  o: AdminOptions;
  load: LoadReport;
  sizes: TableSize[];
  measured: Measured[];
  quiet: QuietReport | undefined;
  loadAvg: { before: number; after: number };
}): string {
  const { o } = r;
  const n = adminCounts(o.scale);
  const L: string[] = [];
  L.push(`# Latchkey benchmark, admin mode — ${r.started.toISOString()}`, '');
  L.push(
    `\`BENCH_DATA=admin\`, \`BENCH_DATA_SCALE=${o.scale}\`: one platform with **${f0(n.users)} users** and an audit log of **${f0(n.auditEvents)} events**. Each row is one \`GET\` of the admin REST API with a global admin token (\`Authorization: Bearer lk_admin_…\`), default page size (${PAGE}); autocannon, **${o.connections} connections**, ${o.warmup} s warm-up, median of ${o.runs} × ${o.duration} s. Target: **p99 < ${P99_MS} ms** per row. The plan is Postgres's for the statement the provider's repository function builds for that row, run once more under \`EXPLAIN (ANALYZE, BUFFERS)\`.`,
    '',
  );
  L.push(
    `Environment: ${environmentLine(ROOT)}; 1-min load average ${r.loadAvg.before.toFixed(2)} at start, ${r.loadAvg.after.toFixed(2)} at the end.${r.quiet ? ` Before the rows: ${r.quiet.quiet ? 'quiet' : '**still busy**'} after ${f0(r.quiet.seconds)} s (CPUs ${f0(r.quiet.idle * 100)} % idle).` : ''}`,
    '',
  );
  if (o.loadOnly) L.push('_Rows not measured (`BENCH_DATA_LOAD_ONLY=1`): load and plans only._', '');
  for (const group of ['users', 'audit'] as const) {
    L.push(group === 'users' ? '## Users: list and search by email' : '## Audit log', '');
    L.push('| row | items | req/s | p50 ms | p99 ms | p99 < 100 ms | plan |', '|---|---:|---:|---:|---:|---|---|');
    for (const m of r.measured.filter((x) => x.row.group === group)) {
      const x = m.result;
      L.push(
        `| ${m.row.title} | ${m.error ? '—' : m.items} | ${x ? f0(x.rps) : '—'} | ${x ? f1(x.p50) : '—'} | ${x ? f1(x.p99) : '—'} | ${x ? (x.p99 < P99_MS && !x.non2xx && !x.errors ? 'yes' : '**no**') : m.error ? `failed: ${m.error.replace(/\|/g, '\\|')}` : '—'} | ${planSummary(m.plan)} |`,
      );
    }
    L.push('');
  }
  L.push('## Load', '');
  L.push(
    `One platform and its client through the admin CLI, then with SQL in **${f1(r.load.seconds)} s**: ${Object.entries(
      r.load.counts,
    )
      .map(([t, c]) => `${t} ${f0(c)}`)
      .join(
        ', ',
      )} (the large-data mode's user rows; events a year deep in id order, 55 % successful sign-ins, 8 % failed ones, consents, logouts, password and second-factor events, 6 % client-credentials grants of the one client, 4 % admin changes, 1 % of no platform). Indexes no foreign key needs dropped for the load and rebuilt after, then \`VACUUM (ANALYZE)\` and \`CHECKPOINT\`.`,
    '',
  );
  L.push('| step | rows | seconds |', '|---|---:|---:|');
  for (const s of r.load.steps) L.push(`| ${s.step} | ${s.rows ? f0(s.rows) : ''} | ${f1(s.seconds)} |`);
  L.push('');
  sizeTable(L, r.sizes);
  L.push('', '## Plans', '');
  for (const m of r.measured) {
    L.push(
      `<details><summary>${m.row.group}: ${m.row.title} — <code>${m.row.path.replace(/^\/admin\/api\/v1/, '')}</code></summary>`,
      '',
    );
    L.push('```', ...m.plan, '```', '', '</details>', '');
  }
  return L.join('\n');
}
