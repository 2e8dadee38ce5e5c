import request from 'supertest';
import { decodeJwt } from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildStandardPlatform, buildUser } from '../factories';
import {
  JWT_BEARER,
  assertionClaims,
  clientKey,
  hmacAssertion,
  jwksOf,
  signAssertion,
  unsignedAssertion,
  type AssertionAlg,
  type ClientKey,
} from '../support/client-keys';

// docs/decisions.md, "Machine and device clients": private_key_jwt (RFC 7523 §2.2, §3) for a client
// registered with keys (here inline `jwks`; jwks_uri in test/standard/private-key-jwt-jwks-uri.test.ts).
const BASE = 'http://issuer.test';
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ BASE_URL: BASE });
});
afterAll(async () => {
  await t.close();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function keyedClient(alg: AssertionAlg = 'RS256') {
  const p = await buildStandardPlatform(t.services);
  const key = await clientKey(alg);
  const c = await buildClient(t.services, p.id, { jwks: jwksOf(key) });
  const issuer = `${BASE}/platforms/${p.id}`;
  return { p, c, key, issuer };
}

type Keyed = Awaited<ReturnType<typeof keyedClient>>;

/** An assertion for `k`'s client, signed by `key` (its own unless given), with claims overridden. */
const assertionFor = (
  k: Keyed,
  overrides: Record<string, unknown> = {},
  key: Pick<ClientKey, 'alg' | 'kid' | 'privateKey'> = k.key,
) => signAssertion(key, assertionClaims(k.c.id, k.issuer, nowSeconds(), overrides));

/** A token request with a code nobody issued: authentication comes first, so a client that passes gets invalid_grant. */
const tokenWith = (k: Keyed, fields: Record<string, string>) =>
  request(t.app)
    .post(`/platforms/${k.p.id}/oauth/token`)
    .type('form')
    .send({ grant_type: 'authorization_code', code: 'none-such', redirect_uri: k.c.redirectUris[0], ...fields });

const withAssertion = (assertion: string, extra: Record<string, string> = {}) => ({
  client_assertion_type: JWT_BEARER,
  client_assertion: assertion,
  ...extra,
});

/** The client authenticated (the made-up code is what is refused). */
const expectAuthenticated = (res: request.Response) => {
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
};

/** 401 invalid_client with the reason in the description. */
const expectRefused = (res: request.Response, reason: RegExp) => {
  expectOAuthError(res, 401, 'invalid_client');
  expect(res.body.error_description).toMatch(reason);
};

describe('private_key_jwt: a client registered with keys', () => {
  it('exchanges a code with an assertion whose aud is the issuer (path endpoint), without client_id', async () => {
    const k = await keyedClient();
    const u = await buildUser(t.services, k.p.id);
    const code = await buildCode(t.services, { platformId: k.p.id, client: k.c, user: u });
    const res = await request(t.app)
      .post(`/platforms/${k.p.id}/oauth/token`)
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code,
        redirect_uri: k.c.redirectUris[0],
        ...withAssertion(await assertionFor(k)),
      });
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.access_token)).toMatchObject({ client_id: k.c.id, sub: u.id });
    expect(decodeJwt(res.body.id_token)).toMatchObject({ aud: k.c.id });

    // The refresh grant authenticates the same way, at the query-string endpoint with client_id.
    const refreshed = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({
        platform_guid: k.p.id,
        grant_type: 'refresh_token',
        refresh_token: res.body.refresh_token,
        ...withAssertion(await assertionFor(k), { client_id: k.c.id }),
      });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toMatch(/^rt_/);
  });

  it.each(['PS256', 'ES256', 'EdDSA'] as const)('accepts %s', async (alg) => {
    const k = await keyedClient(alg);
    expectAuthenticated(await tokenWith(k, withAssertion(await assertionFor(k))));
  });

  it('accepts the token endpoint as aud, in both forms, and a list of audiences holding one of ours', async () => {
    const k = await keyedClient();
    for (const aud of [
      `${k.issuer}/oauth/token`,
      `${BASE}/oauth/token?platform_guid=${k.p.id}`,
      ['https://elsewhere.example', k.issuer],
    ])
      expectAuthenticated(await tokenWith(k, withAssertion(await assertionFor(k, { aud }))));
  });

  it('accepts an assertion without kid when a key of the set verifies it, and without iat or nbf', async () => {
    const k = await keyedClient('ES256');
    const other = await clientKey('ES256');
    await t.database
      .db('clients')
      .where({ id: k.c.id })
      .update({ jwks: JSON.stringify(jwksOf(other, k.key)) });
    t.services.clientAuth.forget(k.c.id);
    const assertion = await signAssertion(
      k.key,
      assertionClaims(k.c.id, k.issuer, nowSeconds(), { iat: undefined, nbf: undefined }),
      { kid: undefined },
    );
    expectAuthenticated(await tokenWith(k, withAssertion(assertion)));
  });

  it('authenticates at introspection (confidential clients only) and revocation', async () => {
    const k = await keyedClient();
    const u = await buildUser(t.services, k.p.id);
    const code = await buildCode(t.services, { platformId: k.p.id, client: k.c, user: u });
    const tokens = await request(t.app)
      .post(`/platforms/${k.p.id}/oauth/token`)
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code,
        redirect_uri: k.c.redirectUris[0],
        ...withAssertion(await assertionFor(k)),
      })
      .expect(200);
    const introspected = await request(t.app)
      .post(`/platforms/${k.p.id}/oauth/introspect`)
      .type('form')
      .send({ token: tokens.body.access_token, ...withAssertion(await assertionFor(k)) })
      .expect(200);
    expect(introspected.body).toMatchObject({ active: true, client_id: k.c.id });
    await request(t.app)
      .post(`/platforms/${k.p.id}/oauth/revoke`)
      .type('form')
      .send({ token: tokens.body.refresh_token, ...withAssertion(await assertionFor(k)) })
      .expect(200);
    // Revocation checks an assertion it is given: a bad one is refused, not ignored.
    expectRefused(
      await request(t.app)
        .post(`/platforms/${k.p.id}/oauth/revoke`)
        .type('form')
        .send({ token: tokens.body.access_token, ...withAssertion(await assertionFor(k, { iss: 'someone-else' })) }),
      /iss must be the client_id/,
    );
    const introspectedAgain = await request(t.app)
      .post(`/platforms/${k.p.id}/oauth/introspect`)
      .type('form')
      .send({ token: tokens.body.refresh_token, ...withAssertion(await assertionFor(k)) })
      .expect(200);
    expect(introspectedAgain.body).toEqual({ active: false });
  });
});

describe('private_key_jwt: refusals (401 invalid_client, never a 5xx)', () => {
  let k: Keyed;
  beforeAll(async () => {
    k = await keyedClient();
  });

  it('a signature by another key, under the same kid', async () => {
    const stranger = await clientKey('RS256', k.key.kid);
    expectRefused(
      await tokenWith(k, withAssertion(await assertionFor(k, {}, stranger))),
      /signature does not verify with the client's key with kid/,
    );
  });

  it('a kid the client does not have', async () => {
    const stranger = await clientKey('RS256');
    expectRefused(
      await tokenWith(k, withAssertion(await assertionFor(k, {}, stranger))),
      /none of the client's keys has kid/,
    );
  });

  it('an algorithm the key does not fit (ES256 under an RSA key)', async () => {
    const ec = await clientKey('ES256', k.key.kid);
    expectRefused(await tokenWith(k, withAssertion(await assertionFor(k, {}, ec))), /can verify ES256/);
  });

  it('alg none', async () => {
    const claims = assertionClaims(k.c.id, k.issuer, nowSeconds());
    expectRefused(await tokenWith(k, withAssertion(unsignedAssertion(claims))), /alg "none" is not accepted/);
  });

  it('HS256 (client_secret_jwt), whatever it is keyed with', async () => {
    const claims = assertionClaims(k.c.id, k.issuer, nowSeconds());
    const keyedWithPublicKey = await hmacAssertion(claims, JSON.stringify(k.key.publicJwk));
    expectRefused(await tokenWith(k, withAssertion(keyedWithPublicKey)), /alg "HS256" is not accepted/);
  });

  it.each([
    ['iss of another client', { iss: '00000000-0000-4000-8000-000000000000' }, /iss must be the client_id/],
    // without client_id the sub names the client: another client's id is looked up, and unknown here
    ['sub of another client', { sub: '00000000-0000-4000-8000-000000000000' }, /Unknown client/],
    ['aud of another server', { aud: 'https://elsewhere.example/token' }, /aud must be this server's issuer/],
    ['aud of another platform', { aud: `${BASE}/platforms/00000000-0000-4000-8000-000000000000` }, /aud must be/],
    ['aud of the seed form of the issuer', { aud: BASE }, /aud must be/],
    ['no exp', { exp: undefined }, /exp is required/],
    ['an expired assertion', { iat: -600, nbf: -600, exp: -120 }, /has expired/],
    ['a lifetime over five minutes', { exp: 600 }, /lives longer than 300 seconds/],
    ['exp more than five minutes ahead (no iat)', { iat: undefined, exp: 900 }, /exp is too far ahead/],
    ['iat in the future', { iat: 120, exp: 180 }, /iat is in the future/],
    ['nbf in the future', { nbf: 120 }, /not valid yet/],
    ['no jti', { jti: undefined }, /jti is required/],
    ['an empty jti', { jti: '' }, /jti is required/],
  ] as const)('%s', async (_what, overrides, reason) => {
    // Times are relative to now; other values as they are.
    const now = nowSeconds();
    const claims: Record<string, unknown> = { ...overrides };
    for (const name of ['iat', 'nbf', 'exp'] as const)
      if (typeof claims[name] === 'number') claims[name] = now + (claims[name] as number);
    expectRefused(await tokenWith(k, withAssertion(await assertionFor(k, claims))), reason);
  });

  it('iss or sub that is not the client, with client_id naming the client', async () => {
    const other = '00000000-0000-4000-8000-000000000000';
    expectRefused(
      await tokenWith(k, withAssertion(await assertionFor(k, { iss: other }), { client_id: k.c.id })),
      /iss must be the client_id/,
    );
    expectRefused(
      await tokenWith(k, withAssertion(await assertionFor(k, { sub: other }), { client_id: k.c.id })),
      /client_id does not match the client_assertion's sub/,
    );
    expectRefused(
      await tokenWith(k, withAssertion(await assertionFor(k, { iss: other, sub: other }))),
      /Unknown client/,
    );
  });

  it('a replayed jti, while the first use went through', async () => {
    const assertion = await assertionFor(k);
    expectAuthenticated(await tokenWith(k, withAssertion(assertion)));
    expectRefused(await tokenWith(k, withAssertion(assertion)), /jti was used already/);
    // The same jti in a new assertion (new iat, new signature) is still a replay.
    const jti = (decodeJwt(assertion) as { jti: string }).jti;
    expectRefused(
      await tokenWith(k, withAssertion(await assertionFor(k, { jti, exp: nowSeconds() + 90 }))),
      /jti was used already/,
    );
  });

  it('a client secret (Basic or in the body), or nothing at all', async () => {
    const basic = await request(t.app)
      .post(`/platforms/${k.p.id}/oauth/token`)
      .auth(k.c.id, 'a-guessed-secret')
      .type('form')
      .send({ grant_type: 'authorization_code', code: 'x', redirect_uri: k.c.redirectUris[0] });
    expectRefused(basic, /authenticates with private_key_jwt/);
    expect(basic.headers['www-authenticate']).toMatch(/^Basic/);
    expectRefused(await tokenWith(k, { client_id: k.c.id, client_secret: 'a-guessed-secret' }), /private_key_jwt/);
    expectRefused(await tokenWith(k, { client_id: k.c.id }), /private_key_jwt/);
  });

  it('a secret and an assertion together: one method per request (invalid_request)', async () => {
    const res = await tokenWith(k, withAssertion(await assertionFor(k), { client_secret: 'x' }));
    expectOAuthError(res, 400, 'invalid_request');
  });

  it('another client_assertion_type, or its half missing', async () => {
    const assertion = await assertionFor(k);
    expectRefused(
      await tokenWith(k, {
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer',
        client_assertion: assertion,
      }),
      /client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer/,
    );
    expectRefused(await tokenWith(k, { client_assertion: assertion }), /client_assertion_type must be/);
    expectRefused(
      await tokenWith(k, { client_assertion_type: JWT_BEARER, client_id: k.c.id }),
      /client_assertion is missing/,
    );
  });

  it.each([
    ['not a JWT', 'garbage'],
    ['three parts of nothing', '..'],
    ['a header that is not JSON', `${Buffer.from('{').toString('base64url')}.e30.c2ln`],
    [
      'claims that are not an object',
      `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('[1]').toString('base64url')}.c2ln`,
    ],
    ['an encrypted token (five parts)', 'a.b.c.d.e'],
    ['a huge value', 'a'.repeat(20_000)],
  ])('garbage: %s', async (_what, assertion) => {
    const res = await tokenWith(k, withAssertion(assertion, { client_id: k.c.id }));
    expectOAuthError(res, 401, 'invalid_client');
  });

  it('a signature that is garbage under a known kid and alg', async () => {
    const [h, c] = (await assertionFor(k)).split('.');
    expectRefused(await tokenWith(k, withAssertion(`${h}.${c}.AAAA`)), /signature does not verify/);
  });
});

describe('private_key_jwt: clients without keys, and seed platforms', () => {
  it('an assertion from a client with a secret is refused: it has no keys', async () => {
    const p = await buildStandardPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const key = await clientKey();
    const assertion = await signAssertion(key, assertionClaims(c.id, `${BASE}/platforms/${p.id}`, nowSeconds()));
    const res = await request(t.app)
      .post(`/platforms/${p.id}/oauth/token`)
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: c.redirectUris[0],
        ...withAssertion(assertion),
      });
    expectRefused(res, /has no registered keys/);
  });

  it('an assertion from a public client is refused', async () => {
    const p = await buildStandardPlatform(t.services);
    const c = await buildClient(t.services, p.id, { type: 'public' });
    const key = await clientKey();
    const assertion = await signAssertion(key, assertionClaims(c.id, `${BASE}/platforms/${p.id}`, nowSeconds()));
    const res = await request(t.app)
      .post(`/platforms/${p.id}/oauth/token`)
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: c.redirectUris[0],
        ...withAssertion(assertion),
      });
    expectRefused(res, /public client has no keys/);
  });

  it('a seed platform knows no client assertions: they are ignored as before, and discovery does not offer them', async () => {
    const p = await buildPlatform(t.services);
    const secretClient = await buildClient(t.services, p.id);
    const u = await buildUser(t.services, p.id);
    const key = await clientKey();
    const stray = withAssertion(await signAssertion(key, assertionClaims(secretClient.id, BASE, nowSeconds())));
    // A secret with a stray assertion beside it: the secret counts, as it always did.
    const code = await buildCode(t.services, { platformId: p.id, client: secretClient, user: u });
    await request(t.app)
      .post('/oauth/token')
      .auth(secretClient.id, secretClient.secret!)
      .type('form')
      .send({
        platform_guid: p.id,
        grant_type: 'authorization_code',
        code,
        redirect_uri: secretClient.redirectUris[0],
        ...stray,
      })
      .expect(200);
    // An assertion alone is no authentication there.
    const alone = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({
        platform_guid: p.id,
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: secretClient.redirectUris[0],
        client_id: secretClient.id,
        ...stray,
      });
    expectRefused(alone, /must authenticate with its secret/);
    const doc = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`).expect(200);
    expect(JSON.stringify(doc.body)).not.toMatch(/private_key_jwt|auth_signing_alg/);
  });

  it("a standard platform's discovery offers private_key_jwt with its algorithms at every endpoint that authenticates clients", async () => {
    const p = await buildStandardPlatform(t.services);
    const doc = (await request(t.app).get(`/platforms/${p.id}/.well-known/openid-configuration`).expect(200)).body;
    const algs = ['RS256', 'PS256', 'ES256', 'EdDSA'];
    expect(doc).toMatchObject({
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: algs,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      introspection_endpoint_auth_signing_alg_values_supported: algs,
      revocation_endpoint_auth_methods_supported: [
        'none',
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      revocation_endpoint_auth_signing_alg_values_supported: algs,
    });
  });
});
