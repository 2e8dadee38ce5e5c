import { LRUCache } from 'lru-cache';
import { approximateBytes } from './approximate-bytes';

/**
 * The one in-process cache for looked-up rows (platforms, clients, keys, upstream
 * configurations): entries live `ttlMs` by the injected clock (deps.now, so tests that move time
 * move the cache too), and at most `max` of them and `maxBytes` in all, the least recently used
 * evicted first (docs/decisions.md, "Memory stays flat"). A cached `undefined` counts: unknown ids
 * are answered without a query as well.
 */
export interface TtlCache<V> {
  /** The live entry, or the loader's answer, remembered. */
  getOrLoad(key: string, load: () => Promise<V>): Promise<V>;
  get(key: string): { value: V } | undefined;
  /** `ttlMs`: this entry's own lifetime, when its source says how long it stays fresh (HTTP cache headers); else the cache's. */
  set(key: string, value: V, ttlMs?: number): void;
  delete(key: string): void;
}

export function createTtlCache<V>(
  now: () => Date,
  options: { ttlMs: number; max?: number; maxBytes?: number },
): TtlCache<V> {
  const { ttlMs, max = 10_000, maxBytes = 16 * 1024 * 1024 } = options;
  const entries = new LRUCache<string, { value: V; until: number }>({
    max,
    maxSize: maxBytes,
    sizeCalculation: (entry, key) => approximateBytes(entry.value) + 2 * key.length,
  });
  const cache: TtlCache<V> = {
    get(key) {
      const hit = entries.get(key);
      if (!hit) return undefined;
      if (hit.until > now().getTime()) return { value: hit.value };
      entries.delete(key);
      return undefined;
    },
    set(key, value, entryTtlMs = ttlMs) {
      entries.set(key, { value, until: now().getTime() + entryTtlMs });
    },
    delete(key) {
      entries.delete(key);
    },
    async getOrLoad(key, load) {
      const hit = cache.get(key);
      if (hit) return hit.value;
      const value = await load();
      cache.set(key, value);
      return value;
    },
  };
  return cache;
}
