import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(() => t.close());

async function issued() {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
  const res = await request(t.app).post('/oauth/token').auth(c.id, c.secret!).type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id }).expect(200);
  return { p, c, u, accessToken: res.body.access_token as string };
}

const userinfo = (token: string) => request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${token}`);

/** Polls until the condition holds; the cross-instance path (NOTIFY) is asynchronous by nature. */
async function eventually(check: () => Promise<boolean>, ms = 2000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe('access-token cache invalidation', () => {
  it('a revocation written by another process (plain SQL) reaches the cache through NOTIFY', async () => {
    const ctx = await issued();
    await userinfo(ctx.accessToken).expect(200);
    await userinfo(ctx.accessToken).expect(200); // now served from the cache, if LISTEN is up
    // as another instance would: straight to the database, bypassing this process
    await t.database.db.raw('UPDATE access_tokens SET revoked_at = now() WHERE user_id = ?', [ctx.u.id]);
    expect(await eventually(async () => (await userinfo(ctx.accessToken)).status === 401)).toBe(true);
  });

  it('a profile change written elsewhere shows in the next userinfo', async () => {
    const ctx = await issued();
    expect((await userinfo(ctx.accessToken).expect(200)).body.given_name).toBe('Ada');
    await t.database.db.raw("UPDATE users SET given_name = 'Augusta', updated_at = now() WHERE id = ?", [ctx.u.id]);
    expect(await eventually(async () => (await userinfo(ctx.accessToken)).body.given_name === 'Augusta')).toBe(true);
  });

  it('a revocation through this process takes effect on the very next request', async () => {
    const ctx = await issued();
    await userinfo(ctx.accessToken).expect(200);
    await request(t.app).post('/oauth/revoke').type('form').send({ token: ctx.accessToken, platform_guid: ctx.p.id }).expect(200);
    await userinfo(ctx.accessToken).expect(401);
  });
});
