/** A positive number from the environment (a BENCH_* knob), `dflt` when unset; anything else stops the run. */
export function positiveNumber(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${v}"`);
  return n;
}
