import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';
import { tokensForCode } from '../support/code-tokens';
import { eventually } from '../support/eventually';
import { createAccessTokenCache, type LiveAccessToken } from '../../src/services/access-token-cache';
import type { Notifications } from '../../src/db/notifications';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function issued(scopes?: string[]) {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  const { access_token } = await tokensForCode(t.app, t.services, { p, c, u, scopes });
  return { p, c, u, accessToken: access_token };
}

const userinfo = (token: string) => request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${token}`);

describe('access-token cache invalidation', () => {
  // As another instance would revoke: straight to the database, bypassing this process. Access
  // tokens have no row; each grant they live by tells the caches when it ends.
  it.each([
    [
      'its refresh family',
      ['openid', 'offline_access'],
      'UPDATE refresh_token_families SET revoked_at = now() WHERE user_id = ?',
    ],
    [
      'its code (no refresh token)',
      ['openid'],
      'UPDATE authorization_codes SET tokens_revoked_at = now() WHERE user_id = ?',
    ],
    ['its user (disabled)', ['openid'], 'UPDATE users SET disabled_at = now() WHERE id = ?'],
  ])(
    'a revocation of %s written by another process (plain SQL) reaches the cache through NOTIFY',
    async (_, scopes, sql) => {
      const ctx = await issued(scopes);
      await userinfo(ctx.accessToken).expect(200);
      await userinfo(ctx.accessToken).expect(200); // now served from the cache, if LISTEN is up
      await t.database.db.raw(sql, [ctx.u.id]);
      expect(await eventually(async () => (await userinfo(ctx.accessToken)).status === 401)).toBe(true);
    },
  );

  it('a profile change written elsewhere shows in the next userinfo', async () => {
    const ctx = await issued();
    expect((await userinfo(ctx.accessToken).expect(200)).body.given_name).toBe('Ada');
    await t.database.db.raw("UPDATE users SET given_name = 'Augusta', updated_at = now() WHERE id = ?", [ctx.u.id]);
    expect(await eventually(async () => (await userinfo(ctx.accessToken)).body.given_name === 'Augusta')).toBe(true);
  });

  it('a revocation through this process takes effect on the very next request', async () => {
    const ctx = await issued();
    await userinfo(ctx.accessToken).expect(200);
    await request(t.app)
      .post('/oauth/revoke')
      .type('form')
      .send({ token: ctx.accessToken, platform_guid: ctx.p.id })
      .expect(200);
    await userinfo(ctx.accessToken).expect(401);
  });
});

describe('access-token cache memory', () => {
  const METRICS_TOKEN = 'metrics-token-for-the-cache-test';
  let m: Awaited<ReturnType<typeof buildTestApp>>;
  beforeAll(async () => {
    m = await buildTestApp({ METRICS_TOKEN });
  });
  afterAll(() => m.close());

  const cached = async () => {
    const text = (await request(m.app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200))
      .text;
    return Number(/^latchkey_access_token_cache_entries (\d+)$/m.exec(text)?.[1]);
  };

  it('a refresh drops the access tokens of its grant that it superseded', async () => {
    if (process.env.TEST_DATABASE_KIND === 'embedded') return; // no LISTEN on the embedded database: nothing is cached there
    const p = await buildPlatform(m.services);
    const c = await buildClient(m.services, p.id);
    const u = await buildUser(m.services, p.id);
    const code = await buildCode(m.services, { platformId: p.id, client: c, user: u });
    const first = (
      await request(m.app)
        .post('/oauth/token')
        .auth(c.id, c.secret!)
        .type('form')
        .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id })
        .expect(200)
    ).body;
    const bearer = (token: string) =>
      request(m.app).get('/oauth/userinfo').set('Authorization', `Bearer ${token}`).expect(200);
    expect(
      await eventually(async () => {
        await bearer(first.access_token);
        return (await cached()) === 1;
      }),
    ).toBe(true);
    const second = (
      await request(m.app)
        .post('/oauth/token')
        .auth(c.id, c.secret!)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: first.refresh_token, platform_guid: p.id })
        .expect(200)
    ).body;
    expect(await cached()).toBe(0);
    await bearer(second.access_token);
    expect(await cached()).toBe(1);
    await bearer(first.access_token); // still valid until it expires: read again, from the database
  });
});

describe('access-token cache bounds', () => {
  /** Notifications that are always listening: the cache serves only while LISTEN is up. */
  const listening: Notifications = { subscribe: (_c, h) => h.onListening(true), close: async () => {} };
  const live = (i: number, familyId: string | null = null): LiveAccessToken => ({
    token: {
      jtiHash: `j${i}`,
      platformId: 'p',
      clientId: 'c',
      userId: `u${i % 10}`,
      scope: 'openid',
      anchor: familyId ? { kind: 'family', id: familyId } : { kind: 'code', id: `code${i}` },
      exchanged: false,
      expiresAt: new Date(Date.now() + 3_600_000),
      issuedAt: new Date(),
    },
    user: { id: `u${i % 10}`, givenName: 'x'.repeat(1000) } as unknown as LiveAccessToken['user'],
  });

  it('holds at most its bytes, evicting the least recently used, and keeps its indexes with it', () => {
    const cache = createAccessTokenCache(listening, 64 * 1024);
    const now = new Date();
    for (let i = 0; i < 1000; i++) {
      cache.put(`t${i}`, live(i, `f${i}`), cache.epoch());
      cache.get('t0', now); // the oldest, kept warm
    }
    const { entries, bytes } = cache.stats();
    expect(bytes).toBeLessThanOrEqual(64 * 1024);
    expect(entries).toBeGreaterThan(5);
    expect(entries).toBeLessThan(100);
    expect(cache.get('t0', now)).toBeDefined(); // used all along
    expect(cache.get('t1', now)).toBeUndefined(); // evicted
    expect(cache.get('t999', now)).toBeDefined();
    cache.dropFamily('f999');
    expect(cache.get('t999', now)).toBeUndefined();
    cache.dispose();
  });
});
