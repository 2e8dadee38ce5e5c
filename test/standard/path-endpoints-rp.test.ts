import * as client from 'openid-client';
import { buildClient, buildUser } from '../factories';
import {
  clientAuth,
  codeFlow,
  REDIRECT_URI,
  signInAndConsent,
  startProvider,
  type Provider,
  type Setup,
} from '../support/rp';

// docs/decisions.md, "Agent-ready authorization": an unmodified openid-client that knows only a
// standard platform's issuer uses the endpoints its metadata lists (under the issuer, no query)
// for everything: the code flow, refresh, UserInfo, introspection, revocation and logout; and an
// OAuth request without openid through the same metadata gets its access token, no ID token.
let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

const ENDPOINTS = {
  authorization_endpoint: 'authorize',
  token_endpoint: 'token',
  userinfo_endpoint: 'userinfo',
  jwks_uri: 'jwks',
  introspection_endpoint: 'introspect',
  revocation_endpoint: 'revoke',
  end_session_endpoint: 'logout',
} as const;

async function fromIssuer(): Promise<Setup & { issuer: string }> {
  const platform = (await p.t.services.platforms.createPlatform(`Paths RP ${Date.now()}`, undefined, 'standard'))
    .platform;
  const c = await buildClient(p.t.services, platform.id, {
    redirectUris: [REDIRECT_URI],
    postLogoutRedirectUris: ['https://rp.example/signed-out'],
  });
  const user = await buildUser(p.t.services, platform.id);
  const issuer = `${p.base}/platforms/${platform.id}`;
  const config = await client.discovery(new URL(issuer), c.id, undefined, clientAuth('client_secret_basic', c.secret), {
    execute: [client.allowInsecureRequests],
  });
  client.enableNonRepudiationChecks(config);
  return { platformId: platform.id, clientId: c.id, secret: c.secret, config, user, issuer };
}

it('discovers from the issuer, and every endpoint it then calls is a path under the issuer', async () => {
  const s = await fromIssuer();
  const md = s.config.serverMetadata();
  for (const [name, path] of Object.entries(ENDPOINTS))
    expect(md[name as keyof typeof ENDPOINTS]).toBe(`${s.issuer}/oauth/${path}`);

  const { tokens } = await codeFlow(p, s, 'openid email offline_access');
  expect(tokens.claims()).toMatchObject({ iss: s.issuer, sub: s.user.id, aud: s.clientId });

  const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
  const info = await client.fetchUserInfo(s.config, refreshed.access_token, s.user.id);
  expect(info).toMatchObject({ sub: s.user.id, email: s.user.email });

  expect(await client.tokenIntrospection(s.config, refreshed.access_token)).toMatchObject({
    active: true,
    sub: s.user.id,
  });
  await client.tokenRevocation(s.config, refreshed.access_token);
  expect(await client.tokenIntrospection(s.config, refreshed.access_token)).toMatchObject({ active: false });

  const logout = client.buildEndSessionUrl(s.config, {
    id_token_hint: refreshed.id_token!,
    post_logout_redirect_uri: 'https://rp.example/signed-out',
    state: 'bye',
  });
  expect(`${logout.origin}${logout.pathname}`).toBe(`${s.issuer}/oauth/logout`);
  const res = await fetch(logout, { redirect: 'manual' });
  expect(res.status).toBe(302);
  expect(res.headers.get('location')).toBe('https://rp.example/signed-out?state=bye');
});

it('an OAuth request without openid: an access token and a refresh token, no ID token; UserInfo answers insufficient_scope', async () => {
  const s = await fromIssuer();
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(s.config, {
    redirect_uri: REDIRECT_URI,
    scope: 'email offline_access',
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  expect(url.pathname).toBe(new URL(`${s.issuer}/oauth/authorize`).pathname);
  const redirect = await signInAndConsent(p, url, s.user.email);
  const tokens = await client.authorizationCodeGrant(s.config, redirect, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  expect(tokens.id_token).toBeUndefined();
  expect(tokens.refresh_token).toEqual(expect.any(String));
  expect(tokens.scope).toBe('email offline_access');

  const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
  expect(refreshed.id_token).toBeUndefined();
  const refused = await client
    .fetchUserInfo(s.config, refreshed.access_token, client.skipSubjectCheck)
    .catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(client.WWWAuthenticateChallengeError);
  const challenge = (refused as client.WWWAuthenticateChallengeError).cause[0];
  expect(challenge).toMatchObject({ scheme: 'bearer', parameters: { error: 'insufficient_scope', scope: 'openid' } });
});
