import { coherentTtlMs, createTtlCache } from '../../src/services/ttl-cache';

describe('createTtlCache', () => {
  it('keeps an entry for ttlMs of the injected clock, undefined included, and loads once while live', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const cache = createTtlCache<string | undefined>(() => now, { ttlMs: 30_000 });
    let loads = 0;
    const load = async () => {
      loads += 1;
      return undefined;
    };
    expect(await cache.getOrLoad('a', load)).toBeUndefined();
    expect(await cache.getOrLoad('a', load)).toBeUndefined();
    expect(loads).toBe(1); // an unknown id is remembered too
    now = new Date(now.getTime() + 29_999);
    expect(cache.get('a')).toEqual({ value: undefined });
    now = new Date(now.getTime() + 1);
    expect(cache.get('a')).toBeUndefined();
    await cache.getOrLoad('a', load);
    expect(loads).toBe(2);
  });

  it('keeps an entry for its own lifetime when set with one', () => {
    let now = 0;
    const cache = createTtlCache<string>(() => new Date(now), { ttlMs: 1000 });
    cache.set('short', 'a', 100);
    cache.set('long', 'b', 5000);
    cache.set('default', 'c');
    now = 999;
    expect([cache.get('short'), cache.get('long'), cache.get('default')]).toEqual([
      undefined,
      { value: 'b' },
      { value: 'c' },
    ]);
    now = 4999;
    expect([cache.get('long'), cache.get('default')]).toEqual([{ value: 'b' }, undefined]);
  });

  it('evicts the least recently used entry when full, and forgets a deleted key', () => {
    const cache = createTtlCache<number>(() => new Date(0), { ttlMs: 1000, max: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('b', 3); // an update does not count as a new entry
    expect([cache.get('a'), cache.get('b')]).toEqual([{ value: 1 }, { value: 3 }]);
    cache.get('a'); // a is now the most recently used
    cache.set('c', 4);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([{ value: 1 }, undefined, { value: 4 }]);
    cache.delete('c');
    expect(cache.get('c')).toBeUndefined();
  });

  it('is bounded in bytes: large values push out the least recently used', () => {
    const cache = createTtlCache<string>(() => new Date(0), { ttlMs: 1000, maxBytes: 64 * 1024 });
    for (let i = 0; i < 100; i++) cache.set(`k${i}`, 'x'.repeat(4000)); // ~8 KB each
    const kept = Array.from({ length: 100 }, (_, i) => cache.get(`k${i}`) !== undefined);
    expect(kept.filter(Boolean).length).toBeLessThanOrEqual(8);
    expect(kept.slice(-5)).toEqual([true, true, true, true, true]); // the newest stay
    expect(kept[0]).toBe(false);
  });

  it('does not keep a load that a delete or a clear overtook (a read begun before a change)', async () => {
    const cache = createTtlCache<string>(() => new Date(0), { ttlMs: 1000 });
    let finish!: (v: string) => void;
    const loading = cache.reload('k', () => new Promise<string>((ok) => (finish = ok)));
    cache.delete('k'); // the change's notification arrives while the read is in flight
    finish('old');
    expect(await loading).toBe('old'); // the caller still gets its answer
    expect(cache.get('k')).toBeUndefined(); // but the next one reads again
    await cache.reload('k', async () => 'new');
    expect(cache.get('k')).toEqual({ value: 'new' });
    const again = cache.reload('k', () => new Promise<string>((ok) => (finish = ok)));
    cache.clear();
    finish('stale');
    await again;
    expect(cache.get('k')).toBeUndefined();
  });

  it('reload remembers only the answers its keep test accepts', async () => {
    const cache = createTtlCache<string | undefined>(() => new Date(0), { ttlMs: 1000 });
    const known = (value: string | undefined) => value !== undefined;
    expect(await cache.reload('gone', async () => undefined, known)).toBeUndefined();
    expect(cache.get('gone')).toBeUndefined(); // not cached: the next read asks again
    await cache.reload('here', async () => 'row', known);
    expect(cache.get('here')).toEqual({ value: 'row' });
  });

  it('lives until changed where notifications keep a cache coherent, else for its own short lifetime', () => {
    expect(coherentTtlMs({}, 30_000)).toBe(600_000);
    expect(coherentTtlMs(undefined, 30_000)).toBe(30_000);
  });
});
