import { approximateBytes } from './approximate-bytes';
import { BoundedLru } from './bounded-lru';

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
  /**
   * The loader's answer, remembered unless the entry was dropped (delete, clear) while it loaded:
   * a read that began before a change is not kept after the change's notification. `keep` says
   * which answers are remembered at all (a cache that never holds an unknown id).
   */
  reload(key: string, load: () => Promise<V>, keep?: (value: V) => boolean): Promise<V>;
  get(key: string): { value: V } | undefined;
  /** `ttlMs`: this entry's own lifetime, when its source says how long it stays fresh (HTTP cache headers); else the cache's. */
  set(key: string, value: V, ttlMs?: number): void;
  delete(key: string): void;
  /** Drops every entry (notifications may have been missed). */
  clear(): void;
}

/**
 * How long an entry of a cache kept coherent by NOTIFY lives (docs/decisions.md, "Caches sized for
 * the tenants"): a change's notification drops it on every instance, and a lost LISTEN connection
 * clears the cache, so this only bounds what nothing else would. Without notifications (the
 * embedded database) the cache's own short lifetime applies.
 */
const UNTIL_CHANGED_MS = 10 * 60_000;

/** The lifetime of an entry: until changed where notifications keep the cache coherent, else `shortMs`. */
export const coherentTtlMs = (notifications: unknown, shortMs: number): number =>
  notifications ? UNTIL_CHANGED_MS : shortMs;

/**
 * An entry per platform, by the estimate (two bytes a character): a platform's settings, its
 * published keys or a client come to 1–5 KB; the byte bound only stops an odd large entry from
 * pushing the rest out.
 */
const PER_PLATFORM_ENTRY_BYTES = 8 * 1024;

/** The bounds of a cache holding an entry per platform (or per client): PLATFORM_CACHE_SIZE of them. */
export const perPlatformBounds = (config: { platformCacheSize: number }) => ({
  max: config.platformCacheSize,
  maxBytes: config.platformCacheSize * PER_PLATFORM_ENTRY_BYTES,
});

export function createTtlCache<V>(
  now: () => Date,
  options: { ttlMs: number; max?: number; maxBytes?: number },
): TtlCache<V> {
  const { ttlMs, max = 10_000, maxBytes = 16 * 1024 * 1024 } = options;
  const entries = new BoundedLru<string, { value: V; until: number }>({
    maxEntries: max,
    maxBytes,
    sizeOf: (entry, key) => approximateBytes(entry.value) + 2 * key.length,
  });
  let drops = 0; // deletes and clears so far: a load that saw one while in flight is not kept
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
      drops++;
      entries.delete(key);
    },
    clear() {
      drops++;
      entries.clear();
    },
    async reload(key, load, keep) {
      const dropsBefore = drops;
      const value = await load();
      if (drops === dropsBefore && (!keep || keep(value))) cache.set(key, value);
      return value;
    },
    async getOrLoad(key, load) {
      const hit = cache.get(key);
      return hit ? hit.value : cache.reload(key, load);
    },
  };
  return cache;
}
