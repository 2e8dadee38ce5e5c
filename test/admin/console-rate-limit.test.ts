import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { buildTestApp } from '../helpers';

// Scale 0.05: the hosted pages' 300 requests a minute per source become 15; the console counts in the same limit.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_SCALE: '0.05', TRUST_PROXY: 'loopback' });
});
afterAll(() => t.close());

const freshSource = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(1).toString('hex')}00::1`;

describe('admin console rate limit', () => {
  it('counts the console under the hosted pages limit per source, before any session or CSRF work; the admin API is not counted there', async () => {
    const from = freshSource();
    for (let i = 0; i < 15; i++)
      expect(
        (
          await request(t.app)
            .get(i % 2 ? '/admin/sign-in' : '/admin/platforms')
            .set('X-Forwarded-For', from)
        ).status,
      ).not.toBe(429);
    const refused = await request(t.app)
      .post('/admin/sign-in')
      .set('X-Forwarded-For', from)
      .type('form')
      .send({ email: 'a@example.com', password: 'x' });
    expect(refused.status).toBe(429);
    expect(refused.headers['cache-control']).toMatch(/no-store/);
    expect(refused.headers['x-frame-options']).toBe('DENY'); // framing is refused before the limit answers
    expect((await request(t.app).get('/admin/sign-in').set('X-Forwarded-For', freshSource())).status).toBe(200);
    // The admin API has its own limiter: this source's console limit does not answer it.
    expect((await request(t.app).get('/admin/api/v1/platforms').set('X-Forwarded-For', from)).status).toBe(401);
  });
});
