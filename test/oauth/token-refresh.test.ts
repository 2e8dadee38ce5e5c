import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';

let t: Awaited<ReturnType<typeof buildTestApp>>;
let later: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
  later = await buildTestApp({}, () => new Date(Date.now() + 11_000)); // past the 10 s reuse grace window
});
afterAll(async () => {
  await t.close();
  await later.close();
});

async function issued(app = t) {
  const p = await buildPlatform(app.services);
  const c = await buildClient(app.services, p.id);
  const u = await buildUser(app.services, p.id);
  const code = await buildCode(app.services, { platformId: p.id, client: c, user: u });
  const res = await request(app.app)
    .post('/oauth/token')
    .auth(c.id, c.secret!)
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id })
    .expect(200);
  return { p, c, u, tokens: res.body };
}

const refresh = (
  app: typeof t,
  ctx: { p: { id: string }; c: { id: string; secret: string | null } },
  refreshToken: string,
  extra: Record<string, string> = {},
) =>
  request(app.app)
    .post('/oauth/token')
    .auth(ctx.c.id, ctx.c.secret!)
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken, platform_guid: ctx.p.id, ...extra });

const introspect = (ctx: { p: { id: string }; c: { id: string; secret: string | null } }, token: string) =>
  request(t.app)
    .post('/oauth/introspect')
    .auth(ctx.c.id, ctx.c.secret!)
    .type('form')
    .send({ token, platform_guid: ctx.p.id })
    .expect(200);

const userinfo = (app: typeof t, platformId: string, accessToken: string) =>
  request(app.app).get(`/oauth/userinfo?platform_guid=${platformId}`).set('Authorization', `Bearer ${accessToken}`);

describe('POST /oauth/token — refresh_token', () => {
  it('returns a new access token and rotates the refresh token', async () => {
    const ctx = await issued();
    const res = await refresh(t, ctx, ctx.tokens.refresh_token).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.access_token).not.toBe(ctx.tokens.access_token);
    expect(res.body.refresh_token).toMatch(/^rt_/);
    expect(res.body.refresh_token).not.toBe(ctx.tokens.refresh_token);
    expect(res.body.scope).toBe('openid profile email offline_access');
    expect(res.body.id_token).toEqual(expect.any(String));
    await userinfo(t, ctx.p.id, res.body.access_token).expect(200);
  });

  it('within the grace window a replay returns the same successor and a fresh access token', async () => {
    const ctx = await issued();
    const a = await refresh(t, ctx, ctx.tokens.refresh_token).expect(200);
    const b = await refresh(t, ctx, ctx.tokens.refresh_token).expect(200);
    expect(b.body.refresh_token).toBe(a.body.refresh_token);
    expect(b.body.access_token).not.toBe(a.body.access_token);
    await userinfo(t, ctx.p.id, a.body.access_token).expect(200);
    await userinfo(t, ctx.p.id, b.body.access_token).expect(200);
    expect((await introspect(ctx, ctx.tokens.refresh_token)).body).toEqual({ active: false });
    const next = await refresh(t, ctx, a.body.refresh_token).expect(200);
    expect(next.body.refresh_token).not.toBe(a.body.refresh_token);
  });

  it('8 concurrent replays of a rotated token get one successor; the family keeps exactly one live refresh token', async () => {
    const ctx = await issued();
    const first = await refresh(t, ctx, ctx.tokens.refresh_token).expect(200);
    const replays = await Promise.all(Array.from({ length: 8 }, () => refresh(t, ctx, ctx.tokens.refresh_token)));
    expect(replays.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(replays.map((r) => r.body.refresh_token))).toEqual(new Set([first.body.refresh_token]));
    expect(new Set(replays.map((r) => r.body.access_token)).size).toBe(8);
    const families = await t.database.db('refresh_token_families').where({ client_id: ctx.c.id });
    expect(families).toHaveLength(1);
    const rows = await t.database.db('refresh_tokens').where({ family_id: families[0].id });
    expect(rows).toHaveLength(2);
    expect(rows.filter((r) => r.rotated_at === null)).toHaveLength(1);
    expect((await introspect(ctx, first.body.refresh_token)).body).toMatchObject({ active: true });
    expect((await introspect(ctx, ctx.tokens.refresh_token)).body).toEqual({ active: false });
  });

  it('a replay after the successor was itself rotated is invalid_grant inside the window and revokes nothing', async () => {
    const ctx = await issued();
    const a = await refresh(t, ctx, ctx.tokens.refresh_token).expect(200);
    const moved = await refresh(t, ctx, a.body.refresh_token).expect(200);
    expectOAuthError(await refresh(t, ctx, ctx.tokens.refresh_token), 400, 'invalid_grant');
    await userinfo(t, ctx.p.id, moved.body.access_token).expect(200);
    expect((await introspect(ctx, moved.body.refresh_token)).body).toMatchObject({ active: true });
    await refresh(t, ctx, moved.body.refresh_token).expect(200);
  });

  it('after the grace window a rotated token revokes the whole family and its access tokens', async () => {
    const ctx = await issued();
    const rotated = await refresh(t, ctx, ctx.tokens.refresh_token).expect(200);
    const reuse = await refresh(later, ctx, ctx.tokens.refresh_token);
    expectOAuthError(reuse, 400, 'invalid_grant');
    expectOAuthError(await refresh(t, ctx, rotated.body.refresh_token), 400, 'invalid_grant');
    expectOAuthError(await userinfo(t, ctx.p.id, rotated.body.access_token), 401, 'invalid_token');
    expectOAuthError(await userinfo(t, ctx.p.id, ctx.tokens.access_token), 401, 'invalid_token');
  });

  it('binds the refresh token to its client', async () => {
    const ctx = await issued();
    const other = await buildClient(t.services, ctx.p.id);
    expectOAuthError(await refresh(t, { p: ctx.p, c: other }, ctx.tokens.refresh_token), 400, 'invalid_grant');
    await refresh(t, ctx, ctx.tokens.refresh_token).expect(200); // not consumed by the failed attempt
  });

  it('refuses unknown, garbage and other-platform tokens', async () => {
    const ctx = await issued();
    expectOAuthError(await refresh(t, ctx, 'rt_nope'), 400, 'invalid_grant');
    const other = await issued();
    expectOAuthError(await refresh(t, ctx, other.tokens.refresh_token), 400, 'invalid_grant');
  });

  it('may narrow the scope; scopes beyond the grant are dropped silently', async () => {
    const ctx = await issued();
    const narrowed = await refresh(t, ctx, ctx.tokens.refresh_token, { scope: 'openid email' }).expect(200);
    expect(narrowed.body.scope).toBe('openid email offline_access');
    const ui = await userinfo(t, ctx.p.id, narrowed.body.access_token).expect(200);
    expect(ui.body.given_name).toBeUndefined();
    const widened = await refresh(t, ctx, narrowed.body.refresh_token, { scope: 'openid phone' }).expect(200);
    expect(widened.body.scope).toBe('openid offline_access');
  });

  it('refuses an expired refresh token', async () => {
    const short = await buildTestApp({ REFRESH_TOKEN_TTL_SECONDS: '1' });
    try {
      const ctx = await issued(short);
      const future = await buildTestApp({}, () => new Date(Date.now() + 5_000));
      try {
        expectOAuthError(await refresh(future, ctx, ctx.tokens.refresh_token), 400, 'invalid_grant');
      } finally {
        await future.close();
      }
    } finally {
      await short.close();
    }
  });

  it('50 concurrent refreshes of one token within the grace window all succeed with one successor in one family', async () => {
    const ctx = await issued();
    const results = await Promise.all(Array.from({ length: 50 }, () => refresh(t, ctx, ctx.tokens.refresh_token)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.refresh_token)).size).toBe(1);
    const families = await t.database.db('refresh_token_families').where({ client_id: ctx.c.id });
    expect(families).toHaveLength(1);
    const rows = await t.database.db('refresh_tokens').where({ family_id: families[0].id });
    expect(rows).toHaveLength(2);
    expect(rows.filter((r) => r.rotated_at === null)).toHaveLength(1);
  });
});
