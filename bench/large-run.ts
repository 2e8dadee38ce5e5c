// BENCH_DATA=large: one invocation loads the large platform with SQL (bench/large-data.ts) behind
// one provider process, starts a second one on an empty database, measures the selected rows on
// both with their runs alternating (so the machine's drift weighs on both sides of each ratio),
// then runs the provider's purge of the expired rows under load. Writes
// bench/results/<timestamp>-large.md (and .json) and bench/results/large-latest.md; never touches
// latest.md (that is the normal run's).
import os from 'node:os';
import { Client } from 'pg';
import {
  checkForeignKeys,
  loadLargeData,
  mib,
  platformCounts,
  runProviderPurge,
  tableSizes,
  type LoadReport,
  type PurgeResult,
  type TableSize,
} from './large-data';
import {
  CONNECTIONS,
  failedCell,
  measureAlternating,
  runFor,
  type Cell,
  type RowSpec,
  type RunResult,
} from './lib/load';
import { ROW_TITLES, type RowName } from './lib/oidc';
import { rssMB, stopAll } from './lib/proc';
import { adminCli, oursRateLimitNote, ROOT, startOurs, type OursTarget } from './ours';
import { environmentLine } from './lib/env';
import { waitForQuiet, type QuietReport } from './lib/quiet';
import { comparisonTable, comparisonTargets, f0, f1, writeModeReport } from './lib/compare';

export interface LargeOptions {
  scale: number;
  rows: RowName[];
  warmup: number;
  duration: number;
  runs: number;
  poolMax: number;
  /** The row kept under load while the purge runs, and the length of each measured window. */
  purgeRow: RowName;
  purgeWindow: number;
  /** Load and purge only: skip measuring the rows (empty and large); for timing the load at full scale. */
  loadOnly?: boolean;
  /** Check the foreign keys the load skipped (default: only when scale ≤ 0.1). */
  checkForeignKeys?: boolean;
  /** Skip the purge step. */
  skipPurge?: boolean;
  /** Longest wait, in seconds, for an idle machine and Postgres before the rows. */
  quietMaxSeconds: number;
  log: (msg: string) => void;
}

interface PurgeUnderLoad {
  row: RowName;
  before?: RunResult;
  during: RunResult[];
  purge: PurgeResult;
  error?: string;
}

export async function runLargeMode(o: LargeOptions): Promise<void> {
  const started = new Date();
  const loadBefore = os.loadavg()[0];
  const { log } = o;
  const n = platformCounts(o.scale);
  log(
    `Latchkey bench, large-data mode: scale ${o.scale} (per platform: ${n.users} users, ${n.refreshTokens} refresh tokens in ${n.families} families, ${n.accessTokens} access tokens, ${n.consents} consents; two platforms), rows: ${o.rows.join(', ')}`,
  );

  // The purge job stays out of the way until the purge step runs it explicitly.
  const ours = await startOurs({ extraEnv: { PURGE_INTERVAL_SECONDS: '604800' }, tag: 'large' });
  log(`  Latchkey ready in ${ours.coldStartFreshPgMs.toFixed(0)} ms`);
  const problems: string[] = [];
  const opts = { warmup: o.warmup, duration: o.duration, runs: o.runs, poolMax: o.poolMax, log };

  log('phase 1: loading the large platform with SQL…');
  const big = await adminCli(ours.env, ['platform', 'create', '--name', 'Big']);
  const bigGuid = String(big.platform_guid ?? '');
  const ids = await resolveIds(ours, bigGuid);
  const load = await loadLargeData(ours.databaseUrl, o.scale, ids, log);
  log(
    `  loaded in ${load.seconds.toFixed(1)} s; expired: ${load.expired.accessTokens} access tokens, ${load.expired.refreshTokens} refresh tokens`,
  );
  // The check scans every loaded table: by default only at validation scales (≤ 0.1).
  const tc = performance.now();
  const check = o.checkForeignKeys ?? o.scale <= 0.1;
  const orphans = check ? await checkForeignKeys(ours.databaseUrl) : [];
  const checkSeconds = check ? (performance.now() - tc) / 1000 : NaN;
  log(
    check
      ? `  foreign keys checked in ${checkSeconds.toFixed(1)} s: ${orphans.length ? orphans.join('; ') : 'all hold'}`
      : '  foreign-key check skipped (BENCH_DATA_CHECK=1 runs it)',
  );
  if (orphans.length) problems.push(`**load**: ${orphans.join('; ')}`);
  const sizes = await tableSizes(ours.databaseUrl);
  for (const s of sizes)
    log(
      `  ${s.table}: ${s.rows} rows, total ${mib(s.totalBytes)} MiB (table ${mib(s.tableBytes)}, indexes ${mib(s.indexBytes)})`,
    );

  log('phase 2: the rows, an empty database against the large platform, runs alternating');
  // The static rows' access token was issued before the load; a fresh one keeps it from expiring under a long load.
  const largeRows = ours.driver ? await ours.driver.rows() : ours.rows;
  const empty: Partial<Record<RowName, Cell>> = {};
  const large: Partial<Record<RowName, Cell>> = {};
  let quiet: QuietReport | undefined;
  if (!o.loadOnly) {
    // The same build on a database of its own that holds only the benchmark's platform.
    const control = await startOurs({ extraEnv: { PURGE_INTERVAL_SECONDS: '604800' }, tag: 'large-empty' });
    try {
      quiet = await waitForQuiet(ours.databaseUrl, { maxSeconds: o.quietMaxSeconds, log });
      log(
        `  ${quiet.quiet ? 'quiet' : 'still busy'} after ${quiet.seconds.toFixed(0)} s (CPU idle ${(quiet.idle * 100).toFixed(0)} %, autovacuum workers ${quiet.autovacuumWorkers}, dirty ${quiet.dirtyMiB.toFixed(0)} MiB)`,
      );
      for (const row of o.rows) {
        log(`row: ${ROW_TITLES[row]}`);
        [empty[row], large[row]] = await measureAlternating(
          ROW_TITLES[row],
          [
            { label: 'empty database', base: control.base, spec: control.rows[row] },
            { label: 'large platform', base: ours.base, spec: largeRows[row] },
          ],
          opts,
          (side, err) => {
            problems.push(`**${side.label} / ${ROW_TITLES[row]}**: ${(err as Error).message.slice(0, 600)}`);
            return failedCell(err);
          },
        );
      }
    } finally {
      await control.stop();
    }
  }
  const rss = rssMB(ours.pid);

  log(`phase 3: purge of the expired rows under load (${ROW_TITLES[o.purgeRow]})`);
  const purge: PurgeUnderLoad = o.skipPurge
    ? { row: o.purgeRow, during: [], purge: { ms: 0, removed: {} }, error: 'skipped (BENCH_PURGE=0)' }
    : await purgeUnderLoad(ours, largeRows[o.purgeRow], o, log);
  const after = await tableSizes(ours.databaseUrl);

  await ours.stop();
  await stopAll();

  const md = report({
    started,
    o,
    empty,
    large,
    load,
    sizes,
    after,
    purge,
    orphans,
    checkSeconds,
    problems,
    rss,
    quiet,
    loadAvg: { before: loadBefore, after: os.loadavg()[0] },
  });
  const stamp = writeModeReport('large', started, md, {
    started,
    settings: { ...o, log: undefined, connections: CONNECTIONS },
    perPlatform: n,
    empty,
    large,
    load,
    sizes,
    after,
    purge,
    orphans,
    problems,
    rss,
  });
  log(`\nwritten: bench/results/${stamp}-large.md and bench/results/large-latest.md`);
}

async function resolveIds(ours: OursTarget, bigGuid: string) {
  const c = new Client({ connectionString: ours.databaseUrl });
  await c.connect();
  try {
    const one = async (sql: string, args: unknown[], what: string) => {
      const r = await c.query(sql, args);
      if (r.rows.length !== 1) throw new Error(`large-data: could not resolve ${what} (${r.rows.length} rows)`);
      return String(r.rows[0].id);
    };
    const benchId = await one(
      `SELECT id FROM platforms WHERE id::text = $1`,
      [ours.platformGuid],
      'the benchmark platform',
    );
    const clientId = await one(
      `SELECT id FROM clients WHERE platform_id = $1 AND id::text = $2`,
      [benchId, ours.clientId],
      'the benchmark client',
    );
    const bigId = await one(`SELECT id FROM platforms WHERE id::text = $1`, [bigGuid], 'the Big platform');
    return { bench: { id: benchId, clientId }, big: { id: bigId } };
  } finally {
    await c.end();
  }
}

/**
 * One window of load before the purge, then back-to-back windows while the purge runs (at least
 * one). Single-use rows get a fresh pool before each window (rate × window × 1.6).
 */
async function purgeUnderLoad(
  ours: OursTarget,
  spec: RowSpec | undefined,
  o: LargeOptions,
  log: (m: string) => void,
): Promise<PurgeUnderLoad> {
  const empty: PurgeResult = { ms: 0, removed: {} };
  if (!spec || spec.kind === 'na' || spec.kind === 'flow')
    return {
      row: o.purgeRow,
      during: [],
      purge: empty,
      error: `row ${o.purgeRow} cannot run in windows (${spec?.kind ?? 'missing'})`,
    };
  let rate = 0;
  const window = async () => {
    const tokens =
      spec.kind === 'pool'
        ? await spec.mint(Math.min(o.poolMax, Math.ceil(Math.max(rate, 200) * o.purgeWindow * 1.6) + CONNECTIONS * 4))
        : undefined;
    const r = await runFor(ours.base, spec, o.purgeWindow, tokens);
    rate = Math.max(rate, r.rps);
    log(
      `    window: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, non-2xx ${r.non2xx}${r.short ? ' (pool ran out)' : ''}`,
    );
    return r;
  };
  // Warm the row up first (its figure is not kept), then one window without the purge.
  await runFor(
    ours.base,
    spec,
    Math.min(o.warmup, o.purgeWindow),
    spec.kind === 'pool' ? await spec.mint(CONNECTIONS * 8) : undefined,
  );
  log('    before the purge:');
  const before = await window();
  let done = false;
  log('    purge started');
  const purgeP = runProviderPurge(ours.databaseUrl).then((r) => {
    done = true;
    log(
      `    purge finished in ${(r.ms / 1000).toFixed(1)} s: ${JSON.stringify(r.removed)}${r.error ? ` error: ${r.error}` : ''}`,
    );
    return r;
  });
  const during: RunResult[] = [];
  do during.push(await window());
  while (!done);
  return { row: o.purgeRow, before, during, purge: await purgeP };
}

// ------------------------------------------------------------------ report

const sides = (
  o: LargeOptions,
  r: { empty: Partial<Record<RowName, Cell>>; large: Partial<Record<RowName, Cell>> },
) => ({
  rows: o.rows,
  a: { name: 'empty', cells: r.empty },
  b: { name: 'large', cells: r.large },
});

function report(r: {
  started: Date;
  o: LargeOptions;
  empty: Partial<Record<RowName, Cell>>;
  large: Partial<Record<RowName, Cell>>;
  load: LoadReport;
  sizes: TableSize[];
  after: TableSize[];
  purge: PurgeUnderLoad;
  orphans: string[];
  checkSeconds: number;
  problems: string[];
  rss: number | null;
  quiet: QuietReport | undefined;
  loadAvg: { before: number; after: number };
}): string {
  const { o } = r;
  const n = platformCounts(o.scale);
  const L: string[] = [];
  L.push(`# Latchkey benchmark, large-data mode — ${r.started.toISOString()}`, '');
  L.push(
    `\`BENCH_DATA=large\`, \`BENCH_DATA_SCALE=${o.scale}\`: ${CONNECTIONS} connections, ${o.warmup} s warm-up, median of ${o.runs} × ${o.duration} s per row. Two provider processes of the same build: one in front of the large platform's database (after the SQL load), one in front of a database holding only the benchmark's platform; each row warms both up, then their measured runs alternate (empty, large, empty, …), so the machine's drift weighs on both figures of a ratio alike. ${oursRateLimitNote()}, \`synchronous_commit\` on for the provider.`,
    '',
  );
  L.push(
    `Environment: ${envLine()}; 1-min load average ${r.loadAvg.before.toFixed(2)} at start, ${r.loadAvg.after.toFixed(2)} at the end.`,
    '',
  );

  const q = r.quiet;
  if (q)
    L.push(
      `Before the rows the harness waited (up to ${o.quietMaxSeconds} s, \`BENCH_QUIET_MAX\`) for the machine's CPUs to be at least 80 % idle over 5 s, no autovacuum worker and under 64 MiB of dirty pages: ${q.quiet ? 'quiet' : '**still busy**'} after ${f0(q.seconds)} s (CPU idle ${f0(q.idle * 100)} %, ${q.autovacuumWorkers} autovacuum workers, ${f0(q.dirtyMiB)} MiB dirty).`,
      '',
    );
  if (o.loadOnly) L.push('_Rows not measured (`BENCH_DATA_LOAD_ONLY=1`): load, sizes and purge only._', '');
  L.push('## Rows: empty database vs large platform', '');
  comparisonTable(L, sides(o, r));

  L.push('## Load', '');
  L.push(
    `Two platforms (the benchmark platform and a second "Big" one, created with the admin CLI), each with ${f0(n.users)} users, ${f0(n.consents)} consents, ${f0(n.families)} refresh-token families holding ${f0(n.refreshTokens)} refresh tokens (4 per family: the live one and 3 rotated), ${f0(n.accessTokens)} access-token rows and ${n.clients} clients (the benchmark platform's first is its real client). Generated with \`INSERT … SELECT … generate_series\` on two connections (access tokens on one, the rest on the other), FK triggers skipped during the load (\`session_replication_role = replica\`; the rows are consistent by construction, checked after), then \`VACUUM (ANALYZE)\` and \`CHECKPOINT\`.`,
    '',
  );
  L.push(
    `Total load time **${f1(r.load.seconds)} s** (machine shared with other work). ${Number.isFinite(r.checkSeconds) ? `Foreign keys checked afterwards in ${f1(r.checkSeconds)} s: ${r.orphans.length ? r.orphans.join('; ') : 'no orphan rows'}.` : 'Foreign-key check not run at this scale (`BENCH_DATA_CHECK=1` runs it).'}`,
    '',
  );
  L.push('| step | rows | seconds |', '|---|---:|---:|');
  for (const s of r.load.steps) L.push(`| ${s.step} | ${s.rows ? f0(s.rows) : ''} | ${f1(s.seconds)} |`);
  L.push('');
  L.push(
    `Already expired after the load: ${f0(r.load.expired.accessTokens)} access tokens and ${f0(r.load.expired.refreshTokens)} refresh tokens (${f0(r.load.expired.accessTokens + r.load.expired.refreshTokens)} rows).`,
    '',
  );

  L.push('## Table and index sizes after the load', '');
  sizeTable(L, r.sizes);
  L.push('');

  L.push('## Purge of the expired rows under load', '');
  const p = r.purge;
  if (p.error) L.push(`Not run: ${p.error}`, '');
  else {
    const removed =
      Object.entries(p.purge.removed)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${f0(v)}`)
        .join(', ') || 'nothing';
    const total = Object.values(p.purge.removed).reduce((a, b) => a + b, 0);
    L.push(
      `The provider's own purge (\`createMaintenance(...).purgeExpired()\` from \`dist/services/maintenance.service.js\`, what \`src/jobs/purge.job.ts\` runs on every instance: batches of 5,000 rows, \`FOR UPDATE SKIP LOCKED\`, one short transaction each), run from the harness on its own connection while ${CONNECTIONS} connections keep ${ROW_TITLES[p.row]} under load in back-to-back ${o.purgeWindow}-s windows.`,
      '',
    );
    L.push(
      `Purge: **${f1(p.purge.ms / 1000)} s**, ${f0(total)} rows removed (${removed})${p.purge.error ? `; **error**: ${p.purge.error}` : ''}.`,
      '',
    );
    const worst = p.during.reduce((a, w) => Math.max(a, w.p99), 0);
    L.push('| window | req/s | p50 ms | p99 ms | non-2xx |', '|---|---:|---:|---:|---:|');
    if (p.before)
      L.push(
        `| before the purge | ${f0(p.before.rps)} | ${f1(p.before.p50)} | ${f1(p.before.p99)} | ${p.before.non2xx + p.before.errors} |`,
      );
    p.during.forEach((w, i) =>
      L.push(`| during the purge ${i + 1} | ${f0(w.rps)} | ${f1(w.p50)} | ${f1(w.p99)} | ${w.non2xx + w.errors} |`),
    );
    L.push('');
    L.push(
      `Worst p99 during the purge: **${f1(worst)} ms** (target < 100 ms: ${worst < 100 ? 'met' : '**missed**'}).${p.during.length === 1 ? ' The purge ended within the first window, so that window also covers time after it.' : ' The last window also covers time after the purge ended.'}`,
      '',
    );
    L.push('Sizes after the purge (dead tuples stay in the files until autovacuum reuses them):', '');
    sizeTable(L, r.after);
    L.push('');
  }

  L.push('## Targets', '', '| target | goal | measured | ok |', '|---|---|---|---|');
  if (!o.loadOnly) comparisonTargets(L, sides(o, r), 'large vs empty');
  if (!p.error) {
    const worst = p.during.reduce((a, w) => Math.max(a, w.p99), 0);
    L.push(
      `| ${ROW_TITLES[p.row]} p99 during the purge | < 100 ms | ${f1(worst)} ms | ${worst < 100 ? 'yes' : '**no**'} |`,
    );
  }
  L.push(`| RSS after the large rows | (informative) | ${r.rss === null ? 'n/a' : r.rss.toFixed(1) + ' MB'} | — |`, '');

  if (r.problems.length) {
    L.push('## Problems', '');
    for (const x of r.problems) L.push(`- ${x.replace(/\n/g, '\n  ')}`);
    L.push('');
  }
  return L.join('\n');
}

export function sizeTable(L: string[], sizes: TableSize[]) {
  L.push(
    '| table | rows | total (pg_total_relation_size) MiB | table (pg_relation_size) MiB | indexes (pg_indexes_size) MiB | per index MiB |',
  );
  L.push('|---|---:|---:|---:|---:|---|');
  for (const s of sizes)
    L.push(
      `| ${s.table} | ${f0(s.rows)} | ${mib(s.totalBytes)} | ${mib(s.tableBytes)} | ${mib(s.indexBytes)} | ${s.indexes.map((i) => `${i.name} ${mib(i.bytes)}`).join('; ')} |`,
    );
  const sum = (k: 'totalBytes' | 'tableBytes' | 'indexBytes') => sizes.reduce((a, s) => a + s[k], 0);
  L.push(
    `| **all** | ${f0(sizes.reduce((a, s) => a + s.rows, 0))} | ${mib(sum('totalBytes'))} | ${mib(sum('tableBytes'))} | ${mib(sum('indexBytes'))} | |`,
  );
}

function envLine(): string {
  return environmentLine(ROOT);
}
