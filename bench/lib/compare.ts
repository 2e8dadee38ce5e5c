// Report pieces of the modes that measure one build against itself on two databases (large-data,
// tenants): each row's figures side by side, their ratio, and the 10 % verdict.
import fs from 'node:fs';
import path from 'node:path';
import type { Cell, RowResult } from './load';
import { ROW_TITLES, type RowName } from './oidc';

export const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
export const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '—');
export const isRes = (c: Cell | undefined): c is RowResult => !!c && !('na' in c);

/** Within 10 % of the reference side's req/s. */
export const TOLERANCE = 0.1;

export interface Sides {
  rows: RowName[];
  /** The reference (empty database, one platform) and the measured side, with their short names. */
  a: { name: string; cells: Partial<Record<RowName, Cell>> };
  b: { name: string; cells: Partial<Record<RowName, Cell>> };
}

const na = (c: Cell | undefined) => `n/a (${(c as { na: string } | undefined)?.na ?? '—'})`;

/** The table of both sides' figures and ratios, and the per-run req/s line under it. */
export function comparisonTable(L: string[], s: Sides): void {
  const { a, b } = s;
  // The processes' CPU per request, when the sides' pids were known: what a busy machine disturbs least.
  const withCpu = s.rows.some((row) => [a.cells[row], b.cells[row]].some((c) => isRes(c) && c.cpuMsPerRequest));
  const cpu = (c: RowResult) => (c.cpuMsPerRequest === undefined ? '—' : c.cpuMsPerRequest.toFixed(3));
  L.push(
    `| row | ${a.name} req/s | p50 | p99 | ${b.name} req/s | p50 | p99 | ${b.name}/${a.name} req/s | ${b.name}/${a.name} p99 |${withCpu ? ` CPU ms/req ${a.name} → ${b.name} |` : ''} within 10% |`,
  );
  L.push(`|---|---:|---:|---:|---:|---:|---:|---:|---:|${withCpu ? '---|' : ''}---|`);
  for (const row of s.rows) {
    const x = a.cells[row];
    const y = b.cells[row];
    if (!isRes(x) || !isRes(y)) {
      L.push(
        `| ${ROW_TITLES[row]} | ${isRes(x) ? f0(x.rps) : na(x)} | | | ${isRes(y) ? f0(y.rps) : na(y)} | | | | |${withCpu ? ' |' : ''} — |`,
      );
      continue;
    }
    const q = y.rps / x.rps;
    const bad = x.non2xx + x.errors + y.non2xx + y.errors;
    L.push(
      `| ${ROW_TITLES[row]} | ${f0(x.rps)} | ${f1(x.p50)} | ${f1(x.p99)} | ${f0(y.rps)} | ${f1(y.p50)} | ${f1(y.p99)} | ${q.toFixed(2)}× | ${x.p99 > 0 ? (y.p99 / x.p99).toFixed(2) + '×' : '—'} |${withCpu ? ` ${cpu(x)} → ${cpu(y)} |` : ''} ${q >= 1 - TOLERANCE ? 'yes' : '**no**'}${bad ? ` (non-2xx/errors: ${x.non2xx + x.errors} / ${y.non2xx + y.errors})` : ''} |`,
    );
  }
  const runs = (c: Cell | undefined) => (isRes(c) ? c.runs.map((r) => f0(r.rps)).join('/') : '—');
  L.push(
    '',
    `Per-run req/s (${a.name} → ${b.name}): ` +
      s.rows.map((row) => `${ROW_TITLES[row]} ${runs(a.cells[row])} → ${runs(b.cells[row])}`).join('; ') +
      '.',
    '',
  );
}

/** One line per row for a report's targets table: the ratio and whether it is within 10 %. */
export function comparisonTargets(L: string[], s: Sides, label: string): void {
  for (const row of s.rows) {
    const x = s.a.cells[row];
    const y = s.b.cells[row];
    const ok = isRes(x) && isRes(y) ? y.rps / x.rps >= 1 - TOLERANCE : null;
    L.push(
      `| ${ROW_TITLES[row]}, ${label} | ≥ ${(1 - TOLERANCE).toFixed(2)}× | ${isRes(x) && isRes(y) ? (y.rps / x.rps).toFixed(2) + '×' : 'n/a'} | ${ok === null ? '—' : ok ? 'yes' : '**no**'} |`,
    );
  }
}

/**
 * Prints a mode's report and writes it to bench/results/: `<timestamp>-<mode>.md` and `.json`, and
 * `<mode>-latest.md` (never `latest.md`, which is the normal run's). Returns the timestamp in the names.
 */
export function writeModeReport(mode: string, started: Date, md: string, data: unknown): string {
  console.log(md);
  const dir = path.join(__dirname, '..', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  fs.writeFileSync(path.join(dir, `${stamp}-${mode}.md`), md);
  fs.writeFileSync(path.join(dir, `${mode}-latest.md`), md);
  fs.writeFileSync(path.join(dir, `${stamp}-${mode}.json`), JSON.stringify(data, null, 2));
  return stamp;
}
