// Latchkey benchmark orchestrator: `npx tsx bench/run.ts` (npm run bench).
// Starts the ceilings (bare node:http, bare Express 5), the peer (oidc-provider v9) and
// Latchkey (dist/main.js on a fresh Postgres database), measures every row against every
// target with the same load, then cold start and RSS, and writes a markdown report to
// bench/results/<timestamp>.md and bench/results/latest.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CEILING_GET, CEILING_POST, CEILING_SHAPE, startCeilings } from './ceilings';
import { CONNECTIONS, failedCell, measureAlternating, type Cell, type RowResult, type RowSpec } from './lib/load';
import { ROW_TITLES, ROWS, type RowName, type Target } from './lib/oidc';
import { installSignalHandlers, rssMB, stopAll } from './lib/proc';
import {
  APP_DIR,
  measureColdStarts,
  oursRateLimitNote,
  oursUnavailable,
  ROOT,
  startOurs,
  type ColdStart,
  type OursTarget,
} from './ours';
import { startPeer } from './peer';
import { runLargeMode } from './large-run';
import { runTenantsMode, TENANT_ROWS } from './tenants-run';
import { runAdminMode } from './admin-run';
import { environmentLine, positiveNumber } from './lib/env';

const num = positiveNumber;

const DURATION = num('BENCH_DURATION', 10);
const RUNS = Math.round(num('BENCH_RUNS', 3));
const WARMUP = num('BENCH_WARMUP', 3);
const POOL_MAX = Math.round(num('BENCH_POOL_MAX', 40_000));
const COLD_RUNS = Math.round(num('BENCH_COLD_RUNS', Math.min(RUNS, 3)));
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const r of ONLY)
  if (!(ROWS as readonly string[]).includes(r))
    throw new Error(`BENCH_ONLY: unknown row "${r}" (rows: ${ROWS.join(', ')})`);
const SELECTED: RowName[] = ONLY.length ? ROWS.filter((r) => ONLY.includes(r)) : [...ROWS];
const SKIP_COLD = process.env.BENCH_COLD === '0';
// BENCH_DATA=large: the large-data mode (bench/large-run.ts) instead of the side-by-side run;
// tenants: 10,000 platforms against one (bench/tenants-run.ts); admin: the admin API's user search
// and audit log at 1M users and 10M events (bench/admin-run.ts).
const DATA = process.env.BENCH_DATA ?? '';
if (DATA && !['large', 'tenants', 'admin'].includes(DATA))
  throw new Error(`BENCH_DATA must be "large", "tenants", "admin" or unset, got "${DATA}"`);
const PURGE_ROW = (process.env.BENCH_PURGE_ROW || 'userinfo') as RowName;
if (!(ROWS as readonly string[]).includes(PURGE_ROW)) throw new Error(`BENCH_PURGE_ROW: unknown row "${PURGE_ROW}"`);

const log = (msg: string) => console.error(msg);

const isRes = (c: Cell | undefined): c is RowResult => !!c && !('na' in c);

async function main() {
  installSignalHandlers();
  const why = DATA ? oursUnavailable() : null;
  if (why) throw new Error(`BENCH_DATA=${DATA} measures Latchkey only: ${why}`);
  if (DATA === 'tenants') {
    const rows = TENANT_ROWS.filter((r) => !ONLY.length || ONLY.includes(r));
    if (!rows.length) throw new Error(`BENCH_DATA=tenants measures ${TENANT_ROWS.join(', ')}: BENCH_ONLY names none`);
    return runTenantsMode({
      scale: num('BENCH_DATA_SCALE', 1),
      rows,
      spread: process.env.BENCH_TENANTS_SPREAD ? Math.round(num('BENCH_TENANTS_SPREAD', 1)) : undefined,
      warmup: WARMUP,
      duration: DURATION,
      runs: RUNS,
      poolMax: POOL_MAX,
      quietMaxSeconds: num('BENCH_QUIET_MAX', 600),
      log,
    });
  }
  if (DATA === 'admin') {
    return runAdminMode({
      scale: num('BENCH_DATA_SCALE', 1),
      connections: Math.round(num('BENCH_ADMIN_CONNECTIONS', 4)),
      warmup: WARMUP,
      duration: DURATION,
      runs: RUNS,
      loadOnly: process.env.BENCH_DATA_LOAD_ONLY === '1',
      quietMaxSeconds: num('BENCH_QUIET_MAX', 600),
      log,
    });
  }
  if (DATA === 'large') {
    return runLargeMode({
      scale: num('BENCH_DATA_SCALE', 1),
      rows: SELECTED,
      warmup: WARMUP,
      duration: DURATION,
      runs: RUNS,
      poolMax: POOL_MAX,
      purgeRow: PURGE_ROW,
      purgeWindow: num('BENCH_PURGE_WINDOW', 5),
      loadOnly: process.env.BENCH_DATA_LOAD_ONLY === '1',
      skipPurge: process.env.BENCH_PURGE === '0',
      checkForeignKeys: process.env.BENCH_DATA_CHECK === undefined ? undefined : process.env.BENCH_DATA_CHECK === '1',
      quietMaxSeconds: num('BENCH_QUIET_MAX', 600),
      log,
    });
  }
  const started = new Date();
  const loadBefore = os.loadavg()[0];
  log(
    `Latchkey bench: ${CONNECTIONS} connections, warm-up ${WARMUP} s, ${RUNS} × ${DURATION} s per row, rows: ${SELECTED.join(', ')}`,
  );

  const results: Record<string, Partial<Record<RowName, Cell>>> = { ours: {}, peer: {}, express: {}, node: {} };
  const problems: string[] = [];
  const rss: { label: string; mb: number | null }[] = [];

  // ---- start everything
  log('starting ceilings (bare node:http, bare Express 5)…');
  const ceilings = await startCeilings();
  log('starting peer (oidc-provider)…');
  let peer: Target | undefined;
  try {
    peer = await startPeer();
  } catch (err) {
    problems.push(`**peer**: ${(err as Error).message}`);
    log(`peer failed: ${(err as Error).message}`);
  }
  let ours: OursTarget | undefined;
  let oursSkip = oursUnavailable();
  if (oursSkip) {
    log(`SKIPPING our rows: ${oursSkip}`);
  } else {
    log('starting Latchkey (dist/main.js, fresh Postgres database)…');
    try {
      ours = await startOurs();
      log(`  ready in ${ours.coldStartFreshPgMs.toFixed(0)} ms`);
    } catch (err) {
      oursSkip = `setup failed: ${(err as Error).message}`;
      log(`Latchkey setup failed: ${(err as Error).message}`);
    }
  }

  const notes: string[] = [];
  for (const t of [ours, peer]) {
    if (!t) continue;
    for (const n of t.notes ?? []) notes.push(`**${t.label}**: ${n}`);
    for (const row of SELECTED) {
      const spec = t.rows[row];
      if (spec?.kind === 'na') problems.push(`**${t.label} / ${ROW_TITLES[row]}**: ${spec.reason}`);
    }
  }

  const opts = { warmup: WARMUP, duration: DURATION, runs: RUNS, poolMax: POOL_MAX, log };
  const failed = (t: Target, row: RowName, err: unknown): Cell => {
    problems.push(`**${t.label} / ${ROW_TITLES[row]}**: ${(err as Error).message.slice(0, 600)}`);
    log(`    failed: ${(err as Error).message}`);
    return failedCell(err);
  };
  const measureSides = (row: RowName, targets: { t: Target; spec: RowSpec | undefined }[]) =>
    measureAlternating(
      ROW_TITLES[row],
      targets.map(({ t, spec }) => ({ label: t.label, base: t.base, spec, target: t })),
      opts,
      (side, err) => failed(side.target, row, err),
    );

  // ---- ceilings: once per request shape (GET, POST with a small form), reused per row
  const shapes = new Set(SELECTED.map((r) => CEILING_SHAPE[r]).filter(Boolean));
  for (const c of ceilings) {
    const byShape: Record<string, Cell> = {};
    for (const shape of shapes) {
      log(`ceiling ${c.label}, ${shape} shape…`);
      [byShape[shape!]] = await measureSides(shape === 'GET' ? 'discovery' : 'refresh', [
        { t: c, spec: shape === 'GET' ? CEILING_GET : CEILING_POST },
      ]);
    }
    for (const row of SELECTED) {
      const shape = CEILING_SHAPE[row];
      results[c.name][row] = shape ? byShape[shape] : { na: 'multi-request flow' };
    }
  }

  // ---- OIDC rows, Latchkey's and the peer's runs alternating
  for (const row of SELECTED) {
    log(`row: ${ROW_TITLES[row]}`);
    const started = [ours, peer].filter((t): t is Target => Boolean(t));
    const cells = await measureSides(
      row,
      started.map((t) => ({ t, spec: t.rows[row] })),
    );
    results.ours[row] = ours ? cells[0] : { na: oursSkip ?? 'not started' };
    results.peer[row] = peer ? cells[started.indexOf(peer)] : { na: 'peer not started' };
  }

  // ---- RSS after the run, before anything is stopped
  if (ours) rss.push({ label: 'Latchkey (node dist/main.js)', mb: rssMB(ours.pid) });
  if (peer) rss.push({ label: 'oidc-provider (peer)', mb: rssMB(peer.pid) });
  for (const c of ceilings) rss.push({ label: c.label, mb: rssMB(c.pid) });

  // ---- cold start (after the load, with the load generators idle)
  let cold: ColdStart[] = [];
  for (const t of [...ceilings, peer].filter(Boolean) as Target[]) await t.stop();
  if (ours) {
    const migrated = { databaseUrl: ours.databaseUrl, dataDir: ours.dataDir };
    await ours.stop();
    if (!SKIP_COLD) {
      log(`cold start to ready (${COLD_RUNS}× each)…`);
      cold = await measureColdStarts(COLD_RUNS, migrated);
      cold.unshift({ label: 'Postgres, fresh database — the benchmark instance', ms: [ours.coldStartFreshPgMs] });
      for (const c of cold)
        log(`  ${c.label}: ${c.error ? `failed: ${c.error}` : c.ms.map((m) => m.toFixed(0)).join(', ') + ' ms'}`);
    }
  }
  await stopAll();

  const load = { before: loadBefore, after: os.loadavg()[0] };
  const md = report({ started, results, problems, notes, rss, cold, oursSkip, load });
  console.log(md);
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  fs.writeFileSync(path.join(dir, `${stamp}.md`), md);
  fs.writeFileSync(path.join(dir, 'latest.md'), md);
  fs.writeFileSync(
    path.join(dir, `${stamp}.json`),
    JSON.stringify({ started, settings: settings(), results, rss, cold, problems, notes, oursSkip, load }, null, 2),
  );
  log(`\nwritten: bench/results/${stamp}.md and bench/results/latest.md`);
}

function settings() {
  return {
    connections: CONNECTIONS,
    warmup: WARMUP,
    duration: DURATION,
    runs: RUNS,
    poolMax: POOL_MAX,
    rows: SELECTED,
  };
}

// ------------------------------------------------------------------ report

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '—');
const ratio = (a: Cell | undefined, b: Cell | undefined) =>
  isRes(a) && isRes(b) && b.rps > 0 ? `${(a.rps / b.rps).toFixed(2)}×` : 'n/a';
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function report(o: {
  started: Date;
  results: Record<string, Partial<Record<RowName, Cell>>>;
  problems: string[];
  notes: string[];
  rss: { label: string; mb: number | null }[];
  cold: ColdStart[];
  oursSkip: string | null;
  load: { before: number; after: number };
}): string {
  const { results: R } = o;
  const notes: string[] = [];
  const note = (text: string) => {
    let i = notes.indexOf(text);
    if (i < 0) {
      notes.push(text);
      i = notes.length - 1;
    }
    return `[^${i + 1}]`;
  };
  const rps = (c: Cell | undefined) =>
    isRes(c)
      ? f0(c.rps) +
        (c.short
          ? ` ${note('single-use pool ran out before the run’s duration: run stopped early; the requests autocannon still sent, which could only repeat the pool’s last token, are not counted; req/s is over the actual duration')}`
          : '')
      : c
        ? `n/a ${note(c.na)}`
        : '—';
  const unit = (row: RowName) =>
    row === 'signin'
      ? ' ' +
        note(
          'full sign-in: one "request" is a whole fresh-browser flow (authorize → sign-in page → sign-in POST → redirect(s) → code → token exchange); req/s = completed flows per second; p50/p99 are whole-flow latencies; non-2xx = failed flows',
        )
      : '';

  const lines: string[] = [];
  lines.push(`# Latchkey benchmark — ${o.started.toISOString()}`, '');
  lines.push(
    `${CONNECTIONS} connections, ${WARMUP} s warm-up, median of ${RUNS} × ${DURATION} s per row (p50/p99 in ms are medians of the runs' percentiles; non-2xx summed over the runs). ${oursRateLimitNote()}.`,
    '',
  );
  lines.push(
    `Environment: ${envLine()}; 1-min load average ${o.load.before.toFixed(2)} at start, ${o.load.after.toFixed(2)} at the end.`,
    '',
  );
  if (o.load.before > os.cpus().length * 0.5) {
    lines.push(
      `> **Warning:** the machine was already busy when the run started (load average ${o.load.before.toFixed(2)} on ${os.cpus().length} cores): other processes compete with the servers and the load generator, so absolute figures are low and noisy; ratios within this report remain comparable only roughly.`,
      '',
    );
  }
  if (o.oursSkip) lines.push(`> **Our rows were not measured:** ${o.oursSkip}`, '');

  lines.push(
    '| row | ours req/s | p50 | p99 | non-2xx | peer req/s | ours/peer | express req/s | ours/express | node:http req/s | ours/node |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of SELECTED) {
    const us = R.ours[row];
    const nonOk = isRes(us) ? `${us.non2xx}${us.errors ? ` (+${us.errors} socket errors/timeouts)` : ''}` : '—';
    lines.push(
      `| ${ROW_TITLES[row]}${unit(row)} | ${rps(us)} | ${isRes(us) ? f1(us.p50) : '—'} | ${isRes(us) ? f1(us.p99) : '—'} | ${nonOk} | ${rps(R.peer[row])} | ${ratio(us, R.peer[row])} | ${rps(R.express[row])} | ${ratio(us, R.express[row])} | ${rps(R.node[row])} | ${ratio(us, R.node[row])} |`,
    );
  }
  lines.push('');

  // Every target in detail.
  lines.push('## All measurements', '');
  lines.push('| row | target | req/s | p50 ms | p99 ms | non-2xx | per-run req/s | note |');
  lines.push('|---|---|---:|---:|---:|---:|---|---|');
  const labels: Record<string, string> = {
    ours: 'Latchkey',
    peer: 'oidc-provider',
    express: 'bare Express 5',
    node: 'bare node:http',
  };
  for (const row of SELECTED) {
    for (const t of ['ours', 'peer', 'express', 'node']) {
      const c = R[t][row];
      if (!c) continue;
      if (!isRes(c)) {
        lines.push(`| ${ROW_TITLES[row]} | ${labels[t]} | n/a | | | | | ${c.na.replace(/\|/g, '\\|').slice(0, 200)} |`);
        continue;
      }
      const n = [
        c.sample ? `first failure: ${c.sample.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 160)}` : '',
        c.poolSizes ? `pools ${c.poolSizes.join('/')}` : '',
        t === 'express' || t === 'node' ? `${CEILING_SHAPE[row]} shape` : '',
      ]
        .filter(Boolean)
        .join('; ');
      lines.push(
        `| ${ROW_TITLES[row]} | ${labels[t]} | ${f0(c.rps)} | ${f1(c.p50)} | ${f1(c.p99)} | ${c.non2xx + c.errors} | ${c.runs.map((r) => f0(r.rps) + (r.short ? '*' : '')).join(' / ')} | ${n} |`,
      );
    }
  }
  lines.push('');

  lines.push('## Cold start to ready (spawn → first 200 on /readyz)', '');
  if (o.cold.length === 0)
    lines.push(o.oursSkip ? '_not measured: our provider did not run_' : '_not measured (BENCH_COLD=0)_');
  else {
    lines.push('| database | median ms | runs (ms) |', '|---|---:|---|');
    for (const c of o.cold)
      lines.push(
        `| ${c.label} | ${c.error ? 'failed' : f0(median(c.ms))} | ${c.error ? c.error.replace(/\|/g, '\\|').slice(0, 300) : c.ms.map(f0).join(', ')} |`,
      );
  }
  lines.push('');

  lines.push('## RSS after the run (VmRSS)', '');
  lines.push('| process | RSS MB |', '|---|---:|');
  for (const r of o.rss) lines.push(`| ${r.label} | ${r.mb === null ? '—' : r.mb.toFixed(1)} |`);
  lines.push('');

  lines.push('## Targets', '');
  lines.push('| target | goal | measured | ok |', '|---|---|---|---|');
  const check = (name: string, goal: string, measured: string, ok: boolean | null) =>
    lines.push(`| ${name} | ${goal} | ${measured} | ${ok === null ? '—' : ok ? 'yes' : '**no**'} |`);
  // Every row at least the in-memory peer, Latchkey durable on Postgres.
  for (const row of SELECTED) {
    const [a, b] = [R.ours[row], R.peer[row]];
    check(`${ROW_TITLES[row]} vs peer`, '≥ 1.0×', ratio(a, b), isRes(a) && isRes(b) ? a.rps / b.rps >= 1 : null);
  }
  const measured = SELECTED.map((r) => [r, R.ours[r]] as const).filter((x): x is readonly [RowName, RowResult] =>
    isRes(x[1]),
  );
  // The sign-in row's p99 is a whole multi-request flow queueing behind argon2id: not a single request.
  const single = measured.filter(([r]) => r !== 'signin');
  if (single.length) {
    const worst = single.reduce((a, b) => (b[1].p99 > a[1].p99 ? b : a));
    check(
      'p99 every single-request row',
      '< 50 ms',
      `worst: ${ROW_TITLES[worst[0]]} ${f1(worst[1].p99)} ms`,
      single.every(([, r]) => r.p99 < 50),
    );
  } else {
    check('p99 every single-request row', '< 50 ms', 'n/a', null);
  }
  const errs = measured.reduce((a, [, r]) => a + r.non2xx + r.errors, 0);
  check('errors', '0', measured.length ? String(errs) : 'n/a', measured.length ? errs === 0 : null);
  const ourRss = o.rss.find((r) => r.label.startsWith('Latchkey'));
  check(
    'RSS after the run',
    '< 150 MB',
    ourRss?.mb != null ? `${ourRss.mb.toFixed(1)} MB` : 'n/a',
    ourRss?.mb != null ? ourRss.mb < 150 : null,
  );
  for (const c of o.cold) {
    if (c.label.includes('benchmark instance')) continue;
    const limit = c.label.includes('embedded') && c.label.includes('fresh') ? 3000 : 1500;
    check(
      `cold start, ${c.label}`,
      `< ${(limit / 1000).toFixed(1)} s`,
      c.error ? 'failed' : `${f0(median(c.ms))} ms`,
      c.error ? false : median(c.ms) < limit,
    );
  }
  lines.push('');

  if (o.notes.length) {
    lines.push('## Notes', '');
    for (const n of o.notes) lines.push(`- ${n}`);
    lines.push('');
  }

  if (o.problems.length) {
    lines.push('## Problems', '');
    for (const p of o.problems) lines.push(`- ${p.replace(/\n/g, '\n  ')}`);
    lines.push('');
  }

  lines.push('## Method', '');
  lines.push(
    '- Load: autocannon (programmatic), pipelining 1, 10 s timeout; req/s = completed requests ÷ actual run duration. Single-use rows (refresh_token grant, authorization_code exchange) take a fresh token per request from a pool pre-issued before each run (`requests[].setupRequest`); a short calibration on 256 tokens sizes the warm-up pool, the warm-up rate ×1.6 sizes each run’s pool (capped at BENCH_POOL_MAX), and a run whose pool runs out stops early (marked *) rather than reuse a token. Per row, both targets are warmed up, then their measured runs alternate in an order that turns round each run (peer, Latchkey, Latchkey, peer, …), so a drift of the shared machine, and whatever going first is worth, weigh on both sides of a ratio.',
  );
  lines.push(
    '- Full sign-in: a bounded pool of 32 async workers (keep-alive node:http), each running complete fresh-browser flows back to back; exact percentiles over all flow latencies.',
  );
  lines.push(
    '- Ceilings answer `{"ok":true}`; they are measured once per request shape (GET, and POST with a ~130-byte urlencoded form and a Basic header) and that figure is reused for each row of that shape.',
  );
  lines.push(
    '- Peer: oidc-provider v9, its MemoryAdapter over an enlarged LRU (the default ~1000 entries evicts pre-issued pools), opaque access tokens, HS512 ID tokens, rotating refresh tokens, argon2id (m=19 MiB, t=2, p=1) password check in its sign-in interaction, consent remembered via `loadExistingGrant`. Its state lives in process memory while Latchkey’s is in Postgres.',
  );
  lines.push('');
  if (notes.length) {
    lines.push(...notes.map((n, i) => `[^${i + 1}]: ${n.replace(/\n/g, ' ')}`), '');
  }
  return lines.join('\n');
}

function envLine(): string {
  return `${environmentLine(ROOT)}${APP_DIR !== ROOT ? `; Latchkey run from ${APP_DIR}` : ''}`;
}

main().catch(async (err) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
