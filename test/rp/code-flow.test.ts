import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import {
  codeFlow,
  discoveryUrl,
  REDIRECT_URI,
  setup,
  signInAndConsent,
  startProvider,
  type Method,
  type Provider,
} from '../support/rp';

let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

const atHash = (accessToken: string) =>
  createHash('sha512').update(accessToken).digest().subarray(0, 32).toString('base64url');

it('discovery works from the full well-known URL with ?platform_guid, and the issuer is the base URL', async () => {
  const s = await setup(p, 'client_secret_basic');
  const md = s.config.serverMetadata();
  expect(md.issuer).toBe(p.base);
  for (const [field, path] of [
    ['authorization_endpoint', '/oauth/authorize'],
    ['token_endpoint', '/oauth/token'],
    ['userinfo_endpoint', '/oauth/userinfo'],
    ['jwks_uri', '/oauth/jwks'],
    ['introspection_endpoint', '/oauth/introspect'],
    ['revocation_endpoint', '/oauth/revoke'],
  ] as const) {
    expect(md[field]).toBe(`${p.base}${path}?platform_guid=${s.platformId}`);
  }
  expect(md.id_token_signing_alg_values_supported).toEqual(['HS512']);
  expect(md.token_endpoint_auth_methods_supported).toEqual(
    expect.arrayContaining(['client_secret_basic', 'client_secret_post', 'none']),
  );
  expect(md.authorization_response_iss_parameter_supported).toBe(true);
  expect(discoveryUrl(p.base, s.platformId).href).toContain('/.well-known/openid-configuration?platform_guid=');
});

describe.each<[Method, string]>([
  ['client_secret_basic', 'confidential client, secret in the Basic header'],
  ['client_secret_post', 'confidential client, secret in the body'],
  ['none', 'public client with PKCE'],
])('%s (%s)', (method) => {
  it('completes the code flow; the ID token verifies independently', async () => {
    const s = await setup(p, method);
    const { tokens, redirect, state } = await codeFlow(p, s, 'openid profile email');

    // The authorization response as a standard RP sees it (RFC 9207 iss included).
    expect(redirect.origin + redirect.pathname).toBe(REDIRECT_URI);
    expect(redirect.searchParams.get('state')).toBe(state);
    expect(redirect.searchParams.get('iss')).toBe(p.base);

    expect(tokens.token_type).toBe('bearer'); // oauth4webapi lower-cases it
    expect(tokens.expires_in).toBe(p.t.config.accessTokenTtlSeconds);
    expect(tokens.scope).toBe('openid profile email');
    expect(tokens.refresh_token).toBeUndefined();
    const idToken = tokens.id_token!;
    expect(typeof idToken).toBe('string');

    const header = decodeProtectedHeader(idToken);
    expect(header.alg).toBe('HS512');
    if (method === 'none') {
      // Public client: platform key, kid listed in the JWKS (descriptors only, no key material).
      expect(typeof header.kid).toBe('string');
      const jwks = (await (await fetch(s.config.serverMetadata().jwks_uri!)).json()) as {
        keys: Record<string, unknown>[];
      };
      expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
      for (const k of jwks.keys) {
        expect(k).toMatchObject({ kty: 'oct', alg: 'HS512', use: 'sig' });
        expect(k).not.toHaveProperty('k');
      }
    } else {
      // Confidential client: keyed with the client secret's UTF-8 octets (OIDC Core 10.1), no kid.
      expect(header).not.toHaveProperty('kid');
      const { payload } = await jwtVerify(idToken, new TextEncoder().encode(s.secret!), {
        algorithms: ['HS512'],
        issuer: p.base,
        audience: s.clientId,
      });
      expect(payload.sub).toBe(s.user.id);
    }

    const claims = tokens.claims()!;
    expect(claims.iss).toBe(p.base);
    expect(claims.aud).toBe(s.clientId);
    expect(claims.sub).toBe(s.user.id);
    expect(claims.azp).toBe(s.clientId);
  });
});

it('ID token carries nonce, auth_time, a correct at_hash and the scope rule 3 claims', async () => {
  const s = await setup(p, 'client_secret_basic');
  const before = Math.floor(Date.now() / 1000);
  const { tokens, nonce } = await codeFlow(p, s, 'openid');
  const after = Math.floor(Date.now() / 1000);
  const { payload: c } = await jwtVerify(tokens.id_token!, new TextEncoder().encode(s.secret!), {
    algorithms: ['HS512'],
    issuer: p.base,
    audience: s.clientId,
  });

  expect(c.nonce).toBe(nonce);
  expect(typeof c.auth_time).toBe('number');
  expect(c.auth_time).toBeGreaterThanOrEqual(before - 1);
  expect(c.auth_time).toBeLessThanOrEqual(after + 1);
  expect(c.at_hash).toBe(atHash(tokens.access_token));
  expect(c.exp! - c.iat!).toBeGreaterThan(0);

  // Scope rule 3: always present, even with scope=openid alone.
  expect(c).toMatchObject({
    sub: s.user.id,
    name: 'Ada Lovelace',
    given_name: 'Ada',
    family_name: 'Lovelace',
    email: s.user.email,
    picture: expect.stringMatching(/^https?:\/\//),
  });
  // Scope-gated claims: absent without their scope.
  expect(c).not.toHaveProperty('birthdate');
  expect(c).not.toHaveProperty('phone_number');
  expect(c).not.toHaveProperty('address');
});

it('a wrong PKCE verifier is refused with invalid_grant (public client)', async () => {
  const s = await setup(p, 'none');
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(s.config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: 's1',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const redirect = await signInAndConsent(p, url, s.user.email);
  await expect(
    client.authorizationCodeGrant(s.config, redirect, {
      pkceCodeVerifier: client.randomPKCECodeVerifier(),
      expectedState: 's1',
    }),
  ).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
});
