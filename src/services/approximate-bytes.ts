/**
 * Roughly what a cached value keeps on the heap, for caches bounded in bytes: two bytes per
 * character of its JSON (V8 strings may be two-byte) plus a fixed overhead per entry for the
 * objects, the key and the cache's own node. Not exact, and it need not be: it keeps a cache's
 * footprint proportional to what it holds, so a bound in bytes holds for large and small values.
 */
const ENTRY_OVERHEAD_BYTES = 256;

export function approximateBytes(value: unknown): number {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined; // cycles or BigInt: count the overhead alone
  }
  return ENTRY_OVERHEAD_BYTES + 2 * (json?.length ?? 0);
}
