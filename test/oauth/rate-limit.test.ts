import net from 'node:net';
import express from 'express';
import request from 'supertest';
import { UnsecuredJWT } from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform } from '../factories';
import { createRateLimits, RATE_LIMITS } from '../../src/http/middleware/rate-limit';
import type { Services } from '../../src/services';

// Scale 0.05: discovery 5/min, jwks 5, authorize 3, token/userinfo/introspect 6, revoke 3.
const SCALE = { RATE_LIMIT_SCALE: '0.05' };
type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
const opened: TestApp[] = [];
async function open(overrides: Record<string, string> = {}, now?: () => Date): Promise<TestApp> {
  const t = await buildTestApp({ ...SCALE, ...overrides }, now);
  opened.push(t);
  return t;
}
afterAll(async () => {
  for (const t of opened) await t.close();
});

const discovery = (t: TestApp, platformId: string) => request(t.app).get(`/.well-known/openid-configuration?platform_guid=${platformId}`);

/** Sends n requests one after another; returns the statuses. */
async function statuses(n: number, send: () => request.Test): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send()).status);
  return out;
}

/** A bare app around one named limiter, for endpoints whose routers are not mounted yet. */
function limiterApp(s: Services, endpoint: string) {
  const app = express();
  app.set('trust proxy', s.deps.config.trustProxy);
  app.use(express.urlencoded({ extended: false }));
  app.use(createRateLimits(s)(endpoint), (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

const basic = (id: string, secret = 's3cret') => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${secret}`).toString('base64')}`;

describe('rate limits', () => {
  it('puts X-RateLimit-* on normal responses of discovery and JWKS', async () => {
    const t = await open();
    const p = await buildPlatform(t.services);
    for (const [path, limit] of [['/.well-known/openid-configuration', 5], ['/oauth/jwks', 5]] as const) {
      const res = await request(t.app).get(`${path}?platform_guid=${p.id}`).expect(200);
      expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
      expect(res.headers['x-ratelimit-remaining']).toBe(String(limit - 1));
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    }
    // Error responses of a limited endpoint carry them too.
    const bad = await request(t.app).get('/oauth/jwks?platform_guid=nope');
    expectOAuthError(bad, 400, 'invalid_request');
    expect(bad.headers['x-ratelimit-limit']).toBe('5');
  });

  it.each(Object.entries(RATE_LIMITS))('limits "%s" at %i per minute times the scale', async (endpoint, perMinute) => {
    const t = await open();
    const p = await buildPlatform(t.services);
    const res = await request(limiterApp(t.services, endpoint)).get(`/?platform_guid=${p.id}`).expect(200);
    const limit = Math.max(1, Math.round(perMinute * 0.05));
    expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
    expect(res.headers['x-ratelimit-remaining']).toBe(String(limit - 1));
    expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  });

  it.each([
    ['authorize', 3, (t: TestApp, g: string) => request(t.app).get(`/oauth/authorize?platform_guid=${g}&client_id=nope`)],
    ['token', 6, (t: TestApp, g: string) => request(t.app).post('/oauth/token').type('form').send(`platform_guid=${g}&grant_type=authorization_code&code=x&client_id=c`)],
    ['userinfo', 6, (t: TestApp, g: string) => request(t.app).get(`/oauth/userinfo?platform_guid=${g}`).set('Authorization', 'Bearer abc')],
    ['introspect', 6, (t: TestApp, g: string) => request(t.app).post('/oauth/introspect').type('form').send(`platform_guid=${g}&token=x`)],
    ['revoke', 3, (t: TestApp, g: string) => request(t.app).post('/oauth/revoke').type('form').send(`platform_guid=${g}&token=x`)],
  ] as const)('puts X-RateLimit-* on responses of %s in the app', async (_name, limit, send) => {
    const t = await open();
    const p = await buildPlatform(t.services);
    const res = await send(t, p.id);
    expect(res.status).not.toBe(404);
    expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
    expect(res.headers['x-ratelimit-remaining']).toBe(String(limit - 1));
    expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  });

  it('answers an exceeded /oauth/authorize with the spec JSON too, not the error page', async () => {
    const t = await open();
    const p = await buildPlatform(t.services);
    const send = () => request(t.app).get(`/oauth/authorize?platform_guid=${p.id}&client_id=nope`).set('Accept', 'text/html');
    expect(await statuses(4, send)).toEqual([400, 400, 400, 429]);
    const res = await send();
    expectOAuthError(res, 429, 'too_many_requests');
    expect(res.body.error_description).toBe(`Rate limit exceeded; retry in ${res.headers['retry-after']} seconds`);
  });

  it('keys the real token and userinfo endpoints by client, not by IP', async () => {
    const t = await open();
    const p = await buildPlatform(t.services);
    const { id: clientA, secret } = await buildClient(t.services, p.id);
    const { id: clientB } = await buildClient(t.services, p.id);
    const token = (auth: string) =>
      request(t.app).post('/oauth/token').set('Authorization', auth).type('form').send(`platform_guid=${p.id}&grant_type=authorization_code&code=bogus&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback`);
    expect(await statuses(7, () => token(basic(clientA, secret!)))).toEqual([...Array(6).fill(400), 429]);
    expect((await token(basic(clientB, 'wrong'))).status).toBe(401);

    const claimed = (cid: string) => `Bearer ${new UnsecuredJWT({ client_id: cid }).encode()}`;
    const userinfo = (cid: string) => request(t.app).get(`/oauth/userinfo?platform_guid=${p.id}`).set('Authorization', claimed(cid));
    expect(await statuses(7, () => userinfo(clientA))).toEqual([...Array(6).fill(401), 429]);
    expect((await userinfo(clientB)).status).toBe(401);
  });

  it('answers the request over the limit with the exact 429 and an honest Retry-After', async () => {
    // A clock 15 s into a fixed window: 6 hits there need (60 − 15) + 20 s before the next passes.
    let nowMs = Math.floor(Date.now() / 60_000) * 60_000 + 15_000;
    const t = await open({}, () => new Date(nowMs));
    const p = await buildPlatform(t.services);
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) remaining.push((await discovery(t, p.id).expect(200)).headers['x-ratelimit-remaining']);
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const res = await discovery(t, p.id);
    expect(res.status).toBe(429);
    expect(res.text).toBe('{"error":"too_many_requests","error_description":"Rate limit exceeded; retry in 65 seconds"}');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['retry-after']).toBe('65');
    expect(res.headers['x-ratelimit-limit']).toBe('5');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(res.headers['x-ratelimit-reset']).toBe(String(nowMs / 1000 + 65));

    // Once Retry-After has passed exactly one more gets through: the old window still weighs
    // 40/60 of its 6 hits, where a fixed window would have started afresh at 5.
    nowMs += 65_000;
    const after = await discovery(t, p.id);
    expect(after.status).toBe(200);
    expect(after.headers['x-ratelimit-remaining']).toBe('0');
    expect((await discovery(t, p.id)).status).toBe(429);
  });

  it('counts source IPs apart, trusting X-Forwarded-For only behind a trusted proxy', async () => {
    const proxied = await open({ TRUST_PROXY: 'loopback' });
    const p = await buildPlatform(proxied.services);
    const from = (ip: string) => () => discovery(proxied, p.id).set('X-Forwarded-For', ip);
    expect(await statuses(6, from('203.0.113.1'))).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await from('203.0.113.2')()).status).toBe(200);

    // Not trusted (the default): a forged X-Forwarded-For does not buy a new bucket.
    const direct = await open();
    const q = await buildPlatform(direct.services);
    const forged = (i: number) => discovery(direct, q.id).set('X-Forwarded-For', `198.51.100.${i}`);
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await forged(i)).status);
    expect(codes).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('counts client ids apart on client-keyed endpoints, whatever the form of authentication', async () => {
    const t = await open();
    const p = await buildPlatform(t.services);
    const app = limiterApp(t.services, 'token'); // 6 per minute
    const post = (auth: string | undefined, body: string) => {
      const r = request(app).post('/').type('form');
      return (auth ? r.set('Authorization', auth) : r).send(`platform_guid=${p.id}&${body}`);
    };
    // Basic (form-urlencoded inside) and body client_id land in the same bucket.
    expect(await statuses(3, () => post(basic('client a'), 'grant_type=x'))).toEqual([200, 200, 200]);
    expect(await statuses(4, () => post(undefined, 'client_id=client%20a'))).toEqual([200, 200, 200, 429]);
    expect((await post(basic('client b'), 'grant_type=x')).status).toBe(200);
    expect((await post(undefined, 'client_id=client%20c')).headers['x-ratelimit-remaining']).toBe('5');

    // userinfo: the access token's client_id claim picks the bucket.
    const userinfo = limiterApp(t.services, 'userinfo');
    const token = (cid: string) => `Bearer ${new UnsecuredJWT({ client_id: cid }).encode()}`;
    const get = (cid: string) => request(userinfo).get(`/?platform_guid=${p.id}`).set('Authorization', token(cid));
    expect(await statuses(7, () => get('app-1'))).toEqual([200, 200, 200, 200, 200, 200, 429]);
    expect((await get('app-2')).status).toBe(200);
  });

  it('counts jointly across two instances on one database, atomically under concurrency', async () => {
    const a = await open();
    const b = await open();
    const p = await buildPlatform(a.services);
    const sequential: number[] = [];
    for (let i = 0; i < 6; i++) sequential.push((await discovery(i % 2 ? b : a, p.id)).status);
    expect(sequential).toEqual([200, 200, 200, 200, 200, 429]);

    const q = await buildPlatform(a.services);
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => discovery(i % 2 ? b : a, q.id)));
    expect(burst.map((r) => r.status).sort()).toEqual([...Array(5).fill(200), ...Array(7).fill(429)]);
    const remaining = burst.filter((r) => r.status === 200).map((r) => r.headers['x-ratelimit-remaining']).sort();
    expect(remaining).toEqual(['0', '1', '2', '3', '4']);
  });

  it('raises the limit for a platform with an override, and only for it', async () => {
    const t = await open();
    const raised = await buildPlatform(t.services);
    const other = await buildPlatform(t.services);
    await t.services.platforms.setRateLimit(raised.id, 'discovery', 200); // × 0.05 → 10
    const first = await discovery(t, raised.id).expect(200);
    expect(first.headers['x-ratelimit-limit']).toBe('10');
    expect(await statuses(10, () => discovery(t, raised.id))).toEqual([...Array(9).fill(200), 429]);
    expect((await discovery(t, other.id)).headers['x-ratelimit-limit']).toBe('5');
  });

  it('keeps unknown platform_guids in one bucket, so inventing them buys nothing', async () => {
    const t = await open({ TRUST_PROXY: 'loopback' });
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await request(t.app)
        .get(`/oauth/jwks?platform_guid=00000000-0000-4000-8000-00000000000${i}`)
        .set('X-Forwarded-For', '192.0.2.77');
      codes.push(res.status);
    }
    expect(codes).toEqual([400, 400, 400, 400, 400, 429]);
  });

  it('does nothing at scale 0: no limit, no headers', async () => {
    const t = await open({ RATE_LIMIT_SCALE: '0' });
    const p = await buildPlatform(t.services);
    const codes = await statuses(12, () => discovery(t, p.id));
    expect(codes.every((c) => c === 200)).toBe(true);
    const res = await discovery(t, p.id);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(res.headers['retry-after']).toBeUndefined();
  });

  it('fails open when the counter store is unreachable', async () => {
    const down = await open({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    const unknown = await request(down.app).get('/.well-known/openid-configuration?platform_guid=not-a-uuid');
    expectOAuthError(unknown, 400, 'invalid_request'); // counters failed, the request went on
    expect(unknown.headers['x-ratelimit-limit']).toBeUndefined();
    const known = await request(down.app).get('/.well-known/openid-configuration?platform_guid=00000000-0000-4000-8000-000000000000');
    expectOAuthError(known, 503, 'temporarily_unavailable');

    const noRedis = await open({ REDIS_URL: 'redis://127.0.0.1:1' });
    const p = await buildPlatform(noRedis.services);
    expect(await statuses(7, () => discovery(noRedis, p.id))).toEqual(Array(7).fill(200));
  });
});

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
async function redisReachable(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(500);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

describe('rate limits on Redis', () => {
  it('counts jointly across two instances and keeps nothing in the database', async () => {
    if (!(await redisReachable())) {
      console.warn(`Redis not reachable at ${REDIS_URL}: the Redis store test did not run`);
      return;
    }
    const a = await open({ REDIS_URL });
    const b = await open({ REDIS_URL });
    const p = await buildPlatform(a.services); // a fresh platform: a key prefix of its own
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await discovery(i % 2 ? b : a, p.id)).status);
    expect(codes).toEqual([200, 200, 200, 200, 200, 429]);
    const rows = await a.database.db('rate_limit_counters').where('key', 'like', `%${p.id}%`);
    expect(rows).toEqual([]);
  });
});
