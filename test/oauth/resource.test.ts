import request from 'supertest';
import { SignJWT } from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { tokensForCode } from '../support/code-tokens';

let t: Awaited<ReturnType<typeof buildTestApp>>;
let later: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
  later = await buildTestApp({}, () => new Date(Date.now() + 3601_000));
});
afterAll(async () => {
  await t.close();
  await later.close();
});

async function issued(scopes?: string[], userInput = {}) {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id, userInput);
  return { p, c, u, tokens: await tokensForCode(t.app, t.services, { p, c, u, scopes }) };
}

const userinfo = (platformId: string, token: string, app = t) =>
  request(app.app).get(`/oauth/userinfo?platform_guid=${platformId}`).set('Authorization', `Bearer ${token}`);
const introspect = (ctx: { p: { id: string }; c: { id: string; secret: string | null } }, token: string) =>
  request(t.app)
    .post('/oauth/introspect')
    .auth(ctx.c.id, ctx.c.secret!)
    .type('form')
    .send({ token, platform_guid: ctx.p.id });
const revoke = (platformId: string, token: string) =>
  request(t.app).post('/oauth/revoke').type('form').send({ token, platform_guid: platformId });

describe('GET /oauth/userinfo', () => {
  it('returns sub, human_guid and exactly the claims of the granted scopes', async () => {
    const ctx = await issued(['openid', 'profile', 'email', 'phone', 'address'], { phoneNumber: '+44 20 7946 0958' });
    const res = await userinfo(ctx.p.id, ctx.tokens.access_token).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      sub: ctx.u.id,
      human_guid: ctx.u.id,
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
      preferred_username: 'ada.lovelace',
      birthdate: '1990-12-10',
      picture: `http://issuer.test/avatars/${ctx.p.id}/${ctx.u.id}.svg`,
      updated_at: expect.any(Number),
      email: ctx.u.email,
      email_verified: false,
      phone_number: '+442079460958',
      phone_number_verified: true,
    });
  });

  it('releases only openid claims for scope openid', async () => {
    const ctx = await issued(['openid']);
    expect((await userinfo(ctx.p.id, ctx.tokens.access_token).expect(200)).body).toEqual({
      sub: ctx.u.id,
      human_guid: ctx.u.id,
    });
  });

  it('answers POST with the token in the header', async () => {
    const ctx = await issued(['openid', 'email']);
    const res = await request(t.app)
      .post(`/oauth/userinfo?platform_guid=${ctx.p.id}`)
      .set('Authorization', `Bearer ${ctx.tokens.access_token}`)
      .expect(200);
    expect(res.body.email).toBe(ctx.u.email);
  });

  it.each([
    ['no header', undefined],
    ['garbage', 'Bearer not.a.jwt'],
    ['a wrong scheme', 'Basic abc'],
  ])('refuses %s with 401 invalid_token', async (_label, header) => {
    const p = await buildPlatform(t.services);
    const req = request(t.app).get(`/oauth/userinfo?platform_guid=${p.id}`);
    if (header) req.set('Authorization', header);
    expectOAuthError(await req, 401, 'invalid_token');
  });

  it('refuses a token signed with another key, an expired token and a revoked token', async () => {
    const ctx = await issued();
    const forged = await new SignJWT({ sub: ctx.u.id, jti: 'x' })
      .setProtectedHeader({ alg: 'HS512', kid: 'k' })
      .sign(new Uint8Array(64));
    expectOAuthError(await userinfo(ctx.p.id, forged), 401, 'invalid_token');
    expectOAuthError(await userinfo(ctx.p.id, ctx.tokens.access_token, later), 401, 'invalid_token');
    await revoke(ctx.p.id, ctx.tokens.access_token).expect(200);
    expectOAuthError(await userinfo(ctx.p.id, ctx.tokens.access_token), 401, 'invalid_token');
  });

  it('works without platform_guid: the spec lists only the Authorization header', async () => {
    const ctx = await issued(['openid', 'email']);
    const res = await request(t.app)
      .get('/oauth/userinfo')
      .set('Authorization', `Bearer ${ctx.tokens.access_token}`)
      .expect(200);
    expect(res.body).toEqual({ sub: ctx.u.id, human_guid: ctx.u.id, email: ctx.u.email, email_verified: false });
    expectOAuthError(
      await request(t.app).get('/oauth/userinfo').set('Authorization', 'Bearer garbage'),
      401,
      'invalid_token',
    );
  });

  it('refuses a token of another platform', async () => {
    const a = await issued();
    const b = await issued();
    expectOAuthError(await userinfo(b.p.id, a.tokens.access_token), 401, 'invalid_token');
  });
});

describe('POST /oauth/introspect', () => {
  it('describes an active access token with exactly the spec fields', async () => {
    const ctx = await issued();
    const res = await introspect(ctx, ctx.tokens.access_token).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      active: true,
      sub: ctx.u.id,
      human_guid: ctx.u.id,
      client_id: ctx.c.id,
      scope: 'openid profile email offline_access',
      token_type: 'Bearer',
      exp: expect.any(Number),
      iat: expect.any(Number),
    });
    expect(res.body.exp - res.body.iat).toBe(3600);
  });

  it('describes an active refresh token', async () => {
    const ctx = await issued();
    const res = await introspect(ctx, ctx.tokens.refresh_token).expect(200);
    expect(res.body).toMatchObject({ active: true, sub: ctx.u.id, client_id: ctx.c.id });
  });

  it('answers {"active": false} alone for revoked, unknown, garbage and other-platform tokens', async () => {
    const ctx = await issued();
    const other = await issued();
    for (const token of ['garbage', 'rt_unknown', other.tokens.access_token, other.tokens.refresh_token]) {
      expect((await introspect(ctx, token).expect(200)).body).toEqual({ active: false });
    }
    await revoke(ctx.p.id, ctx.tokens.refresh_token).expect(200);
    expect((await introspect(ctx, ctx.tokens.refresh_token)).body).toEqual({ active: false });
    expect((await introspect(ctx, ctx.tokens.access_token)).body).toEqual({ active: false });
  });

  it('answers {"active": false} for another client\'s tokens, unless the caller is registered as a resource server', async () => {
    const ctx = await issued();
    const neighbour = await buildClient(t.services, ctx.p.id);
    const api = await buildClient(t.services, ctx.p.id, { isResourceServer: true });
    expect(neighbour.isResourceServer).toBe(false);
    for (const token of [ctx.tokens.access_token, ctx.tokens.refresh_token]) {
      expect((await introspect({ p: ctx.p, c: neighbour }, token).expect(200)).body).toEqual({ active: false });
      expect((await introspect({ p: ctx.p, c: api }, token).expect(200)).body).toMatchObject({
        active: true,
        sub: ctx.u.id,
        client_id: ctx.c.id,
      });
      expect((await introspect(ctx, token).expect(200)).body).toMatchObject({ active: true, client_id: ctx.c.id });
    }
    // The access token is now in the verified-token cache: the neighbour still learns nothing.
    expect((await introspect({ p: ctx.p, c: neighbour }, ctx.tokens.access_token)).body).toEqual({ active: false });
  });

  it('a resource server must be a confidential client', async () => {
    const p = await buildPlatform(t.services);
    await expect(buildClient(t.services, p.id, { type: 'public', isResourceServer: true })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('requires confidential client credentials', async () => {
    const ctx = await issued();
    expectOAuthError(
      await request(t.app).post('/oauth/introspect').type('form').send({ token: 'x', platform_guid: ctx.p.id }),
      401,
      'invalid_client',
    );
    const bad = await request(t.app)
      .post('/oauth/introspect')
      .auth(ctx.c.id, 'wrong')
      .type('form')
      .send({ token: 'x', platform_guid: ctx.p.id });
    expectOAuthError(bad, 401, 'invalid_client');
    expect(bad.headers['www-authenticate']).toMatch(/^Basic/);
    const pub = await buildClient(t.services, ctx.p.id, { type: 'public' });
    expectOAuthError(
      await request(t.app)
        .post('/oauth/introspect')
        .type('form')
        .send({ token: 'x', client_id: pub.id, platform_guid: ctx.p.id }),
      401,
      'invalid_client',
    );
  });

  it('accepts client_secret_post and requires token', async () => {
    const ctx = await issued();
    const res = await request(t.app)
      .post('/oauth/introspect')
      .type('form')
      .send({
        token: ctx.tokens.access_token,
        client_id: ctx.c.id,
        client_secret: ctx.c.secret!,
        platform_guid: ctx.p.id,
      })
      .expect(200);
    expect(res.body.active).toBe(true);
    expectOAuthError(
      await request(t.app)
        .post('/oauth/introspect')
        .auth(ctx.c.id, ctx.c.secret!)
        .type('form')
        .send({ platform_guid: ctx.p.id }),
      400,
      'invalid_request',
    );
  });
});

describe('POST /oauth/revoke', () => {
  it('answers 200 with an empty body for valid, unknown and garbage tokens', async () => {
    const ctx = await issued();
    for (const token of [ctx.tokens.access_token, 'rt_unknown', 'garbage']) {
      const res = await revoke(ctx.p.id, token);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
    }
  });

  it('revoking a refresh token revokes the access tokens of its family', async () => {
    const ctx = await issued();
    await revoke(ctx.p.id, ctx.tokens.refresh_token).expect(200);
    expectOAuthError(await userinfo(ctx.p.id, ctx.tokens.access_token), 401, 'invalid_token');
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(ctx.c.id, ctx.c.secret!)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: ctx.tokens.refresh_token, platform_guid: ctx.p.id });
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('requires token and platform_guid', async () => {
    const ctx = await issued();
    expectOAuthError(
      await request(t.app).post('/oauth/revoke').type('form').send({ platform_guid: ctx.p.id }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await request(t.app).post('/oauth/revoke').type('form').send({ token: 'x' }),
      400,
      'invalid_request',
    );
  });

  it("checks credentials when a client sends them, and never revokes another client's token", async () => {
    const ctx = await issued();
    expectOAuthError(
      await request(t.app)
        .post('/oauth/revoke')
        .auth(ctx.c.id, 'wrong')
        .type('form')
        .send({ token: 'x', platform_guid: ctx.p.id }),
      401,
      'invalid_client',
    );
    const other = await buildClient(t.services, ctx.p.id);
    await request(t.app)
      .post('/oauth/revoke')
      .auth(other.id, other.secret!)
      .type('form')
      .send({ token: ctx.tokens.access_token, platform_guid: ctx.p.id })
      .expect(200);
    await userinfo(ctx.p.id, ctx.tokens.access_token).expect(200);
    await request(t.app)
      .post('/oauth/revoke')
      .auth(ctx.c.id, ctx.c.secret!)
      .type('form')
      .send({ token: ctx.tokens.access_token, platform_guid: ctx.p.id })
      .expect(200);
    expectOAuthError(await userinfo(ctx.p.id, ctx.tokens.access_token), 401, 'invalid_token');
  });
});
