import { createHash, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import * as jose from 'jose';
import { buildClient } from '../factories';
import {
  ADDRESS,
  PHONE,
  REDIRECT_URI,
  api,
  authorize,
  authorizeUrl,
  clientAndUser,
  codeFlow,
  drive,
  exchangeCode,
  introspect,
  leftHalfSha256,
  newBrowser,
  pathOf,
  standardOp,
  startClockedProvider,
  userinfo,
  verifyWithJwks,
  basicAuth,
  type ClockedProvider,
  type StandardOp,
  type TestClient,
  type TestUser,
  type TokenResponse,
} from '../support/standard-op';

// The OpenID Foundation's Basic OP certification plan (oidcc-basic-certification-test-plan,
// response_type=code) asserted over HTTP against a `standard` platform. Each test is named after the
// conformance module it mirrors. Every signature is checked against the JWKS the discovery document
// names; no token is trusted for what it says about itself.
let p: ClockedProvider;
beforeAll(async () => {
  p = await startClockedProvider();
});
afterAll(() => p.close());

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

async function tenant(input: Parameters<typeof buildClient>[2] = {}) {
  const op = await standardOp(p);
  const { client, user } = await clientAndUser(p, op, input);
  return { op, client, user };
}

const idClaims = async (op: StandardOp, client: TestClient, idToken: string) =>
  (await verifyWithJwks(p, idToken, op.jwks, { alg: 'RS256', issuer: op.issuer, audience: client.id })).payload;

/** The authorization error sent to the client (OIDC Core 3.1.2.6, RFC 9207): no code, the state and our issuer. */
function expectAuthorizationError(callback: URL, op: StandardOp, error: string, state = 'st-1') {
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
  expect(callback.searchParams.get('error')).toBe(error);
  expect(callback.searchParams.get('state')).toBe(state);
  expect(callback.searchParams.get('iss')).toBe(op.issuer);
  expect(callback.searchParams.has('code')).toBe(false);
}

/** GET on the authorization endpoint without any page: the redirect it answers with. */
async function redirectOf(op: StandardOp, client: TestClient, extra: Record<string, string>) {
  const res = await api(p).get(pathOf(authorizeUrl(op, client, extra).toString()));
  expect(res.status).toBe(302);
  return new URL(res.headers.location);
}

const unsignedJwt = (payload: Record<string, unknown>, header: Record<string, unknown> = { alg: 'none' }) =>
  `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`;

describe('Basic OP: the code flow and its ID token', () => {
  it('oidcc-server: code flow; the ID token is RS256 with a published kid, and iss, aud, azp, exp, iat, auth_time, nonce and at_hash are right', async () => {
    const { op, client, user } = await tenant();
    const signedInAt = seconds(p.now());
    const { callback, tokens } = await codeFlow(p, op, newBrowser(p), client, user, {
      scope: 'openid profile email',
      state: 'state-xyz',
      nonce: 'nonce-123',
    });
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('state')).toBe('state-xyz');
    expect(callback.searchParams.get('iss')).toBe(op.issuer);
    expect(tokens.token_type).toMatch(/^bearer$/i);
    expect(tokens.expires_in).toBeGreaterThan(0);

    const c = await idClaims(op, client, tokens.id_token!);
    expect(c.sub).toBe(user.id);
    expect(c.aud).toBe(client.id); // oidcc-id-token-aud-single-value: a string, not an array
    expect(c.azp).toBe(client.id);
    expect(c.nonce).toBe('nonce-123');
    expect(c.iat).toBe(seconds(p.now()));
    expect(c.exp).toBeGreaterThan(c.iat!);
    expect(c.auth_time).toBe(signedInAt);
    expect(c.at_hash).toBe(leftHalfSha256(tokens.access_token));
    expect(c.sid).toEqual(expect.any(String));

    // The access token, too, verifies against the JWKS alone (a resource server's view).
    const at = (
      await verifyWithJwks(p, tokens.access_token, op.jwks, { alg: 'RS256', issuer: op.issuer, audience: client.id })
    ).payload;
    expect(at).toMatchObject({ sub: user.id, client_id: client.id, scope: 'openid profile email' });
  });

  it('oidcc-server (public client, PKCE): the ID token of a client without a secret verifies against the JWKS too', async () => {
    const { op, client, user } = await tenant({ type: 'public' });
    const verifier = randomBytes(32).toString('base64url');
    const pkce = {
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    const { callback } = await authorize(
      newBrowser(p),
      authorizeUrl(op, client, { ...pkce, nonce: 'public-nonce' }),
      user,
    );
    const res = await api(p)
      .post(pathOf(op.discovery.token_endpoint))
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code'),
        redirect_uri: REDIRECT_URI,
        client_id: client.id,
        code_verifier: verifier,
      });
    expect(res.status).toBe(200);
    const c = await idClaims(op, client, res.body.id_token);
    expect(c).toMatchObject({
      sub: user.id,
      azp: client.id,
      nonce: 'public-nonce',
      at_hash: leftHalfSha256(res.body.access_token),
    });
    await verifyWithJwks(p, res.body.access_token, op.jwks, { alg: 'RS256', issuer: op.issuer, audience: client.id });
  });

  it('oidcc-server-client-secret-post: the code is exchanged with client_secret_post', async () => {
    const { op, client, user } = await tenant();
    const { callback } = await authorize(newBrowser(p), authorizeUrl(op, client), user);
    const res = await exchangeCode(p, op, client, callback.searchParams.get('code'), { method: 'post' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect((await idClaims(op, client, res.body.id_token)).sub).toBe(user.id);
  });

  it('oidcc-ensure-request-without-nonce-succeeds-for-code-flow: no nonce, no nonce claim', async () => {
    const { op, client, user } = await tenant();
    const { tokens } = await codeFlow(p, op, newBrowser(p), client, user, { nonce: '' });
    expect(await idClaims(op, client, tokens.id_token!)).not.toHaveProperty('nonce');
  });

  it('oidcc-ensure-request-with-valid-pkce-succeeds: S256 with its verifier succeeds; a wrong verifier is invalid_grant', async () => {
    const { op, client, user } = await tenant();
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
    const b = newBrowser(p);
    const first = await authorize(b, authorizeUrl(op, client, pkce), user);
    const ok = await exchangeCode(p, op, client, first.callback.searchParams.get('code'), {
      extra: { code_verifier: verifier },
    });
    expect(ok.status).toBe(200);
    const second = await authorize(b, authorizeUrl(op, client, pkce), user);
    const wrong = await exchangeCode(p, op, client, second.callback.searchParams.get('code'), {
      extra: { code_verifier: `${verifier.slice(1)}A` },
    });
    expect({ status: wrong.status, error: wrong.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('oidcc-response-type-missing: the error goes to the client with state and iss', async () => {
    const { op, client } = await tenant();
    expectAuthorizationError(await redirectOf(op, client, { response_type: '' }), op, 'invalid_request');
  });

  it('oidcc-ensure-registered-redirect-uri: an unregistered redirect_uri gets an error page, never a redirect', async () => {
    const { op, client } = await tenant();
    const res = await api(p).get(
      pathOf(authorizeUrl(op, client, { redirect_uri: 'https://attacker.example/callback' }).toString()),
    );
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.type).toBe('text/html');
  });
});

describe('Basic OP: authorization request parameters', () => {
  it('oidcc-ensure-post-request-succeeds: the authorization request sent as a form POST', async () => {
    const { op, client, user } = await tenant();
    const b = newBrowser(p);
    const url = authorizeUrl(op, client, { nonce: 'posted' });
    // Discovery's endpoint carries ?platform_guid=G; the request's own parameters go in the body.
    const endpoint = new URL(op.discovery.authorization_endpoint);
    const body = new URLSearchParams(url.searchParams);
    body.delete('platform_guid');
    const posted = await b.agent.post(pathOf(endpoint.toString())).type('form').send(body.toString());
    expect([302, 303]).toContain(posted.status);
    const { callback } = await drive(b, await b.get(posted.headers.location), user);
    const res = await exchangeCode(p, op, client, callback.searchParams.get('code'));
    expect(res.status).toBe(200);
    expect((await idClaims(op, client, res.body.id_token)).nonce).toBe('posted');
  });

  it('oidcc-ensure-request-with-unknown-parameter-succeeds: an unknown parameter is ignored', async () => {
    const { op, client, user } = await tenant();
    const { tokens } = await codeFlow(p, op, newBrowser(p), client, user, {
      [`extra_${Math.random().toString(36).slice(2, 8)}`]: 'foobar',
    });
    expect((await idClaims(op, client, tokens.id_token!)).sub).toBe(user.id);
  });

  it.each([
    ['oidcc-display-page', { display: 'page' }],
    ['oidcc-display-popup', { display: 'popup' }],
    ['oidcc-ui-locales', { ui_locales: 'se' }],
    ['oidcc-claims-locales', { claims_locales: 'se' }],
    ['oidcc-ensure-request-with-acr-values-succeeds', { acr_values: '1 2' }],
    ['oidcc-ensure-other-scope-order-succeeds', { scope: 'email openid' }],
  ])('%s: the request succeeds', async (_module, extra: Record<string, string>) => {
    const { op, client, user } = await tenant();
    const { callback, tokens } = await codeFlow(p, op, newBrowser(p), client, user, extra);
    expect(callback.searchParams.get('iss')).toBe(op.issuer);
    expect((await idClaims(op, client, tokens.id_token!)).sub).toBe(user.id);
    if (extra.scope) {
      expect(tokens.scope.split(' ').sort()).toEqual(['email', 'openid']);
      expect((await userinfo(p, op, tokens.access_token).expect(200)).body.email).toBe(user.email);
    }
  });

  it('oidcc-claims-essential: the claims parameter is tolerated, and releases nothing beyond the granted scopes', async () => {
    const { op, client, user } = await tenant();
    const claims = JSON.stringify({
      userinfo: { name: { essential: true } },
      id_token: { auth_time: { essential: true } },
    });
    const { tokens } = await codeFlow(p, op, newBrowser(p), client, user, { claims });
    expect((await idClaims(op, client, tokens.id_token!)).auth_time).toEqual(expect.any(Number));
    expect((await userinfo(p, op, tokens.access_token).expect(200)).body).toEqual({
      sub: user.id,
      human_guid: user.id,
    });
  });

  it('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: rejected as request_not_supported', async () => {
    const { op, client } = await tenant();
    const request = unsignedJwt({
      iss: client.id,
      aud: op.issuer,
      response_type: 'code',
      client_id: client.id,
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      state: 'st-1',
      nonce: 'n-1',
    });
    expectAuthorizationError(await redirectOf(op, client, { request }), op, 'request_not_supported');
  });

  it('oidcc-ensure-request-object-with-redirect-uri: a request object naming another redirect_uri is refused to the registered one', async () => {
    const { op, client } = await tenant();
    const request = unsignedJwt({
      client_id: client.id,
      redirect_uri: 'https://attacker.example/callback',
      response_type: 'code',
      scope: 'openid',
      state: 'st-1',
    });
    expectAuthorizationError(await redirectOf(op, client, { request }), op, 'request_not_supported');
  });

  it('oidcc-login-hint: the sign-in page is for the hinted account', async () => {
    const { op, client, user } = await tenant();
    const b = newBrowser(p);
    await b.get(pathOf(authorizeUrl(op, client, { login_hint: user.email }).toString()));
    expect(b.pageTitle()).toBe('Sign in');
    expect(b.html).toContain(`value="${user.email}"`);
    const { tokens } = await codeFlow(p, op, newBrowser(p), client, user, { login_hint: user.email });
    expect((await idClaims(op, client, tokens.id_token!)).sub).toBe(user.id);
  });
});

describe('Basic OP: prompt, max_age and id_token_hint', () => {
  /** A browser signed in through a first flow, and that flow's ID token claims. */
  async function signedIn() {
    const { op, client, user } = await tenant();
    const b = newBrowser(p);
    const first = await codeFlow(p, op, b, client, user);
    return { op, client, user, b, first, firstClaims: await idClaims(op, client, first.tokens.id_token!) };
  }

  async function again(
    op: StandardOp,
    b: ReturnType<typeof newBrowser>,
    client: TestClient,
    user: TestUser,
    extra: Record<string, string>,
  ) {
    const driven = await authorize(b, authorizeUrl(op, client, extra), user);
    const res = await exchangeCode(p, op, client, driven.callback.searchParams.get('code'));
    expect(res.status).toBe(200);
    return { pages: driven.pages, claims: await idClaims(op, client, (res.body as TokenResponse).id_token!) };
  }

  it('oidcc-prompt-none-not-logged-in: login_required, with state and iss', async () => {
    const { op, client } = await tenant();
    expectAuthorizationError(await redirectOf(op, client, { prompt: 'none' }), op, 'login_required');
  });

  it('oidcc-prompt-none-logged-in: a code without any page, for the same user and sign-in', async () => {
    const { op, client, user, b, firstClaims } = await signedIn();
    const step = await b.get(pathOf(authorizeUrl(op, client, { prompt: 'none' }).toString()));
    expect(step.location).toBeDefined();
    const callback = new URL(step.location!);
    expect(callback.searchParams.get('iss')).toBe(op.issuer);
    const res = await exchangeCode(p, op, client, callback.searchParams.get('code'));
    const claims = await idClaims(op, client, res.body.id_token);
    expect(claims.sub).toBe(user.id);
    expect(claims.auth_time).toBe(firstClaims.auth_time);
  });

  it('oidcc-prompt-login: the user signs in again and auth_time moves', async () => {
    const { op, client, user, b, firstClaims } = await signedIn();
    p.tick(5);
    const { pages, claims } = await again(op, b, client, user, { prompt: 'login' });
    expect(pages).toContain('Sign in');
    expect(claims.sub).toBe(user.id);
    expect(claims.auth_time).toBe((firstClaims.auth_time as number) + 5);
  });

  it('oidcc-max-age-1: a sign-in older than max_age is repeated and auth_time moves', async () => {
    const { op, client, user, b, firstClaims } = await signedIn();
    p.tick(2);
    const { pages, claims } = await again(op, b, client, user, { max_age: '1' });
    expect(pages).toContain('Sign in');
    expect(claims.auth_time).toBe((firstClaims.auth_time as number) + 2);
  });

  it('oidcc-max-age-10000: a recent enough sign-in is not repeated and auth_time stays', async () => {
    const { op, client, user, b, firstClaims } = await signedIn();
    p.tick(2);
    const { pages, claims } = await again(op, b, client, user, { max_age: '10000' });
    expect(pages).not.toContain('Sign in');
    expect(claims.auth_time).toBe(firstClaims.auth_time);
  });

  it("oidcc-id-token-hint: with two accounts signed in, prompt=none and an RS256 ID token as hint answer a code for the hint's subject", async () => {
    const { op, client, user, b, first } = await signedIn();
    // A second account signed in on the same browser: without a hint, prompt=none cannot choose.
    const second = await clientAndUser(p, op);
    await b.get(pathOf(authorizeUrl(op, client).toString()));
    expect(b.pageTitle()).toBe('Choose an account');
    const secondFlow = await drive(b, await b.submit('/chooser', { another: '1' }), second.user);
    const secondIdToken = (await exchangeCode(p, op, client, secondFlow.callback.searchParams.get('code'))).body
      .id_token as string;
    const noHint = await b.get(pathOf(authorizeUrl(op, client, { prompt: 'none' }).toString()));
    expectAuthorizationError(new URL(noHint.location!), op, 'account_selection_required');

    for (const [hint, sub] of [
      [first.tokens.id_token!, user.id],
      [secondIdToken, second.user.id],
    ]) {
      const step = await b.get(pathOf(authorizeUrl(op, client, { prompt: 'none', id_token_hint: hint }).toString()));
      const callback = new URL(step.location!);
      expect(callback.searchParams.get('error')).toBeNull();
      const res = await exchangeCode(p, op, client, callback.searchParams.get('code'));
      expect((await idClaims(op, client, res.body.id_token)).sub).toBe(sub);
    }
  });

  it("oidcc-id-token-hint (OP side): an unsigned, re-signed or truncated hint, or another client's ID token, is refused, never taken for its sub", async () => {
    const { op, client, user, b, first } = await signedIn();
    const [h, payload] = first.tokens.id_token!.split('.');
    const unsigned = unsignedJwt(jose.decodeJwt(first.tokens.id_token!), {
      alg: 'none',
      kid: jose.decodeProtectedHeader(first.tokens.id_token!).kid,
    });
    const foreign = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const resigned = await new jose.SignJWT(jose.decodeJwt(first.tokens.id_token!))
      .setProtectedHeader(jose.decodeProtectedHeader(first.tokens.id_token!) as jose.JWTHeaderParameters)
      .sign(foreign);
    const truncated = `${h}.${payload}.${first.tokens.id_token!.split('.')[2].slice(0, -8)}AAAAAAAA`;
    // a genuine ID token of another client of the platform is no hint for this one
    const { client: other } = await clientAndUser(p, op);
    const otherFlow = await codeFlow(p, op, b, other, user);
    for (const hint of [unsigned, resigned, truncated, otherFlow.tokens.id_token!]) {
      const step = await b.get(pathOf(authorizeUrl(op, client, { prompt: 'none', id_token_hint: hint }).toString()));
      expectAuthorizationError(new URL(step.location!), op, 'invalid_request');
    }
  });
});

describe('Basic OP: codes and refresh tokens', () => {
  it.each([
    ['oidcc-codereuse', 0],
    ['oidcc-codereuse-30seconds', 30],
  ])('%s: a second exchange is invalid_grant and revokes the tokens of the first', async (_module, wait) => {
    const { op, client, user } = await tenant();
    const { code, tokens } = await codeFlow(p, op, newBrowser(p), client, user, {
      scope: 'openid email offline_access',
    });
    expect((await userinfo(p, op, tokens.access_token)).status).toBe(200);
    p.tick(wait);
    const again = await exchangeCode(p, op, client, code);
    expect({ status: again.status, error: again.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    const info = await userinfo(p, op, tokens.access_token);
    expect({ status: info.status, error: info.body.error }).toEqual({ status: 401, error: 'invalid_token' });
    expect((await introspect(p, op, client, tokens.access_token)).body).toEqual({ active: false });
    expect((await introspect(p, op, client, tokens.refresh_token!)).body).toEqual({ active: false });
  });

  const refreshWith = (op: StandardOp, client: TestClient, refreshToken: string) =>
    api(p)
      .post(pathOf(op.discovery.token_endpoint))
      .set('Authorization', basicAuth(client))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken });

  it('oidcc-refresh-token: a refresh returns new tokens verified against the JWKS, same subject and auth_time; bound to its client', async () => {
    const { op, client, user } = await tenant();
    const { tokens } = await codeFlow(p, op, newBrowser(p), client, user, { scope: 'openid email offline_access' });
    const original = await idClaims(op, client, tokens.id_token!);
    p.tick(10);

    // Another client of the same platform cannot use it…
    const other = await buildClient(p.t.services, op.platformId, { redirectUris: [REDIRECT_URI] });
    const stolen = await refreshWith(op, other, tokens.refresh_token!);
    expect({ status: stolen.status, error: stolen.body.error }).toEqual({ status: 400, error: 'invalid_grant' });

    // …its own client can.
    const res = await refreshWith(op, client, tokens.refresh_token!);
    expect(res.status).toBe(200);
    const refreshed = res.body as TokenResponse;
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await verifyWithJwks(p, refreshed.access_token, op.jwks, { alg: 'RS256', issuer: op.issuer, audience: client.id });
    expect((await userinfo(p, op, refreshed.access_token).expect(200)).body.sub).toBe(user.id);
    // OIDC Core 12.2: a new ID token with the same iss, sub, aud and auth_time, and a new iat
    const c = await idClaims(op, client, refreshed.id_token!);
    expect(c).toMatchObject({
      iss: original.iss,
      sub: original.sub,
      aud: original.aud,
      auth_time: original.auth_time,
      sid: original.sid,
    });
    expect(c.iat).toBe(original.iat! + 10);
    expect(c.at_hash).toBe(leftHalfSha256(refreshed.access_token));
  });
});

describe('Basic OP: userinfo', () => {
  async function tokensFor(scope: string) {
    const { op, client, user } = await tenant();
    const { tokens } = await codeFlow(p, op, newBrowser(p), client, user, { scope });
    return { op, client, user, tokens };
  }

  it('oidcc-userinfo-get: GET with the token in the header; sub matches the ID token', async () => {
    const { op, client, user, tokens } = await tokensFor('openid email');
    const res = await userinfo(p, op, tokens.access_token, 'get').expect(200);
    expect(res.body.sub).toBe((await idClaims(op, client, tokens.id_token!)).sub);
    expect(res.body.email).toBe(user.email);
  });

  it('oidcc-userinfo-post-header: POST with the token in the header', async () => {
    const { op, user, tokens } = await tokensFor('openid email');
    const res = await userinfo(p, op, tokens.access_token, 'post').expect(200);
    expect(res.body).toMatchObject({ sub: user.id, email: user.email });
  });

  it('oidcc-userinfo-post-body: the token in a form body (RFC 6750 §2.2, optional) is refused with the spec error, never a 5xx', async () => {
    const { op, tokens } = await tokensFor('openid email');
    const res = await api(p)
      .post(pathOf(op.discovery.userinfo_endpoint))
      .type('form')
      .send({ access_token: tokens.access_token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  const PROFILE = ['name', 'given_name', 'family_name', 'preferred_username', 'birthdate', 'picture', 'updated_at'];
  const BASE = ['sub', 'human_guid'];
  it.each([
    ['oidcc-scope-profile', 'openid profile', [...BASE, ...PROFILE]],
    ['oidcc-scope-email', 'openid email', [...BASE, 'email', 'email_verified']],
    ['oidcc-scope-address', 'openid address', [...BASE, 'address']],
    ['oidcc-scope-phone', 'openid phone', [...BASE, 'phone_number', 'phone_number_verified']],
    [
      'oidcc-scope-all',
      'openid profile email address phone',
      [...BASE, ...PROFILE, 'email', 'email_verified', 'address', 'phone_number', 'phone_number_verified'],
    ],
  ])('%s: userinfo releases exactly the claims of the granted scopes', async (_module, scope, claims) => {
    const { op, user, tokens } = await tokensFor(scope);
    expect(tokens.scope.split(' ').sort()).toEqual(scope.split(' ').sort());
    const res = await userinfo(p, op, tokens.access_token).expect(200);
    expect(Object.keys(res.body).sort()).toEqual([...claims].sort());
    expect(res.body.sub).toBe(user.id);
    if (scope.includes('address')) expect(res.body.address).toEqual(ADDRESS);
    if (scope.includes('phone')) expect(res.body).toMatchObject({ phone_number: PHONE, phone_number_verified: true });
    if (scope.includes('profile')) expect(res.body).toMatchObject({ given_name: 'Ada', family_name: 'Lovelace' });
  });

  it('oidcc-idtoken-signature / oidcc-idtoken-unsigned (OP side): forged access tokens are invalid_token at userinfo', async () => {
    const { op, tokens } = await tokensFor('openid email');
    const at = tokens.access_token;
    const [h, body, sig] = at.split('.');
    const header = jose.decodeProtectedHeader(at);
    const claims = jose.decodeJwt(at);
    const flip = (s: string, i: number) => `${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
    const rsaJwk = op.jwks.find((k) => k.kid === header.kid)!;
    const foreign = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = {
      'tampered signature': `${h}.${body}.${flip(sig, 10)}`,
      'tampered payload': `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: 'openid email profile phone address' })).toString('base64url')}.${sig}`,
      'alg none': unsignedJwt(claims, { alg: 'none', kid: header.kid }),
      'HS256 keyed with the public key': await new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid: header.kid })
        .sign(
          new TextEncoder().encode(
            createPublicKey({ key: rsaJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string,
          ),
        ),
      'a foreign key under a published kid': await new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: header.kid })
        .sign(foreign),
      'the ID token': tokens.id_token!,
    };
    for (const [what, token] of Object.entries(forged)) {
      const res = await userinfo(p, op, token);
      expect({ what, status: res.status, error: res.body.error }).toEqual({
        what,
        status: 401,
        error: 'invalid_token',
      });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    }
    // the genuine token still works
    expect((await userinfo(p, op, at)).status).toBe(200);
  });
});
