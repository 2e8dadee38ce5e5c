import * as client from 'openid-client';
import { buildUser } from '../factories';
import { authorize, newBrowser, startClockedProvider, type ClockedProvider } from '../support/standard-op';
import { registrationPlatform } from './support';

// The whole path of software that registers itself: openid-client's dynamicClientRegistration
// against the issuer (discovery → registration_endpoint), then the authorization code flow with PKCE
// through the hosted pages, and the token request that marks the client as used.
let p: ClockedProvider;
beforeAll(async () => {
  p = await startClockedProvider();
});
afterAll(() => p.close());

it.each(['none', 'client_secret_basic'] as const)(
  'registers (%s) with openid-client, signs in with PKCE, exchanges the code; last_used_at is set',
  async (method) => {
    const platformId = await registrationPlatform(p.t.services, 'open');
    const issuer = new URL(`${p.base}/platforms/${platformId}`);
    const redirectUri = method === 'none' ? 'http://127.0.0.1/callback' : 'https://rp.example/callback';
    const config = await client.dynamicClientRegistration(
      issuer,
      {
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: method,
        application_type: method === 'none' ? 'native' : 'web',
        client_name: 'Agent',
        scope: 'openid email',
      },
      undefined,
      { execute: [client.allowInsecureRequests] },
    );
    const metadata = config.clientMetadata();
    expect(metadata.registration_client_uri).toBe(`${issuer.href}/oauth/register/${metadata.client_id}`);
    expect(Boolean(metadata.client_secret)).toBe(method !== 'none');

    const user = await buildUser(p.t.services, platformId);
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: method === 'none' ? 'http://127.0.0.1:49152/callback' : redirectUri, // a loopback redirect on any port (RFC 8252 §7.3)
      scope: 'openid email',
      state: 'st-dcr',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callback } = await authorize(newBrowser(p), url, user);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: 'st-dcr',
    });
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.claims()?.sub).toBe(user.id);
    const row = await p.t.database.db('clients').where({ id: metadata.client_id }).first();
    expect(row.last_used_at).toEqual(p.now());
  },
);
