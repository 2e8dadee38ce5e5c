import { randomBytes } from 'node:crypto';
import request from 'supertest';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import { expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildUser } from '../factories';
import { authorizeQuery } from '../support/account-flows';
import { startProvider, type Provider } from '../support/rp';

// RFC 9068 access tokens on a standard platform, checked as a resource server would: from the
// issuer's metadata and JWKS alone, with oauth4webapi's RFC 9068 validation and with jose.
let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

const AFTER = 'https://app.example/signed-out';

async function tenant() {
  const platform = (
    await p.t.services.platforms.createPlatform(`RFC 9068 ${randomBytes(4).toString('hex')}`, undefined, 'standard')
  ).platform;
  const c = await buildClient(p.t.services, platform.id, { postLogoutRedirectUris: [AFTER] });
  const u = await buildUser(p.t.services, platform.id);
  return { p: platform, c, u, issuer: `${p.base}/platforms/${platform.id}` };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;

async function exchange({ p: platform, c, u }: Tenant, authTime = Math.floor(Date.now() / 1000) - 30) {
  const code = await buildCode(p.t.services, { platformId: platform.id, client: c, user: u, authTime });
  const res = await request(p.t.app)
    .post('/oauth/token')
    .auth(c.id, c.secret!)
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: platform.id })
    .expect(200);
  return res.body as { access_token: string; id_token: string; refresh_token: string };
}
const refresh = ({ p: platform, c }: Tenant, refreshToken: string) =>
  request(p.t.app)
    .post('/oauth/token')
    .auth(c.id, c.secret!)
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken, platform_guid: platform.id })
    .expect(200);
const userinfo = (token: string, platformId?: string) =>
  request(p.t.app)
    .get(platformId ? `/oauth/userinfo?platform_guid=${platformId}` : '/oauth/userinfo')
    .set('Authorization', `Bearer ${token}`);
const introspect = ({ p: platform, c }: Tenant, token: string) =>
  request(p.t.app)
    .post('/oauth/introspect')
    .auth(c.id, c.secret!)
    .type('form')
    .send({ token, platform_guid: platform.id })
    .expect(200);

/** The authorization server as a resource server knows it: the issuer's RFC 8414 metadata. */
async function authorizationServer(issuer: string) {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(
    url,
    await oauth.discoveryRequest(url, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }),
  );
}

/** A resource server's check of the bearer token on a request (oauth4webapi, RFC 6750 + RFC 9068). */
async function validateAsResourceServer(issuer: string, accessToken: string, audience: string) {
  const resourceRequest = new Request('https://api.example/things', {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  return oauth.validateJwtAccessToken(await authorizationServer(issuer), resourceRequest, audience, {
    [oauth.allowInsecureRequests]: true,
  });
}

/** Header and claims of an RFC 9068 access token of this tenant, exactly. */
function expectRfc9068(ctx: Tenant, accessToken: string, authTime: number) {
  expect(jose.decodeProtectedHeader(accessToken)).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: expect.any(String) });
  const claims = jose.decodeJwt(accessToken);
  expect(claims).toEqual({
    iss: ctx.issuer,
    exp: expect.any(Number),
    aud: ctx.c.id,
    sub: ctx.u.id,
    client_id: ctx.c.id,
    iat: expect.any(Number),
    jti: expect.any(String),
    scope: 'openid profile email offline_access',
    auth_time: authTime,
    acr: expect.any(String),
    amr: ['pwd'],
  });
  expect(claims.exp! - claims.iat!).toBe(3600);
  return claims;
}

describe('standard platform: access tokens are RFC 9068 JWTs', () => {
  it('from the code flow: typ at+jwt, the RFC 9068 claims with auth_time, acr and amr, valid for oauth4webapi and jose', async () => {
    const ctx = await tenant();
    const authTime = Math.floor(Date.now() / 1000) - 30;
    const tokens = await exchange(ctx, authTime);
    const claims = expectRfc9068(ctx, tokens.access_token, authTime);

    const validated = await validateAsResourceServer(ctx.issuer, tokens.access_token, ctx.c.id);
    expect(validated).toMatchObject({
      iss: ctx.issuer,
      sub: ctx.u.id,
      client_id: ctx.c.id,
      jti: claims.jti,
      scope: 'openid profile email offline_access',
    });
    await expect(
      validateAsResourceServer(ctx.issuer, tokens.access_token, 'https://another-api.example'),
    ).rejects.toThrow();

    const jwks = jose.createLocalJWKSet(
      (await request(p.t.app).get(`/oauth/jwks?platform_guid=${ctx.p.id}`).expect(200)).body,
    );
    const { payload, protectedHeader } = await jose.jwtVerify(tokens.access_token, jwks, {
      typ: 'at+jwt',
      issuer: ctx.issuer,
      audience: ctx.c.id,
      algorithms: ['RS256'],
    });
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload).toEqual(claims);
    const as = await authorizationServer(ctx.issuer);
    await jose.jwtVerify(tokens.access_token, jose.createRemoteJWKSet(new URL(as.jwks_uri!)), {
      typ: 'at+jwt',
      issuer: ctx.issuer,
      audience: ctx.c.id,
    });
  });

  it("from a refresh: the same shape, a new jti, the sign-in's auth_time, acr and amr kept", async () => {
    const ctx = await tenant();
    const authTime = Math.floor(Date.now() / 1000) - 600;
    const first = await exchange(ctx, authTime);
    const refreshed = (await refresh(ctx, first.refresh_token)).body as { access_token: string };
    const claims = expectRfc9068(ctx, refreshed.access_token, authTime);
    expect(claims.jti).not.toBe(jose.decodeJwt(first.access_token).jti);
    expect(claims.acr).toBe(jose.decodeJwt(first.access_token).acr);
    await validateAsResourceServer(ctx.issuer, refreshed.access_token, ctx.c.id);
    await userinfo(refreshed.access_token).expect(200);
  });

  it('introspection reports the RFC 7662 fields with iss, aud and jti (cached or not); a refresh token gets iss', async () => {
    const ctx = await tenant();
    const tokens = await exchange(ctx);
    const claims = jose.decodeJwt(tokens.access_token);
    const expected = {
      active: true,
      sub: ctx.u.id,
      human_guid: ctx.u.id,
      client_id: ctx.c.id,
      scope: 'openid profile email offline_access',
      token_type: 'Bearer',
      exp: claims.exp,
      iat: claims.iat,
      iss: ctx.issuer,
      aud: ctx.c.id,
      jti: claims.jti,
    };
    expect((await introspect(ctx, tokens.access_token)).body).toEqual(expected);
    await userinfo(tokens.access_token, ctx.p.id).expect(200);
    expect((await introspect(ctx, tokens.access_token)).body).toEqual(expected); // now from the verified-token cache
    const rt = (await introspect(ctx, tokens.refresh_token)).body;
    expect(rt).toMatchObject({ active: true, sub: ctx.u.id, client_id: ctx.c.id, iss: ctx.issuer });
    expect(rt).not.toHaveProperty('aud');
    expect(rt).not.toHaveProperty('jti');
  });
});

describe('standard platform: an ID token is no access token, an access token no ID token (RFC 9068 §4)', () => {
  it('userinfo, introspection and revocation refuse the ID token, and a copy of the access token re-signed as typ JWT by the same key', async () => {
    const ctx = await tenant();
    const tokens = await exchange(ctx);
    // The RS256 ID token and the access token are signed by the same key: only typ tells them apart.
    expect(jose.decodeProtectedHeader(tokens.id_token).kid).toBe(jose.decodeProtectedHeader(tokens.access_token).kid);
    const key = await p.t.services.signingKeys.activeAsymmetricKey(ctx.p.id, 'RS256');
    const asJwt = await new jose.SignJWT(jose.decodeJwt(tokens.access_token))
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
      .sign(key.privateKey);
    for (const token of [tokens.id_token, asJwt]) {
      expectOAuthError(await userinfo(token, ctx.p.id), 401, 'invalid_token');
      expectOAuthError(await userinfo(token), 401, 'invalid_token');
      expect((await introspect(ctx, token)).body).toEqual({ active: false });
      await request(p.t.app)
        .post('/oauth/revoke')
        .auth(ctx.c.id, ctx.c.secret!)
        .type('form')
        .send({ token, platform_guid: ctx.p.id })
        .expect(200);
    }
    await userinfo(tokens.access_token, ctx.p.id).expect(200); // the revocations above touched nothing
  });

  it('an at+jwt is refused as id_token_hint at authorize and logout, by its typ alone', async () => {
    const ctx = await tenant();
    const tokens = await exchange(ctx);
    const key = await p.t.services.signingKeys.activeAsymmetricKey(ctx.p.id, 'RS256');
    // The ID token's claims under the access token's typ: nothing but the header says "access token".
    const idClaimsAsAccessToken = await new jose.SignJWT(jose.decodeJwt(tokens.id_token))
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: key.kid })
      .sign(key.privateKey);
    for (const hint of [tokens.access_token, idClaimsAsAccessToken]) {
      const authorize = await request(p.t.app).get(
        `/oauth/authorize?${authorizeQuery(ctx.p, ctx.c, { prompt: 'none', id_token_hint: hint })}`,
      );
      expect(Object.fromEntries(new URL(authorize.headers.location).searchParams)).toMatchObject({
        error: 'invalid_request',
        error_description: 'id_token_hint is not an ID token',
        iss: ctx.issuer,
      });
      const logout = await request(p.t.app).get(
        `/oauth/logout?${new URLSearchParams({ platform_guid: ctx.p.id, id_token_hint: hint, post_logout_redirect_uri: AFTER })}`,
      );
      expect(logout.status).toBe(400);
      expect(logout.headers.location).toBeUndefined();
      expect(logout.text).toContain('id_token_hint is not an ID token');
    }
    await refresh(ctx, tokens.refresh_token); // nothing was signed out
  });
});
