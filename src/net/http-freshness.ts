/**
 * How long a response stays fresh by its own headers (RFC 9111 §4.2.1): `no-store` and
 * `no-cache` → 0; else `max-age` less the `Age` it has already spent in caches; else `Expires`
 * less `Date` (or the clock), an invalid `Expires` meaning already stale (§5.3); else undefined:
 * the headers say nothing and the cache decides. In whole seconds, never below 0.
 */
export function freshnessSeconds(headers: Headers, nowMs: number): number | undefined {
  const directives = new Map<string, string>();
  for (const part of (headers.get('cache-control') ?? '').split(',')) {
    const [name, ...value] = part.split('=');
    if (name.trim()) directives.set(name.trim().toLowerCase(), value.join('=').trim().replace(/^"|"$/g, ''));
  }
  if (directives.has('no-store') || directives.has('no-cache')) return 0;
  const maxAge = directives.get('max-age');
  if (maxAge !== undefined) {
    if (!/^\d+$/.test(maxAge)) return 0; // RFC 9111 §4.2.1: an invalid max-age counts as stale
    const age = /^\d+$/.test(headers.get('age') ?? '') ? Number(headers.get('age')) : 0;
    return Math.max(0, Number(maxAge) - age);
  }
  const expires = headers.get('expires');
  if (expires === null) return undefined;
  const expiresMs = Date.parse(expires);
  if (Number.isNaN(expiresMs)) return 0;
  const dateMs = Date.parse(headers.get('date') ?? '');
  return Math.max(0, Math.floor((expiresMs - (Number.isNaN(dateMs) ? nowMs : dateMs)) / 1000));
}
