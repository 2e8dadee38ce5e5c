// What rate limits cost: `npx tsx bench/limits.ts`. Two provider processes of one build, each on a
// fresh database of its own: one with RATE_LIMIT_SCALE=0 (limits off), one with the limits on at
// LIMITS_SCALE (default 100000) and the default counters (memory first, written to Postgres). At ×1000
// discovery's limit would be 1,667 requests a second, which one process outruns: the scale must be
// one no row reaches, or the figures measure 429s. Each row loads both processes AT THE SAME TIME,
// half the connections each, so the shared machine's drift (a 2× swing in CPU per request within
// minutes on this host) weighs on both sides of every ratio alike; each run also records each
// process's CPU per request. Writes bench/results/<timestamp>-limits.md (and .json) and
// bench/results/limits-latest.md.
import { CONNECTIONS, runFor, summarise, withCpu, type PoolRow, type RunResult, type StaticRow } from './lib/load';
import { ROWS as ALL_ROWS, ROW_TITLES, type RowName } from './lib/oidc';
import { installSignalHandlers, rssMB, stopAll } from './lib/proc';
import { environmentLine, positiveNumber } from './lib/env';
import { comparisonTable, comparisonTargets, writeModeReport, type Sides } from './lib/compare';
import { oursUnavailable, ROOT, startOurs, type OursTarget } from './ours';

/** Every single-request row; full sign-in is left out: 25 ms of argon2id a flow hides any limiter. */
type LimitRow = Exclude<RowName, 'signin'>;
const LIMIT_ROWS = ALL_ROWS.filter((r): r is LimitRow => r !== 'signin');

const DURATION = positiveNumber('BENCH_DURATION', 10);
const RUNS = Math.round(positiveNumber('BENCH_RUNS', 3));
const WARMUP = positiveNumber('BENCH_WARMUP', 3);
const POOL_MAX = Math.round(positiveNumber('BENCH_POOL_MAX', 40_000));
/** `0` runs both sides with limits off: what the method itself spreads (an A/A check). */
const SCALE = process.env.LIMITS_SCALE === '0' ? '0' : String(positiveNumber('LIMITS_SCALE', 100_000));
const ONLY = (process.env.BENCH_ONLY ?? LIMIT_ROWS.join(',')).split(',').map((s) => s.trim());
for (const r of ONLY)
  if (!(LIMIT_ROWS as readonly string[]).includes(r))
    throw new Error(`BENCH_ONLY: unknown row "${r}" (rows: ${LIMIT_ROWS.join(', ')})`);
const ROWS = LIMIT_ROWS.filter((r) => ONLY.includes(r));
/** Each process gets half of the load the normal run gives one. */
const HALF = CONNECTIONS / 2;

const log = (m: string) => console.error(`[limits] ${m}`);

type Spec = StaticRow | PoolRow;
const specOf = (t: OursTarget, row: LimitRow): Spec => {
  const s = t.rows[row];
  if (!s || (s.kind !== 'static' && s.kind !== 'pool'))
    throw new Error(`${t.label}: ${row} is not measurable (${s?.kind === 'na' ? s.reason : 'no row'})`);
  return s;
};

/** One window of load on both sides at once; each result carries its process's CPU per request. */
const bothAtOnce = (sides: { t: OursTarget; spec: Spec; tokens?: string[] }[], seconds: number) =>
  Promise.all(sides.map((s) => withCpu(s.t.pid, () => runFor(s.t.base, s.spec, seconds, s.tokens, HALF))));

/** Warm-up, then RUNS windows of both sides at once. A pool row mints each window's tokens before it starts. */
async function measureRow(off: OursTarget, on: OursTarget, row: LimitRow): Promise<[RunResult[], RunResult[]]> {
  const specs = [specOf(off, row), specOf(on, row)];
  const mint = async (n: number) =>
    Promise.all(specs.map((s) => (s.kind === 'pool' ? s.mint(n) : Promise.resolve(undefined))));
  const loadWindow = async (seconds: number, size: number) => {
    const tokens = await mint(size);
    return bothAtOnce(
      specs.map((spec, i) => ({ t: [off, on][i], spec, tokens: tokens[i] })),
      seconds,
    );
  };
  log(`${ROW_TITLES[row]}: warm-up`);
  const warm = await loadWindow(WARMUP, Math.min(POOL_MAX, 3000));
  let rate = Math.max(...warm.map((r) => r.rps));
  const runs: [RunResult[], RunResult[]] = [[], []];
  for (let i = 0; i < RUNS; i++) {
    const [a, b] = await loadWindow(DURATION, Math.min(POOL_MAX, Math.ceil(rate * DURATION * 1.6) + HALF * 4));
    log(`  run ${i + 1}/${RUNS}: off ${a.rps.toFixed(0)} req/s, on ${b.rps.toFixed(0)} req/s`);
    runs[0].push(a);
    runs[1].push(b);
    rate = Math.max(rate, a.rps, b.rps);
  }
  return runs;
}

async function main() {
  installSignalHandlers();
  const why = oursUnavailable();
  if (why) throw new Error(why);
  const started = new Date();
  log('starting the two providers (limits off, limits on)…');
  const off = await startOurs({ tag: 'limits-off', extraEnv: { RATE_LIMIT_SCALE: '0' } });
  const on = await startOurs({ tag: 'limits-on', extraEnv: { RATE_LIMIT_SCALE: SCALE } });
  const sides: Sides = { rows: ROWS, a: { name: 'off', cells: {} }, b: { name: 'on', cells: {} } };
  for (const row of ROWS) {
    try {
      const [a, b] = await measureRow(off, on, row);
      sides.a.cells[row] = summarise(a);
      sides.b.cells[row] = summarise(b);
    } catch (err) {
      const na = `failed: ${(err as Error).message.split('\n')[0].slice(0, 160)}`;
      log(`${ROW_TITLES[row]}: ${na}`);
      sides.a.cells[row] = { na };
      sides.b.cells[row] = { na };
    }
  }
  const rss = { off: rssMB(off.pid), on: rssMB(on.pid) };
  const L: string[] = [
    `# What rate limits cost — ${started.toISOString()}`,
    '',
    `\`npx tsx bench/limits.ts\`: two provider processes of one build, each on a fresh database of its own, **limits off** (\`RATE_LIMIT_SCALE=0\`) and **limits on** (\`RATE_LIMIT_SCALE=${SCALE}\`, no \`REDIS_URL\`: the default counters, counted in memory and written to Postgres every 200 ms). Every row loads both processes at the same time, ${HALF} connections each (autocannon, pipelining 1), so the machine's drift weighs on both sides alike: ${WARMUP} s warm-up, then the median of ${RUNS} × ${DURATION} s. Single-use rows take fresh tokens minted before each window. CPU ms/req: each process's own CPU time over the window ÷ its requests (\`/proc/<pid>/stat\`).`,
    '',
    `Environment: ${environmentLine(ROOT)}.`,
    '',
  ];
  comparisonTable(L, sides);
  L.push('## Target', '', '| target | goal | measured | ok |', '|---|---|---|---|');
  comparisonTargets(L, sides, 'limits on / off');
  L.push('', `RSS after the rows: off ${rss.off?.toFixed(1) ?? 'n/a'} MB, on ${rss.on?.toFixed(1) ?? 'n/a'} MB.`, '');
  writeModeReport('limits', started, L.join('\n'), { started, scale: SCALE, rows: ROWS, sides, rss });
  await Promise.all([off.stop(), on.stop()]); // a graceful stop: a --cpu-prof profile gets written
  await stopAll();
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    console.error(err);
    await stopAll();
    process.exit(1);
  },
);
