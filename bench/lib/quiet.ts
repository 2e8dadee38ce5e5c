// Waits for the machine and Postgres to settle before a measurement: after a bulk load, Postgres
// may keep flushing and autovacuuming on the same cores, and rows measured meanwhile would carry
// that cost whether or not they touch the loaded tables.
import fs from 'node:fs';
import { Client } from 'pg';

export interface QuietReport {
  /** Seconds waited. */
  seconds: number;
  /** Whether all three conditions held before the limit. */
  quiet: boolean;
  /** The last sample: machine CPU idle (0–1) and Postgres background work seen. */
  idle: number;
  autovacuumWorkers: number;
  dirtyMiB: number;
}

function cpuTimes(): { idle: number; total: number } {
  // First line of /proc/stat: cpu user nice system idle iowait irq softirq steal …
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { idle: f[3] + f[4], total: f.reduce((a, b) => a + b, 0) };
}

function dirtyMiB(): number {
  const m = /^Dirty:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/**
 * Polls every `sampleSeconds` until, within one sample, the machine's CPUs were idle at least
 * `minIdle` of the time, no autovacuum worker runs on the database's cluster and the kernel holds
 * under 64 MiB of dirty pages; gives up after `maxSeconds` and says so.
 */
export async function waitForQuiet(
  databaseUrl: string,
  o: { maxSeconds: number; minIdle?: number; sampleSeconds?: number; log: (m: string) => void },
): Promise<QuietReport> {
  const minIdle = o.minIdle ?? 0.8;
  const sample = o.sampleSeconds ?? 5;
  const started = performance.now();
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    let last: QuietReport;
    for (;;) {
      const a = cpuTimes();
      await new Promise((r) => setTimeout(r, sample * 1000));
      const b = cpuTimes();
      const idle = (b.idle - a.idle) / Math.max(1, b.total - a.total);
      const workers = Number(
        (await c.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`)).rows[0]
          .n,
      );
      const dirty = dirtyMiB();
      const seconds = (performance.now() - started) / 1000;
      const quiet = idle >= minIdle && workers === 0 && dirty < 64;
      last = { seconds, quiet, idle, autovacuumWorkers: workers, dirtyMiB: dirty };
      if (quiet || seconds >= o.maxSeconds) break;
      o.log(
        `    waiting for a quiet machine: CPU idle ${(idle * 100).toFixed(0)} %, autovacuum workers ${workers}, dirty ${dirty.toFixed(0)} MiB (${seconds.toFixed(0)} s)`,
      );
    }
    return last;
  } finally {
    await c.end();
  }
}
