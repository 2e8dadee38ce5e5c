import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';

let t: Awaited<ReturnType<typeof buildTestApp>>;
let past: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
  past = await buildTestApp({}, () => new Date(Date.now() - 120_000)); // issues codes that are already expired
});
afterAll(async () => {
  await t.close();
  await past.close();
});

async function setup(type: 'confidential' | 'public' = 'confidential') {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id, { type });
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}

const token = (body: Record<string, string>) => request(t.app).post('/oauth/token').type('form').send(body);
const verifierPair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

describe('POST /oauth/token — authorization_code', () => {
  it('exchanges a code with client_secret_basic and returns the spec token response', async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u, nonce: 'n-1' });
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual([
      'access_token',
      'expires_in',
      'id_token',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    expect(res.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid profile email offline_access',
    });
    expect(res.body.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43,}$/);
    const at = decodeJwt(res.body.access_token);
    expect(at).toMatchObject({ iss: 'http://issuer.test', sub: u.id, human_guid: u.id, client_id: c.id, aud: c.id });
    expect(decodeProtectedHeader(res.body.access_token)).toMatchObject({ alg: 'HS512', kid: expect.any(String) });
    const id = decodeJwt(res.body.id_token);
    expect(decodeProtectedHeader(res.body.id_token)).toEqual({ alg: 'HS512', typ: 'JWT' });
    expect(id).toMatchObject({
      iss: 'http://issuer.test',
      sub: u.id,
      aud: c.id,
      azp: c.id,
      nonce: 'n-1',
      email: u.email,
      given_name: 'Ada',
      family_name: 'Lovelace',
      name: 'Ada Lovelace',
    });
    expect(id.at_hash).toEqual(expect.any(String));
    expect(id.auth_time).toEqual(expect.any(Number));
    expect(id.picture).toMatch(/^http:\/\/issuer\.test\/avatars\//);
  });

  it("keeps the seed access token exactly: HS512 with kid and typ JWT, the spec's claims in the spec's order", async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: c.redirectUris[0],
      client_id: c.id,
      client_secret: c.secret!,
      platform_guid: p.id,
    });
    expect(decodeProtectedHeader(res.body.access_token)).toEqual({ alg: 'HS512', typ: 'JWT', kid: expect.any(String) });
    const at = decodeJwt(res.body.access_token);
    expect(Object.keys(at)).toEqual([
      'iss',
      'sub',
      'human_guid',
      'aud',
      'client_id',
      'scope',
      'jti',
      'iat',
      'exp',
      'token_type',
    ]);
    expect(at).toEqual({
      iss: 'http://issuer.test',
      sub: u.id,
      human_guid: u.id,
      aud: c.id,
      client_id: c.id,
      scope: 'openid profile email offline_access',
      jti: expect.any(String),
      iat: expect.any(Number),
      exp: at.iat! + 3600,
      token_type: 'Bearer',
    });
  });

  it('accepts client_secret_post', async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: c.redirectUris[0],
      client_id: c.id,
      client_secret: c.secret!,
      platform_guid: p.id,
    });
    expect(res.status).toBe(200);
  });

  it('decodes form-urlencoded Basic credentials (RFC 6749 §2.3.1)', async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
    const basic = Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret!)}`).toString('base64');
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: c.redirectUris[0],
      platform_guid: p.id,
    }).set('Authorization', `Basic ${basic}`);
    expect(res.status).toBe(200);
  });

  it('lets a public client authenticate with PKCE alone (none)', async () => {
    const { p, c, u } = await setup('public');
    const { verifier, challenge } = verifierPair();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u, codeChallenge: challenge });
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: c.redirectUris[0],
      client_id: c.id,
      code_verifier: verifier,
      platform_guid: p.id,
    });
    expect(res.status).toBe(200);
    expect(decodeProtectedHeader(res.body.id_token).kid).toEqual(expect.any(String));
  });

  it('refuses a wrong PKCE verifier, a missing one, and a verifier for a code without challenge', async () => {
    const { p, c, u } = await setup('public');
    const { challenge } = verifierPair();
    const base = {
      grant_type: 'authorization_code',
      redirect_uri: c.redirectUris[0],
      client_id: c.id,
      platform_guid: p.id,
    };
    const wrong = await buildCode(t.services, { platformId: p.id, client: c, user: u, codeChallenge: challenge });
    expectOAuthError(
      await token({ ...base, code: wrong, code_verifier: verifierPair().verifier }),
      400,
      'invalid_grant',
    );
    const missing = await buildCode(t.services, { platformId: p.id, client: c, user: u, codeChallenge: challenge });
    expectOAuthError(await token({ ...base, code: missing }), 400, 'invalid_grant');
    const conf = await setup();
    const noChallenge = await buildCode(t.services, { platformId: conf.p.id, client: conf.c, user: conf.u });
    const downgrade = await request(t.app).post('/oauth/token').auth(conf.c.id, conf.c.secret!).type('form').send({
      grant_type: 'authorization_code',
      code: noChallenge,
      redirect_uri: conf.c.redirectUris[0],
      code_verifier: verifierPair().verifier,
      platform_guid: conf.p.id,
    });
    expectOAuthError(downgrade, 400, 'invalid_grant');
  });

  it('refuses an expired code with invalid_grant', async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(past.services, { platformId: p.id, client: c, user: u });
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id });
    expectOAuthError(res, 400, 'invalid_grant');
    expect(res.body.error_description).toMatch(/expired/);
  });

  it('refuses a redirect_uri that differs from the authorization request', async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/other', platform_guid: p.id });
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('binds the code to its client', async () => {
    const { p, c, u } = await setup();
    const other = await buildClient(t.services, p.id);
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(other.id, other.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id });
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('is single use: a replay fails and revokes what the first exchange issued', async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
    const body = { grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id };
    const first = await request(t.app).post('/oauth/token').auth(c.id, c.secret!).type('form').send(body).expect(200);
    expectOAuthError(
      await request(t.app).post('/oauth/token').auth(c.id, c.secret!).type('form').send(body),
      400,
      'invalid_grant',
    );
    await request(t.app)
      .get(`/oauth/userinfo?platform_guid=${p.id}`)
      .set('Authorization', `Bearer ${first.body.access_token}`)
      .expect(401);
    const refresh = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, platform_guid: p.id });
    expectOAuthError(refresh, 400, 'invalid_grant');
  });

  it('never lets two concurrent exchanges of one code both succeed', async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u });
    const body = { grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id };
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        request(t.app).post('/oauth/token').auth(c.id, c.secret!).type('form').send(body),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(7);
  });

  it('omits refresh_token without offline_access and id_token without openid-only claims beyond rule 3', async () => {
    const { p, c, u } = await setup();
    const code = await buildCode(t.services, { platformId: p.id, client: c, user: u, scopes: ['openid'] });
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id })
      .expect(200);
    expect(res.body.refresh_token).toBeUndefined();
    expect(res.body.scope).toBe('openid');
    const id = decodeJwt(res.body.id_token);
    // scope rule 3: always present
    for (const claim of ['sub', 'name', 'given_name', 'family_name', 'email', 'picture'])
      expect(id[claim]).toBeDefined();
    for (const claim of ['birthdate', 'phone_number', 'address']) expect(id[claim]).toBeUndefined();
  });
});

describe('POST /oauth/token — client authentication and request errors', () => {
  it('answers a wrong secret with 401 invalid_client and a Basic challenge', async () => {
    const { p, c } = await setup();
    const res = await request(t.app).post('/oauth/token').auth(c.id, 'wrong').type('form').send({
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: 'https://app.example/callback',
      platform_guid: p.id,
    });
    expectOAuthError(res, 401, 'invalid_client');
    expect(res.headers['www-authenticate']).toMatch(/^Basic/);
  });

  it('refuses a confidential client without its secret, and an unknown client', async () => {
    const { p, c } = await setup();
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: 'https://a/cb',
        client_id: c.id,
        platform_guid: p.id,
      }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: 'https://a/cb',
        client_id: '00000000-0000-4000-8000-000000000000',
        platform_guid: p.id,
      }),
      401,
      'invalid_client',
    );
  });

  it('refuses two authentication methods at once', async () => {
    const { p, c } = await setup();
    const res = await request(t.app).post('/oauth/token').auth(c.id, c.secret!).type('form').send({
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: 'https://a/cb',
      client_secret: c.secret!,
      platform_guid: p.id,
    });
    expectOAuthError(res, 400, 'invalid_request');
  });

  it.each([
    [{ grant_type: 'password' }, 400, 'unsupported_grant_type'],
    [{}, 400, 'invalid_request'],
  ])('answers %j with %s %s', async (extra, status, code) => {
    const { p, c } = await setup();
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ platform_guid: p.id, ...extra });
    expectOAuthError(res, status, code);
  });

  it('requires code and redirect_uri', async () => {
    const { p, c } = await setup();
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', platform_guid: p.id });
    expectOAuthError(res, 400, 'invalid_request');
  });

  it('refuses JSON bodies, repeated parameters and a platform mismatch', async () => {
    const { p, c } = await setup();
    expectOAuthError(
      await request(t.app).post('/oauth/token').send({ grant_type: 'authorization_code', platform_guid: p.id }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await request(t.app)
        .post('/oauth/token')
        .auth(c.id, c.secret!)
        .type('form')
        .send(`grant_type=authorization_code&grant_type=refresh_token&platform_guid=${p.id}`),
      400,
      'invalid_request',
    );
    const other = await buildPlatform(t.services);
    expectOAuthError(
      await request(t.app)
        .post(`/oauth/token?platform_guid=${other.id}`)
        .auth(c.id, c.secret!)
        .type('form')
        .send({ grant_type: 'authorization_code', platform_guid: p.id }),
      400,
      'invalid_request',
    );
  });

  it('keeps platforms apart: a client of one platform is unknown on another', async () => {
    const { c } = await setup();
    const other = await buildPlatform(t.services);
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://a/cb', platform_guid: other.id });
    expectOAuthError(res, 401, 'invalid_client');
  });
});
