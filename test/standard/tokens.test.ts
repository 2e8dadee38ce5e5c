import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import * as jose from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';
import { asClient } from '../support/code-tokens';
import * as clients from '../../src/repositories/client.repository';
import type { IdTokenAlg } from '../../src/domain/client';

// A `standard` platform signs its tokens with its asymmetric keys; relying parties and
// resource servers verify them against the public JWKS alone. The seed profile is tested unchanged elsewhere.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const BASE = 'http://issuer.test';
const unique = () => randomBytes(4).toString('hex');
const standardPlatform = async () =>
  (await t.services.platforms.createPlatform(`Standard ${unique()}`, undefined, 'standard')).platform;
const issuerOf = (p: { id: string }) => `${BASE}/platforms/${p.id}`;
const jwksOf = async (p: { id: string }) =>
  jose.createLocalJWKSet((await request(t.app).get(`/oauth/jwks?platform_guid=${p.id}`).expect(200)).body);
/** OIDC Core 3.1.3.6: the left half of SHA-256 (RS256, ES256) or SHA-512 (HS512, EdDSA over Ed25519). */
const leftHalf = (hash: 'sha256' | 'sha512', value: string) => {
  const full = createHash(hash).update(value).digest();
  return full.subarray(0, full.length / 2).toString('base64url');
};

/** A standard platform, a client (with `alg` registered, if given) and a user. */
async function tenant(opts: { type?: 'confidential' | 'public'; alg?: IdTokenAlg } = {}) {
  const p = await standardPlatform();
  const created = await buildClient(t.services, p.id, { type: opts.type ?? 'confidential' });
  const c = opts.alg
    ? {
        ...(await clients.update(t.database.db, p.id, created.id, { idTokenSignedResponseAlg: opts.alg })),
        secret: created.secret,
      }
    : created;
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;

/** A code issued through the real service (browser session "test-browser"), exchanged at the token endpoint. */
async function exchange({ p, c, u }: Tenant, nonce = 'n-1') {
  const verifier = randomBytes(32).toString('base64url');
  const pkce = c.type === 'public' ? { codeChallenge: createHash('sha256').update(verifier).digest('base64url') } : {};
  const code = await buildCode(t.services, { platformId: p.id, client: c, user: u, nonce, ...pkce });
  const body = { grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: p.id };
  const req = request(t.app).post('/oauth/token').type('form');
  const res =
    c.type === 'public'
      ? await req.send({ ...body, client_id: c.id, code_verifier: verifier })
      : await req.auth(c.id, c.secret!).send(body);
  expect(res.status).toBe(200);
  return res.body as { access_token: string; id_token: string; refresh_token: string };
}

const refresh = ({ p, c }: Tenant, refreshToken: string) => {
  const req = request(t.app).post('/oauth/token').type('form');
  const body = { grant_type: 'refresh_token', refresh_token: refreshToken, platform_guid: p.id };
  return c.type === 'public' ? req.send({ ...body, client_id: c.id }) : req.auth(c.id, c.secret!).send(body);
};
const userinfo = (token: string, platformId?: string) =>
  request(t.app)
    .get(platformId ? `/oauth/userinfo?platform_guid=${platformId}` : '/oauth/userinfo')
    .set('Authorization', `Bearer ${token}`);
const introspect = (ten: Tenant, token: string) => asClient(t.app, 'introspect', ten, token);
const revoke = (ten: Tenant, token: string) => asClient(t.app, 'revoke', ten, token);

describe('standard platform: access tokens', () => {
  it('are RS256 with the kid of a published key, typ at+jwt (RFC 9068), iss = BASE_URL/platforms/{guid}, and verify against the JWKS', async () => {
    const ctx = await tenant();
    const tokens = await exchange(ctx);
    const header = jose.decodeProtectedHeader(tokens.access_token);
    expect(header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: expect.any(String) });
    const published = (await request(t.app).get(`/oauth/jwks?platform_guid=${ctx.p.id}`)).body.keys as Array<{
      kid: string;
      alg: string;
    }>;
    expect(published.find((k) => k.kid === header.kid)?.alg).toBe('RS256');
    const { payload } = await jose.jwtVerify(tokens.access_token, await jwksOf(ctx.p), {
      typ: 'at+jwt',
      issuer: issuerOf(ctx.p),
      audience: ctx.c.id,
      algorithms: ['RS256'],
    });
    expect(payload).toMatchObject({ sub: ctx.u.id, client_id: ctx.c.id, scope: 'openid profile email offline_access' });
  });

  it('work at userinfo (with and without platform_guid: the platform is found by the RS256 kid), introspection and revocation', async () => {
    const ctx = await tenant();
    const tokens = await exchange(ctx);
    expect((await userinfo(tokens.access_token, ctx.p.id).expect(200)).body).toMatchObject({
      sub: ctx.u.id,
      email: ctx.u.email,
    });
    expect((await userinfo(tokens.access_token).expect(200)).body.sub).toBe(ctx.u.id);
    expect((await introspect(ctx, tokens.access_token)).body).toMatchObject({
      active: true,
      sub: ctx.u.id,
      client_id: ctx.c.id,
    });
    await revoke(ctx, tokens.access_token);
    expectOAuthError(await userinfo(tokens.access_token, ctx.p.id), 401, 'invalid_token');
    expect((await introspect(ctx, tokens.access_token)).body).toEqual({ active: false });
  });

  it('of another platform are refused, even under a valid signature', async () => {
    const a = await tenant();
    const b = await tenant();
    const tokens = await exchange(a);
    expectOAuthError(await userinfo(tokens.access_token, b.p.id), 401, 'invalid_token');
    expect((await introspect(b, tokens.access_token)).body).toEqual({ active: false });
  });
});

describe('standard platform: ID tokens', () => {
  it('default to RS256 with kid, verify against the JWKS, with at_hash over SHA-256, nonce and sid', async () => {
    const ctx = await tenant();
    const tokens = await exchange(ctx, 'nonce-rs');
    expect(jose.decodeProtectedHeader(tokens.id_token)).toEqual({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    const { payload } = await jose.jwtVerify(tokens.id_token, await jwksOf(ctx.p), {
      issuer: issuerOf(ctx.p),
      audience: ctx.c.id,
      algorithms: ['RS256'],
    });
    expect(payload).toMatchObject({
      sub: ctx.u.id,
      azp: ctx.c.id,
      nonce: 'nonce-rs',
      at_hash: leftHalf('sha256', tokens.access_token),
    });
    // sid: the browser sign-in the code was issued in, as recorded for logout
    const recorded = await t.database
      .db('session_clients')
      .where({ platform_id: ctx.p.id, user_id: ctx.u.id, client_id: ctx.c.id })
      .first('sid');
    expect(payload.sid).toEqual(expect.any(String));
    expect(payload.sid).toBe(recorded.sid);
  });

  it.each<[IdTokenAlg, 'sha256' | 'sha512', 'confidential' | 'public']>([
    ['ES256', 'sha256', 'confidential'],
    ['EdDSA', 'sha512', 'confidential'],
    ['ES256', 'sha256', 'public'],
    ['EdDSA', 'sha512', 'public'],
  ])(
    'registered %s: signed with the published key of that alg (at_hash %s), %s client; the access token stays RS256',
    async (alg, hash, type) => {
      const ctx = await tenant({ alg, type });
      const tokens = await exchange(ctx);
      const header = jose.decodeProtectedHeader(tokens.id_token);
      expect(header).toEqual({ alg, typ: 'JWT', kid: expect.any(String) });
      const { payload } = await jose.jwtVerify(tokens.id_token, await jwksOf(ctx.p), {
        issuer: issuerOf(ctx.p),
        audience: ctx.c.id,
        algorithms: [alg],
      });
      expect(payload.at_hash).toBe(leftHalf(hash, tokens.access_token));
      expect(jose.decodeProtectedHeader(tokens.access_token).alg).toBe('RS256');
    },
  );

  it('registered HS512 (confidential client): keyed with the client secret, no kid, at_hash over SHA-512', async () => {
    const ctx = await tenant({ alg: 'HS512' });
    const tokens = await exchange(ctx);
    expect(jose.decodeProtectedHeader(tokens.id_token)).toEqual({ alg: 'HS512', typ: 'JWT' });
    const { payload } = await jose.jwtVerify(tokens.id_token, new TextEncoder().encode(ctx.c.secret!), {
      issuer: issuerOf(ctx.p),
      audience: ctx.c.id,
      algorithms: ['HS512'],
    });
    expect(payload.at_hash).toBe(leftHalf('sha512', tokens.access_token));
    expect(payload.sid).toEqual(expect.any(String));
  });

  it('keep the same sid across refreshes, each refreshed ID token verifying against the JWKS', async () => {
    const ctx = await tenant({ alg: 'ES256' });
    const first = await exchange(ctx);
    const jwks = await jwksOf(ctx.p);
    const sid = (await jose.jwtVerify(first.id_token, jwks, { issuer: issuerOf(ctx.p), audience: ctx.c.id })).payload
      .sid;
    const second = (await refresh(ctx, first.refresh_token).expect(200)).body;
    const third = (await refresh(ctx, second.refresh_token).expect(200)).body;
    for (const tokens of [second, third]) {
      const { payload } = await jose.jwtVerify(tokens.id_token, jwks, {
        issuer: issuerOf(ctx.p),
        audience: ctx.c.id,
        algorithms: ['ES256'],
      });
      expect(payload.sid).toBe(sid);
      expect(payload.at_hash).toBe(leftHalf('sha256', tokens.access_token));
      await userinfo(tokens.access_token).expect(200);
    }
  });
});

describe('seed platform: sid added, nothing else changed', () => {
  it("a confidential client's ID token is HS512 under its secret, no kid, iss = BASE_URL, with sid; the access token HS512 with kid", async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const u = await buildUser(t.services, p.id);
    const tokens = await exchange({ p, c, u });
    expect(jose.decodeProtectedHeader(tokens.id_token)).toEqual({ alg: 'HS512', typ: 'JWT' });
    expect(jose.decodeProtectedHeader(tokens.access_token)).toEqual({
      alg: 'HS512',
      typ: 'JWT',
      kid: expect.any(String),
    });
    const { payload } = await jose.jwtVerify(tokens.id_token, new TextEncoder().encode(c.secret!), {
      issuer: BASE,
      audience: c.id,
      algorithms: ['HS512'],
    });
    expect(payload.at_hash).toBe(leftHalf('sha512', tokens.access_token));
    const recorded = await t.database
      .db('session_clients')
      .where({ platform_id: p.id, user_id: u.id, client_id: c.id })
      .first('sid');
    expect(payload.sid).toBe(recorded.sid);
    expect(jose.decodeJwt(tokens.access_token).iss).toBe(BASE);
  });
});

describe('standard platform: forged and confused tokens are refused', () => {
  /** The claims of a real, live access token, re-signed by an attacker. */
  async function liveClaims() {
    const ctx = await tenant();
    const tokens = await exchange(ctx);
    const rsKid = jose.decodeProtectedHeader(tokens.access_token).kid!;
    const jwk = (
      (await request(t.app).get(`/oauth/jwks?platform_guid=${ctx.p.id}`)).body.keys as Array<Record<string, string>>
    ).find((k) => k.kid === rsKid)!;
    return { ctx, tokens, rsKid, jwk, claims: jose.decodeJwt(tokens.access_token) };
  }

  /** Each forgery is dead at userinfo (with and without platform_guid), introspects inactive and revokes nothing. */
  async function expectRefused(ctx: Tenant, genuine: string, forged: string) {
    expectOAuthError(await userinfo(forged, ctx.p.id), 401, 'invalid_token');
    expectOAuthError(await userinfo(forged), 401, 'invalid_token');
    expect((await introspect(ctx, forged)).body).toEqual({ active: false });
    await revoke(ctx, forged);
    await userinfo(genuine, ctx.p.id).expect(200);
  }

  it('alg confusion: an HS512 header naming the RS256 kid, keyed with the public key (JWK, PEM or modulus)', async () => {
    const { ctx, tokens, rsKid, jwk, claims } = await liveClaims();
    const publicKey = await jose.importJWK(jwk, 'RS256');
    const pem = await jose.exportSPKI(publicKey as CryptoKey);
    for (const secret of [JSON.stringify(jwk), pem, jwk.n]) {
      const forged = await new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'HS512', typ: 'at+jwt', kid: rsKid })
        .sign(new TextEncoder().encode(secret));
      await expectRefused(ctx, tokens.access_token, forged);
    }
  });

  it('alg none, and a right kid over a wrong signature', async () => {
    const { ctx, tokens, rsKid, claims } = await liveClaims();
    const none = `${jose.base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: rsKid }))}.${jose.base64url.encode(JSON.stringify(claims))}.`;
    await expectRefused(ctx, tokens.access_token, none);
    const { privateKey } = await jose.generateKeyPair('RS256');
    const wrongKey = await new jose.SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: rsKid })
      .sign(privateKey);
    await expectRefused(ctx, tokens.access_token, wrongKey);
  });

  it("the platform's own HS512 key (the seed profile's) and its ES256 key do not sign access tokens here", async () => {
    const { ctx, tokens, claims } = await liveClaims();
    const hs = await t.services.signingKeys.activeKey(ctx.p.id);
    await expectRefused(
      ctx,
      tokens.access_token,
      await new jose.SignJWT(claims).setProtectedHeader({ alg: 'HS512', typ: 'at+jwt', kid: hs.kid }).sign(hs.secret),
    );
    const es = await t.services.signingKeys.activeAsymmetricKey(ctx.p.id, 'ES256');
    await expectRefused(
      ctx,
      tokens.access_token,
      await new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: es.kid })
        .sign(es.privateKey),
    );
  });

  it('a token with the seed issuer (BASE_URL), though signed with the right key, is refused', async () => {
    const { ctx, tokens, claims } = await liveClaims();
    const rs = await t.services.signingKeys.activeAsymmetricKey(ctx.p.id, 'RS256');
    const forged = await new jose.SignJWT({ ...claims, iss: BASE })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: rs.kid })
      .sign(rs.privateKey);
    await expectRefused(ctx, tokens.access_token, forged);
  });
});
