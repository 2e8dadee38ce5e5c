/**
 * The one in-process cache: entries live `ttlMs` by the injected clock (deps.now, so tests that
 * move time move the cache too), at most `max` of them (a full cache starts over: no entry is
 * precious). A cached `undefined` counts: unknown ids are answered without a query as well.
 */
export interface TtlCache<V> {
  /** The live entry, or the loader's answer, remembered. */
  getOrLoad(key: string, load: () => Promise<V>): Promise<V>;
  get(key: string): { value: V } | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
}

export function createTtlCache<V>(now: () => Date, options: { ttlMs: number; max?: number }): TtlCache<V> {
  const { ttlMs, max = 10_000 } = options;
  const entries = new Map<string, { value: V; until: number }>();
  const cache: TtlCache<V> = {
    get(key) {
      const hit = entries.get(key);
      if (!hit) return undefined;
      if (hit.until > now().getTime()) return { value: hit.value };
      entries.delete(key);
      return undefined;
    },
    set(key, value) {
      if (entries.size >= max && !entries.has(key)) entries.clear();
      entries.set(key, { value, until: now().getTime() + ttlMs });
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
