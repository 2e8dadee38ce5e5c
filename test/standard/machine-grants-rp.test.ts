import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { buildClient, buildUser } from '../factories';
import { REDIRECT_URI, signInAndConsent, startProvider, type Provider } from '../support/rp';
import { DEVICE_CODE_GRANT, TOKEN_EXCHANGE_GRANT } from '../../src/domain/client';

// Client credentials and token exchange as an unmodified openid-client runs them against a
// standard platform over a real port, configured from the issuer URL alone: clientCredentialsGrant
// and genericGrantRequest (RFC 8693); a resource server verifies the RFC 9068 access tokens with
// jose from the JWKS it fetches itself (docs/decisions.md, "Machine and device clients").
let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

const API = 'https://api.example.com/';
const MCP = 'https://mcp.example.com/mcp';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const insecure = { execute: [client.allowInsecureRequests] };

async function setup() {
  const s = p.t.services;
  const platform = (await s.platforms.createPlatform(`Machines ${Date.now()}-${Math.random()}`, undefined, 'standard'))
    .platform;
  await s.resources.create(platform.id, {
    uri: API,
    name: 'Orders API',
    accessTokenTtlSeconds: 300,
    defaultScopes: ['orders:read'],
    scopes: [
      { name: 'orders:read', description: 'Read orders' },
      { name: 'orders:write', description: 'Place orders' },
    ],
  });
  await s.resources.create(platform.id, {
    uri: MCP,
    name: 'Calendar MCP',
    scopes: [{ name: 'calendar', description: 'See the calendar' }],
  });
  const issuer = `${p.base}/platforms/${platform.id}`;
  const configure = async (c: { id: string; secret: string | null }) =>
    client.discovery(new URL(issuer), c.id, undefined, client.ClientSecretBasic(c.secret!), insecure);
  const service = await buildClient(s, platform.id, { grantTypes: ['client_credentials'] });
  const backend = await buildClient(s, platform.id, {
    grantTypes: ['client_credentials', TOKEN_EXCHANGE_GRANT],
    tokenExchangeResources: [MCP],
  });
  const web = await buildClient(s, platform.id, { redirectUris: [REDIRECT_URI] });
  return {
    issuer,
    platformId: platform.id,
    service: { ...service, config: await configure(service) },
    backend: { ...backend, config: await configure(backend) },
    web: { ...web, config: await configure(web) },
    user: await buildUser(s, platform.id),
  };
}

async function verify(issuer: string, accessToken: string, audience: string) {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/oauth/jwks`));
  return (await jwtVerify(accessToken, jwks, { issuer, audience, typ: 'at+jwt', algorithms: ['RS256'] })).payload;
}

it('discovery lists both grants; clientCredentialsGrant gets an RFC 9068 token jose verifies, sub = the client', async () => {
  const s = await setup();
  expect(s.service.config.serverMetadata().grant_types_supported).toEqual([
    'authorization_code',
    'refresh_token',
    'client_credentials',
    DEVICE_CODE_GRANT,
    TOKEN_EXCHANGE_GRANT,
  ]);
  const tokens = await client.clientCredentialsGrant(s.service.config, { resource: API, scope: 'orders:write' });
  expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'orders:write', expires_in: 300 });
  expect(tokens.refresh_token).toBeUndefined();
  expect(tokens.id_token).toBeUndefined();
  const claims = await verify(s.issuer, tokens.access_token, API);
  expect(claims).toMatchObject({ sub: s.service.id, client_id: s.service.id, scope: 'orders:write' });
  expect(claims.auth_time).toBeUndefined();

  expect(await client.tokenIntrospection(s.service.config, tokens.access_token)).toMatchObject({
    active: true,
    sub: s.service.id,
    aud: API,
  });
  await client.tokenRevocation(s.service.config, tokens.access_token);
  expect(await client.tokenIntrospection(s.service.config, tokens.access_token)).toEqual({ active: false });
});

it('clientCredentialsGrant refusals reach openid-client as OAuth errors', async () => {
  const s = await setup();
  const error = (promise: Promise<unknown>) =>
    promise.then(
      () => 'no error',
      (e: { error?: string }) => e.error,
    );
  expect(await error(client.clientCredentialsGrant(s.service.config))).toBe('invalid_target');
  expect(await error(client.clientCredentialsGrant(s.service.config, { resource: API, scope: 'calendar' }))).toBe(
    'invalid_scope',
  );
  expect(await error(client.clientCredentialsGrant(s.web.config, { resource: API }))).toBe('unauthorized_client');
});

it("genericGrantRequest exchanges the user's token for a narrower one with act; jose verifies it", async () => {
  const s = await setup();
  // The user signs in to the web app through the hosted pages, for both resources.
  const verifier = client.randomPKCECodeVerifier();
  const params = new URLSearchParams({
    redirect_uri: REDIRECT_URI,
    scope: 'openid orders:read calendar',
    state: 'st',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  params.append('resource', API);
  params.append('resource', MCP);
  const redirect = await signInAndConsent(p, client.buildAuthorizationUrl(s.web.config, params), s.user.email);
  const user = await client.authorizationCodeGrant(s.web.config, redirect, {
    pkceCodeVerifier: verifier,
    expectedState: 'st',
  });
  const subject = await verify(s.issuer, user.access_token, API);

  // The backend acts for the user at the calendar, proving itself with its own token as actor.
  const actor = await client.clientCredentialsGrant(s.backend.config, { resource: API });
  const exchanged = await client.genericGrantRequest(s.backend.config, TOKEN_EXCHANGE_GRANT, {
    subject_token: user.access_token,
    subject_token_type: ACCESS,
    actor_token: actor.access_token,
    actor_token_type: ACCESS,
    audience: MCP,
  });
  expect(exchanged).toMatchObject({ issued_token_type: ACCESS, token_type: 'bearer', scope: 'calendar' });
  expect(exchanged.refresh_token).toBeUndefined();
  const claims = await verify(s.issuer, exchanged.access_token, MCP);
  expect(claims).toMatchObject({
    sub: s.user.id,
    client_id: s.backend.id,
    scope: 'calendar',
    auth_time: subject.auth_time,
    act: { sub: s.backend.id },
  });
  expect(claims.exp).toBeLessThanOrEqual(subject.exp!);

  // Wider than the subject token, or outside the backend's policy: refused.
  const refusal = (parameters: Record<string, string>) =>
    client
      .genericGrantRequest(s.backend.config, TOKEN_EXCHANGE_GRANT, {
        subject_token: user.access_token,
        subject_token_type: ACCESS,
        ...parameters,
      })
      .then(
        () => 'no error',
        (e: { error?: string }) => e.error,
      );
  expect(await refusal({ resource: API })).toBe('invalid_target');
  expect(await refusal({ resource: MCP, scope: 'calendar orders:write' })).toBe('invalid_scope');
  expect(await refusal({ resource: MCP, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' })).toBe(
    'invalid_request',
  );
});
