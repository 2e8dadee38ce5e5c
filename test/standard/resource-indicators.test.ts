import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { Express } from 'express';
import { buildClient, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import {
  clientAuth,
  REDIRECT_URI,
  setup,
  signInAndConsent,
  startProvider,
  type Provider,
  type Setup,
} from '../support/rp';

// RFC 8707 resource indicators on a standard platform (docs/decisions.md, "Agent-ready
// authorization"): an unmodified openid-client names resources at authorize and at the token
// endpoint; the access token's aud and lifetime come from them; a seed platform ignores them.
let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

const API = 'https://api.example.com/';
const MCP = 'https://mcp.example.com/mcp';

async function standard(): Promise<Setup & { issuer: string }> {
  const platform = (
    await p.t.services.platforms.createPlatform(`Resources RP ${Date.now()}-${Math.random()}`, undefined, 'standard')
  ).platform;
  const c = await buildClient(p.t.services, platform.id, { redirectUris: [REDIRECT_URI] });
  const user = await buildUser(p.t.services, platform.id);
  await p.t.services.resources.create(platform.id, {
    uri: API,
    name: 'Orders API',
    accessTokenTtlSeconds: 120,
    defaultScopes: ['orders:read'],
    scopes: [
      { name: 'orders:read', description: 'Read your orders' },
      { name: 'orders:write', description: 'Place orders for you' },
    ],
  });
  await p.t.services.resources.create(platform.id, {
    uri: MCP,
    name: 'Calendar MCP',
    accessTokenTtlSeconds: 600,
    scopes: [{ name: 'calendar', description: 'See your calendar' }],
  });
  const issuer = `${p.base}/platforms/${platform.id}`;
  const config = await client.discovery(new URL(issuer), c.id, undefined, clientAuth('client_secret_basic', c.secret), {
    execute: [client.allowInsecureRequests],
  });
  return { platformId: platform.id, clientId: c.id, secret: c.secret, config, user, issuer };
}

/** The authorization URL with PKCE and state; `resource` repeated as given; no scope when `scope` is undefined. */
async function authorizationUrl(s: Setup, scope: string | undefined, resources: string[]) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const params = new URLSearchParams({
    redirect_uri: REDIRECT_URI,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  if (scope !== undefined) params.set('scope', scope);
  for (const r of resources) params.append('resource', r);
  return { url: client.buildAuthorizationUrl(s.config, params), verifier, state };
}

async function grant(s: Setup, scope: string | undefined, resources: string[], tokenResources: string[] = []) {
  const { url, verifier, state } = await authorizationUrl(s, scope, resources);
  const redirect = await signInAndConsent(p, url, s.user.email);
  const extra = new URLSearchParams(tokenResources.map((r) => ['resource', r]));
  return client.authorizationCodeGrant(s.config, redirect, { pkceCodeVerifier: verifier, expectedState: state }, extra);
}

async function verified(s: { issuer: string }, accessToken: string) {
  const jwks = createRemoteJWKSet(new URL(`${s.issuer}/oauth/jwks`));
  return (await jwtVerify(accessToken, jwks, { issuer: s.issuer, typ: 'at+jwt' })).payload;
}

/** The redirect's error when authorize refuses the request (the user never signs in). */
async function authorizeError(s: Setup, query: string) {
  const endpoint = new URL(s.config.serverMetadata().authorization_endpoint!);
  const res = await fetch(`${endpoint.origin}${endpoint.pathname}?${query}`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return Object.fromEntries(new URL(res.headers.get('location')!).searchParams);
}

const baseQuery = (s: Setup) =>
  `response_type=code&client_id=${s.clientId}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=st`;

it("one resource named, scope omitted: the resource's default scopes only, aud the resource, its lifetime, introspection reports aud", async () => {
  const s = await standard();
  const tokens = await grant(s, undefined, [API]);
  expect(tokens.scope).toBe('orders:read');
  expect(tokens.id_token).toBeUndefined();
  expect(tokens.expires_in).toBe(120);
  const claims = await verified(s, tokens.access_token);
  expect(claims).toMatchObject({ aud: API, scope: 'orders:read', client_id: s.clientId, sub: s.user.id });
  expect(claims.exp! - claims.iat!).toBe(120);
  expect(await client.tokenIntrospection(s.config, tokens.access_token)).toMatchObject({
    active: true,
    aud: API,
    scope: 'orders:read',
  });
});

it('two resources: aud both and the shorter lifetime; the token request narrows to one (its lifetime) and may not widen', async () => {
  const s = await standard();
  const both = await grant(s, 'openid orders:write calendar offline_access', [API, MCP]);
  expect(both.scope).toBe('openid offline_access orders:write calendar');
  expect(both.id_token).toEqual(expect.any(String));
  expect(await verified(s, both.access_token)).toMatchObject({ aud: [API, MCP] });
  expect(both.expires_in).toBe(120);

  const narrowed = await grant(s, 'calendar offline_access', [API, MCP], [MCP]);
  expect(await verified(s, narrowed.access_token)).toMatchObject({ aud: MCP, scope: 'offline_access calendar' });
  expect(narrowed.expires_in).toBe(600);

  // Refresh: each request narrows anew among the grant's resources, never beyond.
  const toApi = await client.refreshTokenGrant(s.config, narrowed.refresh_token!, { resource: API });
  expect(await verified(s, toApi.access_token)).toMatchObject({ aud: API });
  expect(toApi.expires_in).toBe(120);
  const again = await client.refreshTokenGrant(s.config, toApi.refresh_token!);
  expect(await verified(s, again.access_token)).toMatchObject({ aud: [API, MCP] });

  const only = await grant(s, 'calendar offline_access', [MCP]);
  const widened = await client
    .refreshTokenGrant(s.config, only.refresh_token!, { resource: API })
    .catch((e: unknown) => e);
  expect(widened).toMatchObject({ error: 'invalid_target' });
  // Nothing was spent: the same refresh token still works.
  expect(await verified(s, (await client.refreshTokenGrant(s.config, only.refresh_token!)).access_token)).toMatchObject(
    { aud: MCP },
  );
});

it('at the token endpoint: a resource the request did not name, or not registered, is invalid_target (JSON 400) and the code stays usable', async () => {
  const s = await standard();
  const { url, verifier, state } = await authorizationUrl(s, 'calendar', [MCP]);
  const redirect = await signInAndConsent(p, url, s.user.email);
  const code = redirect.searchParams.get('code')!;
  const exchange = (resource: string) =>
    fetch(s.config.serverMetadata().token_endpoint!, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${s.clientId}:${s.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        resource,
      }),
    });
  for (const resource of [API, 'https://unknown.example.com/', 'relative/path', `${MCP}#frag`]) {
    const res = await exchange(resource);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_target' });
  }
  const tokens = await client.authorizationCodeGrant(
    s.config,
    redirect,
    { pkceCodeVerifier: verifier, expectedState: state },
    { resource: MCP },
  );
  expect(await verified(s, tokens.access_token)).toMatchObject({ aud: MCP });
});

it('at authorize: an unknown resource, a relative URI or one with a fragment is invalid_target, sent back to the client', async () => {
  const s = await standard();
  for (const resource of ['https://unknown.example.com/', '/api', `${API}#x`]) {
    expect(
      await authorizeError(
        s,
        `${baseQuery(s)}&scope=openid&resource=${encodeURIComponent(resource)}&resource=${encodeURIComponent(MCP)}`,
      ),
    ).toMatchObject({ error: 'invalid_target', state: 'st' });
  }
});

it('without resource: as before, aud the client and the platform lifetime', async () => {
  const s = await standard();
  const tokens = await grant(s, 'openid', []);
  expect(await verified(s, tokens.access_token)).toMatchObject({ aud: s.clientId });
  expect(tokens.expires_in).toBe(p.t.services.deps.config.accessTokenTtlSeconds);
});

it('consent names each resource with the granted scopes and their descriptions, and is remembered per resource scope', async () => {
  const s = await standard();
  const b = browser(p.server as unknown as Express);
  const { url } = await authorizationUrl(s, 'orders:read calendar', [API, MCP]);
  await b.get(url.pathname + url.search);
  const consent = await b.submit('/signin', { email: s.user.email, password: TEST_PASSWORD });
  expect(consent.location).toBeUndefined();
  expect(b.html).toContain('will be able to use Orders API');
  expect(b.html).toContain('Read your orders');
  expect(b.html).not.toContain('Place orders for you');
  expect(b.html).toContain('will be able to use Calendar MCP');
  expect(b.html).toContain('See your calendar');
  expect((await b.submit('/consent', { decision: 'allow' })).location).toContain('code=');

  // The same request again, through the account chooser: no consent page.
  const pick = async (scope: string, resources: string[]) => {
    const { url: next } = await authorizationUrl(s, scope, resources);
    await b.get(next.pathname + next.search);
    return b.submit('/chooser', { account: s.user.id });
  };
  expect((await pick('orders:read calendar', [API, MCP])).location).toContain('code=');
  // A scope of a resource not yet granted: asked again.
  expect((await pick('orders:read orders:write', [API])).location).toBeUndefined();
  expect(b.html).toContain('Place orders for you');
});

it('a seed platform ignores resource exactly as before', async () => {
  const s = await setup(p, 'client_secret_basic');
  const seedQuery = `${baseQuery(s)}&scope=openid&nonce=n`;
  // Once: an unknown parameter, ignored; repeated: a repeated parameter, invalid_request.
  const once = await fetch(
    `${p.base}/oauth/authorize?platform_guid=${s.platformId}&${seedQuery}&resource=${encodeURIComponent(API)}`,
    { redirect: 'manual' },
  );
  expect(once.headers.get('location')).toMatch(/^\/interaction\//); // on to the sign-in page, not back to the client
  expect(await authorizeError(s, `platform_guid=${s.platformId}&${seedQuery}&resource=a&resource=b`)).toMatchObject({
    error: 'invalid_request',
  });

  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(s.config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state,
    nonce: 'n',
    resource: 'https://unknown.example.com/',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const redirect = await signInAndConsent(p, url, s.user.email);
  const tokens = await client.authorizationCodeGrant(
    s.config,
    redirect,
    { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: 'n' },
    { resource: 'https://unknown.example.com/' },
  );
  const [, payload] = tokens.access_token.split('.');
  expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({ aud: s.clientId });
});
