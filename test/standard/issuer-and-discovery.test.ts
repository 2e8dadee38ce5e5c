import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import * as jose from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { authorizeQuery, signInThrough } from '../support/account-flows';
import * as clients from '../../src/repositories/client.repository';
import type { IdTokenAlg } from '../../src/domain/client';
import { runCommand } from '../../src/cli/commands';

// A `standard` platform's issuer is BASE_URL/platforms/{guid} in discovery (found from
// the issuer alone), tokens, the authorization response and every check of a token it issued.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const BASE = 'http://issuer.test';
const AFTER = 'https://app.example/signed-out';
const standardPlatform = async () =>
  (await t.services.platforms.createPlatform(`Standard ${randomBytes(4).toString('hex')}`, undefined, 'standard'))
    .platform;
const LOGOUT_FIELDS = {
  backchannel_logout_supported: true,
  backchannel_logout_session_supported: true,
  frontchannel_logout_supported: true,
  frontchannel_logout_session_supported: true,
};

describe('standard platform: discovery from the issuer', () => {
  it('serves one document at {issuer}/.well-known/openid-configuration, the RFC 8414 path and ?platform_guid', async () => {
    const p = await standardPlatform();
    const issuer = `${BASE}/platforms/${p.id}`;
    const fromIssuer = await request(t.app).get(`/platforms/${p.id}/.well-known/openid-configuration`).expect(200);
    const rfc8414 = await request(t.app).get(`/.well-known/oauth-authorization-server/platforms/${p.id}`).expect(200);
    const byQuery = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`).expect(200);
    expect(rfc8414.body).toEqual(fromIssuer.body);
    expect(byQuery.body).toEqual(fromIssuer.body);
    // Its endpoints under the issuer, without a query (docs/decisions.md, "Agent-ready authorization").
    expect(fromIssuer.body).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      userinfo_endpoint: `${issuer}/oauth/userinfo`,
      jwks_uri: `${issuer}/oauth/jwks`,
      end_session_endpoint: `${issuer}/oauth/logout`,
      id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA', 'HS512'],
      authorization_response_iss_parameter_supported: true,
      ...LOGOUT_FIELDS,
    });
    expect(fromIssuer.body.claims_supported).toContain('sid');
    expect(fromIssuer.headers['content-type']).toMatch(/application\/json/);
    expect(fromIssuer.headers['cache-control']).toBe('public, max-age=3600');
    await request(t.app)
      .get(`/platforms/${p.id}/.well-known/openid-configuration`)
      .set('If-None-Match', fromIssuer.headers.etag)
      .expect(304);
  });

  it('the seed document keeps its issuer and HS512, and gains the logout fields and sid (both profiles)', async () => {
    const p = await buildPlatform(t.services);
    const res = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`).expect(200);
    expect(res.body).toMatchObject({
      issuer: BASE,
      id_token_signing_alg_values_supported: ['HS512'],
      ...LOGOUT_FIELDS,
    });
    expect(res.body.claims_supported).toContain('sid');
  });

  it.each([
    ['a seed platform', async () => (await buildPlatform(t.services)).id],
    ['an unknown platform', async () => '00000000-0000-4000-8000-000000000000'],
    ['a malformed guid', async () => 'not-a-guid'],
  ])("answers the path forms for %s with 404 in the spec's error format, even to a browser", async (_label, guidOf) => {
    const guid = await guidOf();
    for (const path of [
      `/platforms/${guid}/.well-known/openid-configuration`,
      `/.well-known/oauth-authorization-server/platforms/${guid}`,
    ]) {
      expectOAuthError(await request(t.app).get(path), 404, 'not_found');
      expectOAuthError(await request(t.app).get(path).set('Accept', 'text/html'), 404, 'not_found');
    }
  });

  it('switching the profile changes the document at once on this instance', async () => {
    const p = await buildPlatform(t.services);
    expect((await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`)).body.issuer).toBe(
      BASE,
    );
    await runCommand(t.services, ['platform', 'update', '--platform', p.id, '--profile', 'standard']);
    expect((await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`)).body.issuer).toBe(
      `${BASE}/platforms/${p.id}`,
    );
    await request(t.app).get(`/platforms/${p.id}/.well-known/openid-configuration`).expect(200);
  });
});

describe('standard platform: the discovery rate limit covers the issuer paths', () => {
  it('counts them against the platform named in the path, with its override', async () => {
    const limited = await buildTestApp({ RATE_LIMIT_SCALE: '0.05' }); // discovery: 5 per minute
    try {
      const p = (await limited.services.platforms.createPlatform('Limited', undefined, 'standard')).platform;
      const paths = [
        `/platforms/${p.id}/.well-known/openid-configuration`,
        `/.well-known/oauth-authorization-server/platforms/${p.id}`,
      ];
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await request(limited.app).get(paths[i % 2])).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      const res = await request(limited.app).get(paths[0]);
      expectOAuthError(res, 429, 'too_many_requests');
      // another platform's bucket is its own; an override (40 × 0.05 = 2) applies to the path form
      const q = (await limited.services.platforms.createPlatform('Overridden', undefined, 'standard')).platform;
      await limited.services.platforms.setRateLimit(q.id, 'discovery', 40);
      const overridden: number[] = [];
      for (let i = 0; i < 3; i++)
        overridden.push((await request(limited.app).get(`/platforms/${q.id}/.well-known/openid-configuration`)).status);
      expect(overridden).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

/** A standard platform with a client (registered alg, if given) whose post-logout URI is AFTER, and a user. */
async function tenant(opts: { type?: 'confidential' | 'public'; alg?: IdTokenAlg } = {}) {
  const p = await standardPlatform();
  const created = await buildClient(t.services, p.id, {
    type: opts.type ?? 'confidential',
    postLogoutRedirectUris: [AFTER],
  });
  const c = opts.alg
    ? {
        ...(await clients.update(t.database.db, p.id, created.id, { idTokenSignedResponseAlg: opts.alg })),
        secret: created.secret,
      }
    : created;
  const u = await buildUser(t.services, p.id);
  return { p, c, u, issuer: `${BASE}/platforms/${p.id}` };
}

describe("standard platform: the authorization response names the platform's issuer (RFC 9207)", () => {
  it('on the code, on an error after sign-in checks, and on a refused request', async () => {
    const { p, c, u, issuer } = await tenant();
    const callback = new URL(await signInThrough(browser(t.app), p, c, u.email));
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
    expect(callback.searchParams.get('iss')).toBe(issuer);

    const noSession = await browser(t.app).get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(Object.fromEntries(new URL(noSession.location!).searchParams)).toMatchObject({
      error: 'login_required',
      iss: issuer,
      state: 's-1',
    });

    const refused = await browser(t.app).get(`/oauth/authorize?${authorizeQuery(p, c, { response_type: 'token' })}`);
    expect(Object.fromEntries(new URL(refused.location!).searchParams)).toMatchObject({
      error: 'unsupported_response_type',
      iss: issuer,
    });
  });
});

describe('standard platform: id_token_hint (prompt=none and RP-initiated logout)', () => {
  it.each<[string, { type?: 'confidential' | 'public'; alg?: IdTokenAlg }]>([
    ['RS256 (default), confidential', {}],
    ['ES256, public', { type: 'public', alg: 'ES256' }],
    ['EdDSA, confidential', { alg: 'EdDSA' }],
    ['HS512 under the client secret', { alg: 'HS512' }],
  ])('%s: the ID token is accepted as a hint; the access token and forgeries are not', async (_label, opts) => {
    const { p, c, u, issuer } = await tenant(opts);
    const b = browser(t.app);
    const verifier = randomBytes(32).toString('base64url');
    const pkce = {
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    const callback = await signInThrough(b, p, c, u.email, undefined, pkce);
    const exchangeReq = request(t.app).post('/oauth/token').type('form');
    const body = {
      grant_type: 'authorization_code',
      code: new URL(callback).searchParams.get('code'),
      redirect_uri: c.redirectUris[0],
      code_verifier: verifier,
      platform_guid: p.id,
    };
    const tokens = (
      c.type === 'public'
        ? await exchangeReq.send({ ...body, client_id: c.id })
        : await exchangeReq.auth(c.id, c.secret!).send(body)
    ).body;
    const withHint = async (hint: string) =>
      Object.fromEntries(
        new URL(
          (await b.get(`/oauth/authorize?${authorizeQuery(p, c, { ...pkce, prompt: 'none', id_token_hint: hint })}`))
            .location!,
        ).searchParams,
      );

    expect(await withHint(tokens.id_token)).toMatchObject({ code: expect.any(String), iss: issuer });
    expect(await withHint(tokens.access_token)).toMatchObject({
      error: 'invalid_request',
      error_description: 'id_token_hint is not an ID token',
      iss: issuer,
    });

    // alg confusion: an HS512 header naming a published kid, keyed with that public key
    const published = (await request(t.app).get(`/oauth/jwks?platform_guid=${p.id}`)).body.keys as Array<
      Record<string, string>
    >;
    const claims = jose.decodeJwt(tokens.id_token);
    for (const jwk of published) {
      const forged = await new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'HS512', typ: 'JWT', kid: jwk.kid })
        .sign(new TextEncoder().encode(JSON.stringify(jwk)));
      expect(await withHint(forged)).toMatchObject({ error: 'invalid_request', iss: issuer });
    }
    const none = `${jose.base64url.encode(JSON.stringify({ alg: 'none', kid: published[0].kid }))}.${jose.base64url.encode(JSON.stringify(claims))}.`;
    expect(await withHint(none)).toMatchObject({ error: 'invalid_request' });

    const logout = (hint: string) =>
      `/oauth/logout?${new URLSearchParams({ platform_guid: p.id, id_token_hint: hint, post_logout_redirect_uri: AFTER })}`;
    const forgedLogout = await b.get(logout(none));
    expect(forgedLogout.res.status).toBe(400);
    const signedOut = await b.get(logout(tokens.id_token));
    expect(signedOut.location ?? signedOut.res.headers.location).toBe(AFTER);
  });
});
