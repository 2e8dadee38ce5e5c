import { LRUCache } from 'lru-cache';

/**
 * An LRU of at most `maxEntries` entries, and at most `maxBytes` by `sizeOf` when given, the least
 * recently used evicted one at a time. Its storage grows with what it holds: lru-cache's own
 * `max` allocates every slot up front (about 28 bytes each), which for the per-platform caches'
 * default bound (docs/decisions.md, "Caches sized for the tenants") would be megabytes per cache in
 * every process, a one-platform deployment included.
 */
export class BoundedLru<K extends NonNullable<unknown>, V extends NonNullable<unknown>> extends LRUCache<K, V> {
  readonly #maxEntries: number;

  constructor(options: {
    maxEntries: number;
    maxBytes?: number;
    sizeOf?: (value: V, key: K) => number;
    dispose?: (value: V, key: K) => void;
  }) {
    const { maxEntries, maxBytes, sizeOf, dispose } = options;
    // Without `max`, lru-cache grows its arrays as entries arrive; the entry bound is kept below
    // (by count when there is no byte bound: each entry weighs 1).
    super({
      maxSize: maxBytes ?? maxEntries,
      sizeCalculation: maxBytes !== undefined && sizeOf ? sizeOf : () => 1,
      ...(dispose && { dispose: (value: V, key: K) => dispose(value, key) }),
    });
    this.#maxEntries = maxEntries;
  }

  override set(key: K, value: V | undefined, options?: LRUCache.SetOptions<K, V, unknown>): this {
    super.set(key, value, options);
    while (this.size > this.#maxEntries) this.pop();
    return this;
  }
}
