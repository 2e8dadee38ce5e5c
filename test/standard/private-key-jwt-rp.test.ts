import * as client from 'openid-client';
import { buildClient, buildStandardPlatform, buildUser } from '../factories';
import { json, startDocumentServer } from '../support/document-server';
import { clientKey, jwksOf, type AssertionAlg } from '../support/client-keys';
import { codeFlow, REDIRECT_URI, startProvider, type Provider } from '../support/rp';

// docs/decisions.md, "Machine and device clients": an unmodified openid-client 6 authenticating with
// its own PrivateKeyJwt (RFC 7523: aud the issuer, a fresh jti, 60 s) through the code flow, the
// refresh grant, introspection and revocation; its keys inline or at a jwks_uri served over https
// by a local server whose CA the provider trusts through OUTBOUND_CA_FILE.
let p: Provider;
let docs: Awaited<ReturnType<typeof startDocumentServer>>;
beforeAll(async () => {
  docs = await startDocumentServer();
  p = await startProvider({ OUTBOUND_CA_FILE: docs.caFile });
});
afterAll(async () => {
  await p.close();
  await docs.close();
});

async function keyedSetup(alg: AssertionAlg, where: 'jwks' | 'jwks_uri') {
  const platform = await buildStandardPlatform(p.t.services);
  const key = await clientKey(alg);
  const jwksUri = where === 'jwks_uri' ? docs.publish(json(jwksOf(key))).url : undefined;
  const c = await buildClient(p.t.services, platform.id, {
    redirectUris: [REDIRECT_URI],
    ...(jwksUri ? { jwksUri } : { jwks: jwksOf(key) }),
  });
  expect(c.secret).toBeNull(); // a client with keys has no secret to leak
  const user = await buildUser(p.t.services, platform.id);
  const issuer = `${p.base}/platforms/${platform.id}`;
  const config = await client.discovery(
    new URL(issuer),
    c.id,
    undefined,
    client.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }),
    { execute: [client.allowInsecureRequests] },
  );
  return { platformId: platform.id, clientId: c.id, secret: null, config, user, issuer };
}

it.each([
  ['ES256', 'jwks_uri'],
  ['RS256', 'jwks'],
] as const)(
  'openid-client PrivateKeyJwt (%s, keys in %s): code flow, refresh, introspection and revocation',
  async (alg, where) => {
    const s = await keyedSetup(alg, where);
    expect(s.config.serverMetadata()).toMatchObject({
      token_endpoint_auth_methods_supported: expect.arrayContaining(['private_key_jwt']),
      token_endpoint_auth_signing_alg_values_supported: expect.arrayContaining([alg]),
    });
    const { tokens } = await codeFlow(p, s, 'openid email offline_access');
    expect(tokens.claims()).toMatchObject({ iss: s.issuer, aud: s.clientId, sub: s.user.id });

    const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    expect(await client.tokenIntrospection(s.config, refreshed.access_token)).toMatchObject({
      active: true,
      client_id: s.clientId,
    });
    await client.tokenRevocation(s.config, refreshed.refresh_token!);
    expect(await client.tokenIntrospection(s.config, refreshed.refresh_token!)).toEqual({ active: false });
  },
);

it('openid-client with a key the client did not register is refused with invalid_client', async () => {
  const s = await keyedSetup('ES256', 'jwks');
  const stranger = await clientKey('ES256');
  const config = new client.Configuration(
    s.config.serverMetadata(),
    s.clientId,
    undefined,
    client.PrivateKeyJwt({ key: stranger.privateKey, kid: stranger.kid }),
  );
  client.allowInsecureRequests(config);
  const err = (await client.refreshTokenGrant(config, 'rt_none').then(
    () => undefined,
    (e: unknown) => e,
  )) as client.ResponseBodyError;
  expect({ status: err.status, error: err.error }).toEqual({ status: 401, error: 'invalid_client' });
  expect(err.error_description).toMatch(/none of the client's keys has kid/);
});
