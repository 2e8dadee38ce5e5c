// Load generation. Two engines:
//  * autocannon (programmatic API) for every single-request row, 32 connections,
//    pipelining 1; single-use rows feed a fresh token per request through
//    `requests: [{ setupRequest }]` from a pre-issued pool (never reused);
//  * a bounded pool of 32 async workers for the multi-request "full sign-in" row, each
//    running one complete browser flow per iteration over keep-alive node:http, with
//    exact percentiles over all recorded flow latencies.
import autocannon from 'autocannon';
import { cpuSeconds } from './proc';

export const CONNECTIONS = 32;

/** What varies between the requests of a spread row. */
export interface RequestVariant {
  path: string;
  headers?: Record<string, string>;
  body?: string;
}
export interface StaticRow {
  kind: 'static';
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /**
   * Requests take these in turn (one counter across the connections) instead of `path`, `headers`
   * and `body`: the same row spread over many tenants, so per-tenant caches see realistic traffic.
   */
  spread?: RequestVariant[];
}
export interface PoolRow {
  kind: 'pool';
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: (token: string) => string;
  /** Pre-issues `n` single-use tokens (codes or refresh tokens). */
  mint: (n: number) => Promise<string[]>;
}
export interface FlowRow {
  kind: 'flow';
  run: () => Promise<void>;
}
export interface NaRow {
  kind: 'na';
  reason: string;
}
export type RowSpec = StaticRow | PoolRow | FlowRow | NaRow;

export interface RunResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number; // socket errors + timeouts (autocannon), thrown flows (flow engine)
  total: number;
  seconds: number;
  short?: boolean; // single-use pool ran out before the duration elapsed
  sample?: string; // first non-2xx / error seen, for the report
  used?: number; // single-use tokens taken from the pool (pool rows only)
  cpuMsPerRequest?: number; // the target process's CPU (user + system) over the run ÷ requests, when its pid is known
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export interface RowResult {
  runs: RunResult[];
  rps: number;
  p50: number;
  p99: number;
  non2xx: number; // summed over the measured runs
  errors: number;
  short: boolean;
  sample?: string;
  poolSizes?: number[];
  /** Median of the runs' CPU ms per request, when measured. */
  cpuMsPerRequest?: number;
}

export function summarise(runs: RunResult[], poolSizes?: number[]): RowResult {
  return {
    runs,
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    short: runs.some((r) => r.short),
    sample: runs.find((r) => r.sample)?.sample,
    poolSizes,
    cpuMsPerRequest: runs.every((r) => r.cpuMsPerRequest !== undefined)
      ? median(runs.map((r) => r.cpuMsPerRequest!))
      : undefined,
  };
}

interface AcRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AcRequest, ctx: { reused?: boolean }) => AcRequest;
  onResponse?: (status: number, body: string, ctx: { reused?: boolean }) => void;
}

function autocannonRun(
  base: string,
  req: AcRequest,
  seconds: number,
  pool?: { tokens: string[]; body: (t: string) => string },
  o: { connections?: number; spread?: RequestVariant[] } = {},
): Promise<RunResult> {
  const connections = o.connections ?? CONNECTIONS;
  return new Promise((resolve, reject) => {
    let sample: string | undefined;
    let next = 0;
    let short = false;
    // Requests autocannon still sends between stop() and its connections closing: they can only
    // repeat the pool's last token, so they are left out of the counts rather than reported as failures.
    let reused = 0;
    let reusedNon2xx = 0;
    let instance: { stop: () => void } | undefined;
    const reserve = connections * 2;
    const r: AcRequest = {
      method: req.method,
      path: req.path,
      headers: req.headers,
      body: req.body,
      onResponse: (status, body, ctx) => {
        if (ctx?.reused) {
          reused++;
          if (status < 200 || status > 299) reusedNon2xx++;
          return;
        }
        if ((status < 200 || status > 299) && !sample) sample = `HTTP ${status} ${String(body).slice(0, 300)}`;
      },
    };
    if (pool) {
      r.setupRequest = (q, ctx) => {
        if (pool.tokens.length - next <= reserve && !short) {
          // Pool nearly used up: stop here rather than ever reusing a token.
          short = true;
          setImmediate(() => instance?.stop());
        }
        ctx.reused = next >= pool.tokens.length;
        const token = pool.tokens[Math.min(next++, pool.tokens.length - 1)];
        return { ...q, body: pool.body(token) };
      };
    } else if (o.spread?.length) {
      const spread = o.spread;
      r.setupRequest = (q) => {
        const v = spread[next++ % spread.length];
        return { ...q, path: v.path, headers: v.headers ?? q.headers, body: v.body ?? q.body };
      };
    }
    instance = autocannon(
      {
        url: base,
        connections,
        pipelining: 1,
        duration: seconds,
        timeout: 10,
        requests: [r],
      },
      (err: Error | null, res: any) => {
        if (err) return reject(err);
        const total = (res.requests.total as number) - reused;
        const secs = res.duration as number; // seconds, actual
        resolve({
          rps: total / secs,
          p50: res.latency.p50,
          p99: res.latency.p99,
          non2xx: Math.max(0, res.non2xx - reusedNon2xx),
          errors: res.errors + res.timeouts,
          total,
          seconds: secs,
          short,
          sample: sample ?? (res.errors ? `${res.errors} socket errors` : undefined),
          used: pool ? Math.min(next, pool.tokens.length) : undefined,
        });
      },
    );
  });
}

/** Bounded worker pool: `CONNECTIONS` workers each running `flow` until the deadline. */
async function flowRun(flow: () => Promise<void>, seconds: number): Promise<RunResult> {
  const lat: number[] = [];
  let errors = 0;
  let sample: string | undefined;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const s = performance.now();
        try {
          await flow();
          lat.push(performance.now() - s);
        } catch (err) {
          errors++;
          if (!sample) sample = (err as Error).message.slice(0, 400);
          if (errors > 1000) break; // bounded: a broken flow must not spin
        }
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)] : NaN);
  return {
    rps: lat.length / secs,
    p50: pct(50),
    p99: pct(99),
    non2xx: errors,
    errors: 0,
    total: lat.length + errors,
    seconds: secs,
    sample,
  };
}

/**
 * One measured run of `seconds` without warm-up: a static row, or a pool row fed from `tokens`
 * (each used once; the run stops early if they run out), over `connections`. For windows of load
 * next to other work.
 */
export function runFor(
  base: string,
  spec: StaticRow | PoolRow,
  seconds: number,
  tokens?: string[],
  connections = CONNECTIONS,
): Promise<RunResult> {
  if (spec.kind === 'static')
    return autocannonRun(base, staticRequest(spec), seconds, undefined, { connections, spread: spec.spread });
  return autocannonRun(
    base,
    { method: spec.method, path: spec.path, headers: spec.headers },
    seconds,
    { tokens: tokens ?? [], body: spec.body },
    { connections },
  );
}

export interface RowOptions {
  warmup: number;
  duration: number;
  runs: number;
  poolMax: number;
  log: (msg: string) => void;
  /** autocannon connections of static rows (default CONNECTIONS; pool rows always use CONNECTIONS). */
  connections?: number;
}

const staticRequest = (spec: StaticRow): AcRequest => ({
  method: spec.method,
  path: spec.path,
  headers: spec.headers,
  body: spec.body,
});

/** One row against one target, measured a run at a time, so runs of two targets can alternate. */
export interface RowMeasurer {
  warmUp(): Promise<void>;
  /** One measured run (a pool row mints its fresh pool first). */
  run(): Promise<RunResult>;
  result(): RowResult;
}

export function rowMeasurer(base: string, spec: Exclude<RowSpec, NaRow>, o: RowOptions): RowMeasurer {
  const runs: RunResult[] = [];
  const measured = async (r: Promise<RunResult>) => {
    const res = await r;
    runs.push(res);
    return res;
  };
  if (spec.kind === 'static') {
    const req = staticRequest(spec);
    const ac = { connections: o.connections, spread: spec.spread };
    return {
      warmUp: async () => void (await autocannonRun(base, req, o.warmup, undefined, ac)),
      run: () => measured(autocannonRun(base, req, o.duration, undefined, ac)),
      result: () => summarise(runs),
    };
  }
  if (spec.kind === 'flow') {
    return {
      warmUp: async () => void (await flowRun(spec.run, o.warmup)),
      run: () => measured(flowRun(spec.run, o.duration)),
      result: () => summarise(runs),
    };
  }
  // Single-use pool row. A short calibration on a small pool (it stops as soon as the pool
  // is used up) gives the rate that sizes the warm-up pool; the warm-up's rate sizes the
  // pools of the measured runs (x1.6 headroom, raised if a run still ran short).
  const req: AcRequest = { method: spec.method, path: spec.path, headers: spec.headers };
  const poolSizes: number[] = [];
  const mint = async (n: number) => {
    const t = performance.now();
    const tokens = await spec.mint(n);
    o.log(`    minted ${tokens.length} single-use tokens in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    return tokens;
  };
  let rate = 0;
  let factor = 1.6;
  return {
    async warmUp() {
      const calib = await autocannonRun(base, req, o.warmup, { tokens: await mint(CONNECTIONS * 8), body: spec.body });
      const size = Math.min(o.poolMax, Math.ceil(calib.rps * o.warmup * 1.3) + CONNECTIONS * 4);
      const warm = await autocannonRun(base, req, o.warmup, { tokens: await mint(size), body: spec.body });
      rate = Math.max(calib.rps, warm.rps);
    },
    async run() {
      const size = Math.min(o.poolMax, Math.ceil(rate * o.duration * factor) + CONNECTIONS * 4);
      poolSizes.push(size);
      const r = await measured(autocannonRun(base, req, o.duration, { tokens: await mint(size), body: spec.body }));
      rate = Math.max(rate, r.rps);
      if (r.short) factor *= 1.5;
      return r;
    },
    result: () => summarise(runs, poolSizes),
  };
}

/** Warm-up then `runs` measured runs of one row against one target. */
export async function measureRow(base: string, spec: Exclude<RowSpec, NaRow>, o: RowOptions): Promise<RowResult> {
  const m = rowMeasurer(base, spec, o);
  await m.warmUp();
  for (let i = 0; i < o.runs; i++) await m.run();
  return m.result();
}

/** A row's figure, or why there is none. */
export type Cell = RowResult | { na: string };

/** The cell of a row that failed: its error's first line. */
export const failedCell = (err: unknown): Cell => ({
  na: `failed: ${(err as Error).message.split('\n')[0].slice(0, 120)}`,
});

/** One line for a run's figures, as the harness logs it. */
export const describeRun = (
  r: Pick<RunResult, 'rps' | 'p50' | 'p99' | 'non2xx' | 'errors' | 'sample' | 'cpuMsPerRequest'>,
) =>
  `${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, non-2xx ${r.non2xx}${r.errors ? `, errors ${r.errors}` : ''}${r.cpuMsPerRequest !== undefined ? `, CPU ${r.cpuMsPerRequest.toFixed(3)} ms/req` : ''}${r.sample ? ` (${r.sample.slice(0, 160)})` : ''}`;

export interface AlternatingSide {
  label: string;
  base: string;
  spec: RowSpec | undefined;
  /** The target's process: each measured run then also records its CPU per request. */
  pid?: number;
}

/** A measured run, with the CPU the process `pid` used during it per request. */
export async function withCpu(pid: number | undefined, run: () => Promise<RunResult>): Promise<RunResult> {
  const before = pid === undefined ? null : cpuSeconds(pid);
  const r = await run();
  const after = pid === undefined ? null : cpuSeconds(pid);
  if (before !== null && after !== null && r.total > 0) r.cpuMsPerRequest = ((after - before) * 1000) / r.total;
  return r;
}

/**
 * One row against several targets: every target warms up, then their measured runs alternate,
 * in an order that turns around each run, so a drift of the shared machine during the row, and
 * whatever going first is worth, weigh on every side of a ratio alike. A side that fails is
 * reported through `failed` (its cell) and skipped from then on.
 */
export async function measureAlternating<S extends AlternatingSide>(
  title: string,
  targets: S[],
  o: RowOptions,
  failed: (side: S, err: unknown) => Cell,
): Promise<Cell[]> {
  const sides = targets.map((t): { t: S; m?: RowMeasurer; cell?: Cell } =>
    !t.spec
      ? { t, cell: { na: 'not available' } }
      : t.spec.kind === 'na'
        ? { t, cell: { na: t.spec.reason } }
        : { t, m: rowMeasurer(t.base, t.spec, o) },
  );
  const attempt = async (side: (typeof sides)[number], what: string, step: (m: RowMeasurer) => Promise<unknown>) => {
    if (!side.m) return;
    o.log(`  ${side.t.label}: ${title}, ${what}…`);
    try {
      await step(side.m);
    } catch (err) {
      side.cell = failed(side.t, err);
      side.m = undefined;
    }
  };
  for (const side of sides) await attempt(side, 'warm-up', (m) => m.warmUp());
  // The order turns around each run (after warm-ups A, B: B A, A B, B A, …), so no side always
  // runs right after its own warm-up or right after the other's load.
  for (let i = 0; i < o.runs; i++) {
    const order = i % 2 === 0 ? [...sides].reverse() : sides;
    for (const side of order)
      await attempt(side, `run ${i + 1}/${o.runs}`, async (m) =>
        o.log(`    ${describeRun(await withCpu(side.t.pid, () => m.run()))}`),
      );
  }
  return sides.map((side) => side.cell ?? side.m!.result());
}
