import { clientSubject, sourceSubject } from '../../src/http/middleware/rate-limit';
import { msUntilAllowed, slidingEstimate } from '../../src/http/middleware/rate-limit-store';

describe('rate-limit subjects', () => {
  it('spells one client one way', () => {
    const id = '6f1c1b2e-8a4d-4c3e-9b1a-2f3e4d5c6b7a';
    expect(clientSubject(id)).toBe(`client:${id}`);
    expect(clientSubject(id.toUpperCase())).toBe(`client:${id}`);
  });

  it('keys sources by req.ip, IPv4-mapped as IPv4 and IPv6 by /56', () => {
    expect(sourceSubject({ ip: '192.0.2.1' })).toBe('ip:192.0.2.1');
    expect(sourceSubject({ ip: '::ffff:203.0.113.9' })).toBe('ip:203.0.113.9');
    expect(sourceSubject({ ip: '2001:db8:0:1::5' })).toBe(sourceSubject({ ip: '2001:db8:0:ff::6' }));
    expect(sourceSubject({ ip: '2001:db8:0:1::5' })).not.toBe(sourceSubject({ ip: '2001:db8:0:100::5' }));
    expect(sourceSubject({ ip: undefined })).toBe('ip:unknown');
  });
});

describe('sliding window counter', () => {
  const W = 60_000;
  it('weighs the previous window by its overlap, rounding up', () => {
    expect(slidingEstimate({ previous: 0, current: 3 }, 10_000, W)).toBe(3);
    expect(slidingEstimate({ previous: 6, current: 1 }, 30_000, W)).toBe(4);
    expect(slidingEstimate({ previous: 6, current: 1 }, 50_001, W)).toBe(2);
    expect(slidingEstimate({ previous: 6, current: 1 }, 59_999, W)).toBe(2);
  });

  it('finds the first moment one more request is allowed', () => {
    const allowedAt = (previous: number, current: number, elapsed: number, limit: number) => {
      const wait = msUntilAllowed({ previous, current }, elapsed, W, limit);
      const at = elapsed + wait;
      // In the window the wait lands in, one more hit fits and a millisecond earlier it did not.
      const fits = (t: number) =>
        t < W
          ? slidingEstimate({ previous, current: current + 1 }, t, W) <= limit
          : t < 2 * W
            ? slidingEstimate({ previous: current, current: 1 }, t - W, W) <= limit
            : true;
      expect(fits(at)).toBe(true);
      if (wait > 0) expect(fits(at - 1)).toBe(false);
      return wait;
    };
    expect(allowedAt(0, 6, 15_000, 5)).toBe(65_000); // only the next window helps
    expect(allowedAt(10, 2, 15_000, 5)).toBe(33_000); // the previous window fades within this one
    expect(allowedAt(0, 2, 15_000, 1)).toBe(105_000); // limit 1: two windows
    for (const [p, c, e, l] of [
      [7, 3, 1, 6],
      [120, 1, 59_000, 120],
      [3, 5, 42_000, 4],
      [50, 50, 30_000, 60],
    ])
      allowedAt(p, c, e, l);
  });
});
