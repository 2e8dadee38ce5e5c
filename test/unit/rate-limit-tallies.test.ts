import { TallyTable, countsOf, settleFlush, takeForFlush } from '../../src/services/rate-limit-tallies';

const W = 60_000;
const idle = () => false;

describe('rate-limit tallies in memory', () => {
  it('keeps the current window and the one before, nothing older', () => {
    const table = new TallyTable(10);
    const k = table.at('a', 0, W, idle);
    k.current.pending = 7;
    expect(countsOf(table.at('a', W, W, idle))).toEqual({ current: 0, previous: 7 });
    table.at('a', W, W, idle).current.pending = 2;
    expect(countsOf(table.at('a', 2 * W, W, idle))).toEqual({ current: 0, previous: 2 });
    expect(table.at('a', 2 * W, W, idle).current.prior?.prior).toBeUndefined();
    expect(countsOf(table.at('a', 5 * W, W, idle))).toEqual({ current: 0, previous: 0 }); // a gap: nothing weighs
  });

  it('reads back every instance sum for both windows; the next hit adds to them', () => {
    const table = new TallyTable(10);
    const k = table.at('a', W, W, idle);
    k.current.pending = 3;
    k.current.counted = 3;
    const taken = takeForFlush(k);
    k.current.pending += 1; // a hit while the flush is in flight
    expect(countsOf(k)).toEqual({ current: 4, previous: 0 });
    settleFlush(taken, { current: 10, previous: 25 }, 0);
    expect(countsOf(k)).toEqual({ current: 11, previous: 25 });
    expect(k.current.flushedThrough).toBe(3);
  });

  it('holds at most maxKeys keys: the oldest idle one makes room, and a sweep drops keys no longer weighed', () => {
    const table = new TallyTable(3);
    for (const key of ['a', 'b', 'c']) table.at(key, 0, W, idle);
    const busy = (k: { key: string }) => k.key === 'a';
    table.at('d', 0, W, busy); // 'a' has hits to write: 'b' goes
    expect(['a', 'b', 'c', 'd'].map((key) => table.get(key) !== undefined)).toEqual([true, false, true, true]);
    expect(table.size).toBe(3);

    table.at('c', W, W, idle);
    table.sweep(2 * W, idle); // 'a' and 'd' counted in window 0, which no longer weighs at 2W; 'c' did in W
    expect(['a', 'c', 'd'].map((key) => table.get(key) !== undefined)).toEqual([false, true, false]);
  });
});
