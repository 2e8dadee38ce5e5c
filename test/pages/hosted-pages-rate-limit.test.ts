import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform } from '../factories';

// Scale 0.05: the hosted pages' 300 requests a minute per source become 15.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_SCALE: '0.05', TRUST_PROXY: 'loopback' });
});
afterAll(() => t.close());

/** A source address of its own (a fresh /56 in the IPv6 documentation prefix), so no other test or suite counts in it. */
const freshSource = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(1).toString('hex')}00::1`;
const PAGES = [
  '/account',
  '/password/forgot',
  '/interaction/unknown',
  '/oauth/logout',
  '/verify-email?token=x',
  '/account/signed-out',
];
const page = (from: string, path: string, accept = 'text/html') =>
  request(t.app).get(path).set('X-Forwarded-For', from).set('Accept', accept);

describe('hosted pages rate limit', () => {
  it('allows 300 requests a minute per source over all hosted pages, then answers a readable 429 page', async () => {
    const from = freshSource();
    for (let i = 0; i < 15; i++) {
      const res = await page(from, PAGES[i % PAGES.length]);
      expect(res.status).not.toBe(429);
      expect(res.status).toBeLessThan(500);
    }
    const refused = await page(from, '/account');
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.headers['cache-control']).toMatch(/no-store/);
    const seconds = Number(refused.headers['retry-after']);
    expect(Number.isInteger(seconds) && seconds >= 1 && seconds <= 120).toBe(true);
    expect(refused.text).toContain('Error 429');
    expect(refused.text).toContain(`Too many requests from your network. Try again in ${seconds} seconds.`);

    // Forms are refused before anything else runs (no CSRF error, no session work).
    expect(
      (
        await request(t.app)
          .post('/password/forgot')
          .set('X-Forwarded-For', from)
          .type('form')
          .send('email=a%40b.example')
      ).status,
    ).toBe(429);
    // A client asking for JSON gets the spec's error body.
    expectOAuthError(await page(from, '/account', 'application/json'), 429, 'too_many_requests');
    // Other sources are untouched, and so are the spec endpoints of this source.
    expect((await page(freshSource(), '/account')).status).not.toBe(429);
    const p = await buildPlatform(t.services);
    expect((await request(t.app).get(`/oauth/jwks?platform_guid=${p.id}`).set('X-Forwarded-For', from)).status).toBe(
      200,
    );
  });

  it('leaves the hosted pages unlimited at scale 0', async () => {
    const off = await buildTestApp({ RATE_LIMIT_SCALE: '0', TRUST_PROXY: 'loopback' });
    try {
      const from = freshSource();
      for (let i = 0; i < 20; i++)
        expect((await request(off.app).get('/password/forgot').set('X-Forwarded-For', from)).status).not.toBe(429);
    } finally {
      await off.close();
    }
  });
});
