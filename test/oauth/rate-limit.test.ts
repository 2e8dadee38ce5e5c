import net from 'node:net';
import express from 'express';
import request from 'supertest';
import { randomBytes, randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT, UnsecuredJWT } from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';
import { createRateLimits, RATE_LIMITS } from '../../src/http/middleware/rate-limit';
import type { Services } from '../../src/services';
import type { Platform } from '../../src/repositories/platform.repository';
import type { ClientRow } from '../../src/repositories/client.repository';

// Scale 0.05: discovery 5/min, jwks 5, authorize 3, token/userinfo/introspect 6, revoke 3.
const SCALE = { RATE_LIMIT_SCALE: '0.05' };
type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
const opened: TestApp[] = [];
async function open(overrides: Record<string, string> = {}, now?: () => Date): Promise<TestApp> {
  const t = await buildTestApp({ ...SCALE, ...overrides }, now);
  opened.push(t);
  return t;
}
// Each test closes its apps: the embedded database serves a bounded number of connections.
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

const discovery = (t: TestApp, platformId: string) =>
  request(t.app).get(`/.well-known/openid-configuration?platform_guid=${platformId}`);

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
  app.use(createRateLimits(s, s.deps)(endpoint), (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

const basic = (id: string, secret = 's3cret') =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${secret}`).toString('base64')}`;
const mixedCase = (id: string) => [...id].map((ch, i) => (i % 2 ? ch.toUpperCase() : ch)).join('');

/** A live access token of the client, issued through the real service (no request is counted). */
async function liveAccessToken(t: TestApp, platform: Platform, client: ClientRow): Promise<string> {
  const user = await buildUser(t.services, platform.id);
  const code = await buildCode(t.services, { platformId: platform.id, client, user, scopes: ['openid'] });
  const issued = await t.services.grants.exchangeAuthorizationCode(
    { platform, client },
    { code, redirect_uri: client.redirectUris[0] },
  );
  return issued.accessToken;
}

describe('rate limits', () => {
  it('puts X-RateLimit-* on normal responses of discovery and JWKS', async () => {
    const t = await open();
    const p = await buildPlatform(t.services);
    for (const [path, limit] of [
      ['/.well-known/openid-configuration', 5],
      ['/oauth/jwks', 5],
    ] as const) {
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
    [
      'authorize',
      3,
      (t: TestApp, g: string) => request(t.app).get(`/oauth/authorize?platform_guid=${g}&client_id=nope`),
    ],
    [
      'token',
      6,
      (t: TestApp, g: string) =>
        request(t.app)
          .post('/oauth/token')
          .type('form')
          .send(`platform_guid=${g}&grant_type=authorization_code&code=x&client_id=c`),
    ],
    [
      'userinfo',
      6,
      (t: TestApp, g: string) =>
        request(t.app).get(`/oauth/userinfo?platform_guid=${g}`).set('Authorization', 'Bearer abc'),
    ],
    [
      'introspect',
      6,
      (t: TestApp, g: string) =>
        request(t.app).post('/oauth/introspect').type('form').send(`platform_guid=${g}&token=x`),
    ],
    [
      'revoke',
      3,
      (t: TestApp, g: string) => request(t.app).post('/oauth/revoke').type('form').send(`platform_guid=${g}&token=x`),
    ],
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
    const send = () =>
      request(t.app).get(`/oauth/authorize?platform_guid=${p.id}&client_id=nope`).set('Accept', 'text/html');
    expect(await statuses(4, send)).toEqual([400, 400, 400, 429]);
    const res = await send();
    expectOAuthError(res, 429, 'too_many_requests');
    expect(res.body.error_description).toBe(`Rate limit exceeded; retry in ${res.headers['retry-after']} seconds`);
  });

  it('keys the real token and userinfo endpoints by the authenticated client, not by IP', async () => {
    const t = await open();
    const p = await buildPlatform(t.services);
    const clientA = await buildClient(t.services, p.id);
    const clientB = await buildClient(t.services, p.id);
    const token = (auth: string) =>
      request(t.app)
        .post('/oauth/token')
        .set('Authorization', auth)
        .type('form')
        .send(
          `platform_guid=${p.id}&grant_type=authorization_code&code=bogus&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback`,
        );
    expect(await statuses(7, () => token(basic(clientA.id, clientA.secret!)))).toEqual([...Array(6).fill(400), 429]);
    expect((await token(basic(clientB.id, clientB.secret!))).status).toBe(400);

    const tokenA = await liveAccessToken(t, p, clientA);
    const tokenB = await liveAccessToken(t, p, clientB);
    const userinfo = (bearer: string) =>
      request(t.app).get(`/oauth/userinfo?platform_guid=${p.id}`).set('Authorization', `Bearer ${bearer}`);
    expect(await statuses(7, () => userinfo(tokenA))).toEqual([...Array(6).fill(200), 429]);
    expect((await userinfo(tokenB)).status).toBe(200);
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
    expect(res.text).toBe(
      '{"error":"too_many_requests","error_description":"Rate limit exceeded; retry in 65 seconds"}',
    );
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

  it('counts an authenticated client in one bucket, whatever its form of authentication; another spelling of its id buys no new one', async () => {
    const t = await open();
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const other = await buildClient(t.services, p.id);
    const grant = `platform_guid=${p.id}&grant_type=authorization_code&code=bogus&redirect_uri=x`;
    const viaBasic = (id: string, secret = c.secret!) =>
      request(t.app).post('/oauth/token').set('Authorization', basic(id, secret)).type('form').send(grant);
    const viaPost = (id: string) =>
      request(t.app)
        .post('/oauth/token')
        .type('form')
        .send(`${grant}&client_id=${id}&client_secret=${encodeURIComponent(c.secret!)}`);
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await (i % 2 ? viaPost(c.id) : viaBasic(c.id));
      expect(res.status).toBe(400); // authenticated; the bogus code is the grant's error
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    expectOAuthError(await viaPost(c.id), 429, 'too_many_requests');
    // Upper or mixed case, with the right secret: either the same client (and bucket) or an unknown
    // one counted per source address, never a fresh bucket in which the grant is tried.
    for (const variant of [c.id.toUpperCase(), mixedCase(c.id)]) {
      for (const res of [await viaBasic(variant), await viaPost(variant)]) expect([401, 429]).toContain(res.status);
    }
    // Another client of the same platform has a bucket of its own.
    expect((await viaBasic(other.id, other.secret!)).headers['x-ratelimit-remaining']).toBe('5');
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
    const remaining = burst
      .filter((r) => r.status === 200)
      .map((r) => r.headers['x-ratelimit-remaining'])
      .sort();
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
    const known = await request(down.app).get(
      '/.well-known/openid-configuration?platform_guid=00000000-0000-4000-8000-000000000000',
    );
    expectOAuthError(known, 503, 'temporarily_unavailable');

    const noRedis = await open({ REDIS_URL: 'redis://127.0.0.1:1' });
    const p = await buildPlatform(noRedis.services);
    expect(await statuses(7, () => discovery(noRedis, p.id))).toEqual(Array(7).fill(200));
  });
});

/** A source address of its own (a fresh /56 in the IPv6 documentation prefix), so no other test or suite counts in it. */
const freshSource = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(1).toString('hex')}00::1`;

describe('rate limits count a client only once it has authenticated', () => {
  const victimSends = {
    token: (c: { id: string; secret: string | null }) =>
      `grant_type=authorization_code&code=bogus&redirect_uri=x&client_id=${c.id}&client_secret=${encodeURIComponent(c.secret!)}`,
    introspect: (c: { id: string; secret: string | null }) =>
      `token=x&client_id=${c.id}&client_secret=${encodeURIComponent(c.secret!)}`,
    revoke: (c: { id: string; secret: string | null }) =>
      `token=x&client_id=${c.id}&client_secret=${encodeURIComponent(c.secret!)}`,
  };

  it.each([
    ['token', 6, 400],
    ['introspect', 6, 200],
    ['revoke', 3, 200],
  ] as const)(
    "%s: junk naming a victim client spends its sender's source bucket, never the victim's",
    async (endpoint, limit, victimStatus) => {
      const t = await open({ TRUST_PROXY: 'loopback' });
      const p = await buildPlatform(t.services);
      const victim = await buildClient(t.services, p.id);
      const attacker = freshSource();
      const post = (from: string, body: string, auth?: string) => {
        const r = request(t.app).post(`/oauth/${endpoint}`).set('X-Forwarded-For', from).type('form');
        return (auth ? r.set('Authorization', auth) : r).send(`platform_guid=${p.id}&${body}`);
      };
      const params = 'grant_type=authorization_code&code=x&redirect_uri=x&token=x'; // what each endpoint reads; the rest is ignored
      const junk = [
        () => post(attacker, `${params}&client_id=${victim.id}`), // named in the body, no secret
        () => post(attacker, params, basic(victim.id, 'wrong')), // Basic with a wrong secret
        () => post(attacker, `${params}&client_id=${victim.id}&client_secret=wrong`), // client_secret_post, wrong secret
        () => post(attacker, params, basic(victim.id.toUpperCase(), 'wrong')), // a case variant
        () => post(attacker, `${params}&client_id=${randomUUID()}&client_secret=wrong`), // a random id
      ];
      const answers: request.Response[] = [];
      for (let i = 0; i < limit + 2; i++) answers.push(await junk[i % junk.length]());
      expect(answers.slice(0, limit).map((r) => r.status)).not.toContain(429);
      expect(answers.map((r) => r.headers['x-ratelimit-remaining'])).toEqual([
        ...Array.from({ length: limit }, (_, i) => String(limit - 1 - i)),
        '0',
        '0',
      ]);
      expectOAuthError(answers[limit], 429, 'too_many_requests'); // rather than invalid_client
      expectOAuthError(answers[limit + 1], 429, 'too_many_requests');

      // The victim, from elsewhere, still has its whole minute.
      const mine = freshSource();
      const own: string[] = [];
      for (let i = 0; i < limit; i++) {
        const res = await post(mine, victimSends[endpoint](victim));
        expect(res.status).toBe(victimStatus);
        own.push(res.headers['x-ratelimit-remaining']);
      }
      expect(own).toEqual(Array.from({ length: limit }, (_, i) => String(limit - 1 - i)));
      expectOAuthError(await post(mine, victimSends[endpoint](victim)), 429, 'too_many_requests');
      // And its own count is its own: from a third address it is still refused.
      expect((await post(freshSource(), victimSends[endpoint](victim))).status).toBe(429);
    },
  );

  it('token: requests of a public client, which proves nothing by naming itself, count per source address', async () => {
    const t = await open({ TRUST_PROXY: 'loopback' });
    const p = await buildPlatform(t.services);
    const spa = await buildClient(t.services, p.id, { type: 'public' });
    const from = (ip: string) =>
      request(t.app)
        .post('/oauth/token')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send(
          `platform_guid=${p.id}&grant_type=authorization_code&code=bogus&redirect_uri=x&client_id=${spa.id}&code_verifier=${'a'.repeat(43)}`,
        );
    const attacker = freshSource();
    expect(await statuses(7, () => from(attacker))).toEqual([...Array(6).fill(400), 429]);
    expect((await from(freshSource())).headers['x-ratelimit-remaining']).toBe('5');
  });

  it('revoke: without credentials the source address is counted, whatever client_id the body names', async () => {
    const t = await open({ TRUST_PROXY: 'loopback' });
    const p = await buildPlatform(t.services);
    const victim = await buildClient(t.services, p.id);
    const anonymous = freshSource();
    const revoke = (ip: string, body: string) =>
      request(t.app)
        .post('/oauth/revoke')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send(`platform_guid=${p.id}&token=x&${body}`);
    expect(await statuses(4, () => revoke(anonymous, `client_id=${victim.id}`))).toEqual([200, 200, 200, 429]);
    const authenticated = await revoke(
      anonymous,
      `client_id=${victim.id}&client_secret=${encodeURIComponent(victim.secret!)}`,
    );
    expect([authenticated.status, authenticated.headers['x-ratelimit-remaining']]).toEqual([200, '2']);
  });

  it("userinfo: forged and badly signed tokens naming a victim client spend their sender's source bucket", async () => {
    const t = await open({ TRUST_PROXY: 'loopback' });
    const p = await buildPlatform(t.services);
    const victim = await buildClient(t.services, p.id);
    const live = await liveAccessToken(t, p, victim);
    const claims = decodeJwt(live);
    const { kid } = decodeProtectedHeader(live);
    const forged = new UnsecuredJWT({ ...claims }).encode();
    const badSignature = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS512', kid })
      .sign(randomBytes(64));
    const userinfo = (ip: string, bearer: string) =>
      request(t.app).get('/oauth/userinfo').set('X-Forwarded-For', ip).set('Authorization', `Bearer ${bearer}`);

    const attacker = freshSource();
    const junk: request.Response[] = [];
    for (let i = 0; i < 8; i++) junk.push(await userinfo(attacker, i % 2 ? forged : badSignature));
    expect(junk.map((r) => r.status)).toEqual([...Array(6).fill(401), 429, 429]);
    expectOAuthError(junk[6], 429, 'too_many_requests');

    const mine = freshSource();
    const own: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await userinfo(mine, live);
      expect(res.status).toBe(200);
      own.push(res.headers['x-ratelimit-remaining']);
    }
    expect(own).toEqual(['5', '4', '3', '2', '1', '0']);
    expect((await userinfo(freshSource(), live)).status).toBe(429); // the client's bucket, from anywhere
  });

  it('answers 429 instead of invalid_client once the source has spent its bucket, with the spec headers', async () => {
    const t = await open({ TRUST_PROXY: 'loopback' });
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const from = freshSource();
    // Wrong secrets for a real client and for made-up ones: all of them count in the source's bucket.
    const wrong = (id: string) =>
      request(t.app)
        .post('/oauth/introspect')
        .set('X-Forwarded-For', from)
        .set('Authorization', basic(id, 'wrong'))
        .type('form')
        .send(`platform_guid=${p.id}&token=x`);
    for (let i = 0; i < 6; i++) {
      const res = await wrong(i % 2 ? c.id : randomUUID());
      expectOAuthError(res, 401, 'invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic/);
    }
    const refused = await wrong(randomUUID());
    expectOAuthError(refused, 429, 'too_many_requests');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.headers['x-ratelimit-limit']).toBe('6');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
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

    // An authenticated client's count is joint too; a failed authentication counts its source.
    const c = await buildClient(a.services, p.id);
    const token = (t: TestApp, secret: string) =>
      request(t.app)
        .post('/oauth/token')
        .set('Authorization', basic(c.id, secret))
        .type('form')
        .send(`platform_guid=${p.id}&grant_type=authorization_code&code=bogus&redirect_uri=x`);
    expect((await token(a, 'wrong')).status).toBe(401);
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) seen.push((await token(i % 2 ? b : a, c.secret!)).headers['x-ratelimit-remaining']);
    expect(seen).toEqual(['5', '4', '3', '2', '1', '0']);
    expect((await token(b, c.secret!)).status).toBe(429);
  });
});
