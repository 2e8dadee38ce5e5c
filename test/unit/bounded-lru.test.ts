import { BoundedLru } from '../../src/services/bounded-lru';

// The LRU under every per-platform cache: bounded by entries (and bytes when asked), the least
// recently used evicted one at a time, and storage that grows with what it holds.
describe('BoundedLru', () => {
  it('past maxEntries evicts only the least recently used entry', () => {
    const disposed: string[] = [];
    const lru = new BoundedLru<string, number>({ maxEntries: 2, dispose: (_, key) => disposed.push(key) });
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now more recent than b
    lru.set('c', 3);
    expect([...lru.keys()].sort()).toEqual(['a', 'c']);
    expect(disposed).toEqual(['b']);
    lru.set('c', 4); // a replacement is not a new entry
    expect(lru.size).toBe(2);
    expect(lru.get('a')).toBe(1);
  });

  it('with a byte bound, keeps both bounds', () => {
    const lru = new BoundedLru<string, string>({ maxEntries: 3, maxBytes: 10, sizeOf: (value) => value.length });
    lru.set('a', '1234');
    lru.set('b', '1234');
    lru.set('c', '1234'); // 12 bytes: a goes
    expect([...lru.keys()].sort()).toEqual(['b', 'c']);
    lru.set('d', '1');
    lru.set('e', '1'); // 10 bytes but four entries: b goes
    expect([...lru.keys()].sort()).toEqual(['c', 'd', 'e']);
  });

  it('allocates nothing up front for its bound', () => {
    // lru-cache's own `max` would take about 28 bytes a slot here, 560 MB for the twenty.
    const before = process.memoryUsage();
    const held = Array.from({ length: 20 }, () => new BoundedLru<string, string>({ maxEntries: 1_000_000 }));
    const after = process.memoryUsage();
    const grown = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    expect(held).toHaveLength(20);
    expect(grown).toBeLessThan(50 * 1024 * 1024);
  });
});
