import { freshnessSeconds } from '../../src/net/http-freshness';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const of = (headers: Record<string, string>) => freshnessSeconds(new Headers(headers), NOW);

describe('freshness of a response by its headers (RFC 9111 §4.2.1)', () => {
  it('reads max-age, less Age, before Expires', () => {
    expect(of({ 'cache-control': 'public, max-age=600' })).toBe(600);
    expect(of({ 'cache-control': 'max-age="600"' })).toBe(600);
    expect(of({ 'cache-control': 'max-age=600', age: '100' })).toBe(500);
    expect(of({ 'cache-control': 'max-age=60', age: '100' })).toBe(0);
    expect(of({ 'cache-control': 'max-age=600', expires: 'Fri, 27 Nov 2026 12:00:10 GMT' })).toBe(600);
  });

  it('no-store, no-cache, max-age=0 and an invalid max-age mean none', () => {
    expect(of({ 'cache-control': 'no-store' })).toBe(0);
    expect(of({ 'cache-control': 'max-age=600, No-Cache' })).toBe(0);
    expect(of({ 'cache-control': 'max-age=0' })).toBe(0);
    expect(of({ 'cache-control': 'max-age=-1' })).toBe(0);
    expect(of({ 'cache-control': 'max-age=ten' })).toBe(0);
  });

  it('reads Expires against Date, else the clock; an invalid Expires is already stale', () => {
    expect(of({ expires: 'Fri, 27 Nov 2026 13:00:00 GMT' })).toBe(3600);
    expect(of({ expires: 'Fri, 27 Nov 2026 13:00:00 GMT', date: 'Fri, 27 Nov 2026 12:30:00 GMT' })).toBe(1800);
    expect(of({ expires: 'Fri, 27 Nov 2026 11:00:00 GMT' })).toBe(0);
    expect(of({ expires: '0' })).toBe(0);
  });

  it('says nothing without cache headers', () => {
    expect(of({})).toBeUndefined();
    expect(of({ 'cache-control': 'public' })).toBeUndefined();
  });
});
