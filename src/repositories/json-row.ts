/** row_to_json() yields timestamps as ISO strings: turn the named ones back into Dates. */
export function reviveTimestamps<T extends Record<string, unknown>>(row: T, keys: readonly string[]): T {
  const out: Record<string, unknown> = { ...row };
  for (const k of keys) if (typeof out[k] === 'string') out[k] = new Date(out[k] as string);
  return out as T;
}
