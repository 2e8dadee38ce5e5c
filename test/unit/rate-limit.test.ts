import { UnsecuredJWT } from 'jose';
import { rateLimitSubject } from '../../src/http/middleware/rate-limit';
import { msUntilAllowed, slidingEstimate } from '../../src/http/middleware/rate-limit-store';

const req = (r: { authorization?: string; body?: Record<string, unknown>; ip?: string }) =>
  ({ headers: { authorization: r.authorization }, body: r.body ?? {}, ip: r.ip ?? '192.0.2.1' }) as never;
const basic = (raw: string) => `Basic ${Buffer.from(raw).toString('base64')}`;

describe('rateLimitSubject', () => {
  it.each(['token', 'introspect', 'revoke'])('keys %s by the client: Basic first, then body client_id, then IP', (endpoint) => {
    expect(rateLimitSubject(endpoint, req({ authorization: basic('my%3Aapp+1:pa:ss'), body: { client_id: 'other' } }))).toBe('client:my:app 1');
    expect(rateLimitSubject(endpoint, req({ authorization: basic('app:'), body: {} }))).toBe('client:app');
    expect(rateLimitSubject(endpoint, req({ body: { client_id: 'from-body' } }))).toBe('client:from-body');
    expect(rateLimitSubject(endpoint, req({ authorization: basic('no-colon'), body: { client_id: 'b' } }))).toBe('client:b');
    expect(rateLimitSubject(endpoint, req({ authorization: basic('%E0%A4%A:x') }))).toBe('ip:192.0.2.1');
    expect(rateLimitSubject(endpoint, req({ authorization: 'Bearer abc' }))).toBe('ip:192.0.2.1');
    expect(rateLimitSubject(endpoint, req({ body: { client_id: ['a', 'b'] } }))).toBe('ip:192.0.2.1');
  });

  it('keys userinfo by the unverified client_id claim of the access token, else the IP', () => {
    const jwt = new UnsecuredJWT({ client_id: 'rp-1', sub: 'u' }).encode();
    expect(rateLimitSubject('userinfo', req({ authorization: `Bearer ${jwt}` }))).toBe('client:rp-1');
    expect(rateLimitSubject('userinfo', req({ body: { access_token: jwt } }))).toBe('ip:192.0.2.1');
    expect(rateLimitSubject('userinfo', req({ authorization: 'Bearer not.a.jwt' }))).toBe('ip:192.0.2.1');
    expect(rateLimitSubject('userinfo', req({ authorization: `Bearer ${new UnsecuredJWT({ sub: 'u' }).encode()}` }))).toBe('ip:192.0.2.1');
  });

  it.each(['authorize', 'discovery', 'jwks'])('keys %s by source IP only, IPv6 by /56', (endpoint) => {
    expect(rateLimitSubject(endpoint, req({ authorization: basic('app:x'), body: { client_id: 'app' } }))).toBe('ip:192.0.2.1');
    expect(rateLimitSubject(endpoint, req({ ip: '::ffff:203.0.113.9' }))).toBe('ip:203.0.113.9');
    expect(rateLimitSubject(endpoint, req({ ip: '2001:db8:0:1::5' }))).toBe(rateLimitSubject(endpoint, req({ ip: '2001:db8:0:ff::6' })));
  });

  it('hashes very long client ids', () => {
    expect(rateLimitSubject('token', req({ body: { client_id: 'x'.repeat(500) } }))).toMatch(/^client:[0-9a-f]{64}$/);
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
    for (const [p, c, e, l] of [[7, 3, 1, 6], [120, 1, 59_000, 120], [3, 5, 42_000, 4], [50, 50, 30_000, 60]]) allowedAt(p, c, e, l);
  });
});
