import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** A positive number from the environment (a BENCH_* knob), `dflt` when unset; anything else stops the run. */
export function positiveNumber(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${v}"`);
  return n;
}

/** The machine, Node and commit a report was measured on. */
export function environmentLine(root: string): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  let commit = 'no commit';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    /* no commits yet */
  }
  return `Node ${process.version}, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}, commit ${commit}`;
}
