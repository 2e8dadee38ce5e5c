import * as client from 'openid-client';
import * as jose from 'jose';
import { buildClient, buildUser } from '../factories';
import {
  clientAuth,
  codeFlow,
  REDIRECT_URI,
  startProvider,
  type Method,
  type Provider,
  type Setup,
} from '../support/rp';
import * as clients from '../../src/repositories/client.repository';
import type { IdTokenAlg } from '../../src/domain/client';

// An unmodified relying party that knows only a standard platform's issuer
// URL (no .well-known URL given) and verifies every signature (enableNonRepudiationChecks) completes
// the code flow, refreshes and reads userinfo; a resource server verifies access tokens from the
// JWKS it fetches itself (jose.createRemoteJWKSet). All over a real listening port.
let p: Provider;
beforeAll(async () => {
  p = await startProvider();
});
afterAll(() => p.close());

/** A standard platform, a client registered with `alg` (default RS256), a user, and openid-client configured from the issuer alone. */
async function standardSetup(method: Method, alg?: IdTokenAlg): Promise<Setup & { issuer: string }> {
  const platform = (await p.t.services.platforms.createPlatform(`RP ${Date.now()}`, undefined, 'standard')).platform;
  const c = await buildClient(p.t.services, platform.id, {
    type: method === 'none' ? 'public' : 'confidential',
    redirectUris: [REDIRECT_URI],
  });
  if (alg) await clients.update(p.t.database.db, platform.id, c.id, { idTokenSignedResponseAlg: alg });
  const user = await buildUser(p.t.services, platform.id);
  const issuer = `${p.base}/platforms/${platform.id}`;
  const metadata = alg ? { id_token_signed_response_alg: alg } : undefined;
  const config = await client.discovery(new URL(issuer), c.id, metadata, clientAuth(method, c.secret), {
    execute: [client.allowInsecureRequests],
  });
  client.enableNonRepudiationChecks(config);
  return { platformId: platform.id, clientId: c.id, secret: c.secret, config, user, issuer };
}

describe.each<[Method, IdTokenAlg | undefined, string]>([
  ['client_secret_basic', undefined, 'confidential client, RS256 (default)'],
  ['none', undefined, 'public client with PKCE, RS256 (default)'],
  ['client_secret_post', 'ES256', 'confidential client, ES256'],
  ['none', 'EdDSA', 'public client with PKCE, EdDSA'],
])('openid-client from the issuer URL: %s %s (%s)', (method, alg) => {
  it('discovers, completes the code flow, refreshes and reads userinfo, verifying every ID token against the JWKS', async () => {
    const s = await standardSetup(method, alg);
    const md = s.config.serverMetadata();
    expect(md.issuer).toBe(s.issuer);
    expect(md.id_token_signing_alg_values_supported).toEqual(expect.arrayContaining(['RS256', alg ?? 'RS256']));

    const { tokens, redirect } = await codeFlow(p, s, 'openid profile email offline_access');
    expect(redirect.searchParams.get('iss')).toBe(s.issuer);
    expect(jose.decodeProtectedHeader(tokens.id_token!)).toMatchObject({
      alg: alg ?? 'RS256',
      kid: expect.any(String),
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: s.issuer, sub: s.user.id, aud: s.clientId });
    expect(claims.sid).toEqual(expect.any(String));

    const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject({ iss: s.issuer, sub: s.user.id, sid: claims.sid });
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    const info = await client.fetchUserInfo(s.config, refreshed.access_token, s.user.id);
    expect(info).toMatchObject({ sub: s.user.id, email: s.user.email });
  });
});

it('a resource server verifies the access token with jose.createRemoteJWKSet over HTTP, and refuses a tampered one', async () => {
  const s = await standardSetup('client_secret_basic');
  const { tokens } = await codeFlow(p, s, 'openid');
  const jwksUri = s.config.serverMetadata().jwks_uri!;
  expect(jwksUri).toBe(`${s.issuer}/oauth/jwks`); // under the issuer (docs/decisions.md, "Agent-ready authorization")
  const remote = jose.createRemoteJWKSet(new URL(jwksUri));
  const { payload, protectedHeader } = await jose.jwtVerify(tokens.access_token, remote, {
    issuer: s.issuer,
    audience: s.clientId,
    algorithms: ['RS256'],
  });
  expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
  expect(payload).toMatchObject({ sub: s.user.id, client_id: s.clientId, scope: 'openid' });

  const [h, , sig] = tokens.access_token.split('.');
  const tampered = `${h}.${jose.base64url.encode(JSON.stringify({ ...payload, sub: '00000000-0000-4000-8000-000000000000' }))}.${sig}`;
  await expect(jose.jwtVerify(tampered, remote, { issuer: s.issuer, algorithms: ['RS256'] })).rejects.toThrow();
});
