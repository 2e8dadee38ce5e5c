import * as jose from 'jose';
import { buildPlatform } from '../factories';
import { runCommand } from '../../src/cli/commands';
import {
  api,
  authorizeUrl,
  clientAndUser,
  codeFlow,
  fetchJwks,
  newBrowser,
  pathOf,
  standardOp,
  startClockedProvider,
  verifyWithJwks,
  type ClockedProvider,
  type Jwk,
} from '../support/standard-op';

// The OpenID Foundation's Config OP certification plan (oidcc-config-certification-test-plan)
// and the discovery/JWKS checks its modules share with the Basic plan, asserted over HTTP against a
// `standard` platform. Each test is named after the conformance module it mirrors.
let p: ClockedProvider;
beforeAll(async () => {
  p = await startClockedProvider();
});
afterAll(() => p.close());

const ENDPOINTS = [
  'authorization_endpoint',
  'token_endpoint',
  'userinfo_endpoint',
  'jwks_uri',
  'introspection_endpoint',
  'revocation_endpoint',
  'end_session_endpoint',
];
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const KTY_OF: Record<string, string> = { RS256: 'RSA', ES256: 'EC', EdDSA: 'OKP' };

describe('Config OP: discovery', () => {
  it('oidcc-discovery-endpoint-verification: {issuer}/.well-known/openid-configuration is JSON whose issuer is the URL it was fetched from', async () => {
    const { platformId, issuer } = await standardOp(p);
    expect(issuer).toBe(`${p.base}/platforms/${platformId}`);
    // Fetched as a relying party that knows only the issuer fetches it (OIDC Discovery §4.1).
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc.issuer).toBe(issuer); // OIDC Discovery §4.3: exactly, no trailing slash
    expect(`${doc.issuer as string}/.well-known/openid-configuration`).toBe(res.url);
  });

  it('oidcc-discovery-endpoint-verification: the metadata the Config profile requires, each endpoint an absolute URL of this provider', async () => {
    const { discovery: d } = await standardOp(p);
    for (const name of ENDPOINTS) {
      const url = new URL(d[name] as string); // throws unless absolute
      expect(url.origin).toBe(p.base);
      // https in production (config refuses an http BASE_URL there); the test provider's own scheme here
      expect(url.protocol).toBe(new URL(p.base).protocol);
      expect(url.hash).toBe('');
    }
    expect(d.response_types_supported).toContain('code');
    expect(d.subject_types_supported).toEqual(expect.arrayContaining(['public']));
    expect(d.id_token_signing_alg_values_supported).toContain('RS256');
    expect(d.id_token_signing_alg_values_supported).not.toContain('none');
    expect(d.scopes_supported).toContain('openid');
    expect(d.claims_supported).toEqual(
      expect.arrayContaining(['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'name', 'email', 'sid']),
    );
    expect(d.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    expect(d.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic', 'client_secret_post']),
    );
    expect(d.code_challenge_methods_supported).toEqual(['S256']);
    if (d.response_modes_supported !== undefined) expect(d.response_modes_supported).toContain('query');
    // What we do not support is declared, so a conformance run skips rather than fails those modules.
    expect(d).toMatchObject({
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    });
    expect(d.authorization_response_iss_parameter_supported).toBe(true);
    expect(d).toMatchObject({
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
      frontchannel_logout_supported: true,
      frontchannel_logout_session_supported: true,
    });
  });

  it('oidcc-discovery-endpoint-verification: the RFC 8414 path and the ?platform_guid= URL answer the same document', async () => {
    const { platformId, issuer, discovery } = await standardOp(p);
    const rfc8414 = await api(p).get(`/.well-known/oauth-authorization-server/platforms/${platformId}`).expect(200);
    expect(rfc8414.headers['content-type']).toMatch(/^application\/json/);
    expect(rfc8414.body.issuer).toBe(issuer); // RFC 8414 §3.3
    expect(rfc8414.body).toEqual(discovery);
    const byQuery = await api(p).get(`/.well-known/openid-configuration?platform_guid=${platformId}`).expect(200);
    expect(byQuery.body).toEqual(discovery);
  });

  it('oidcc-discovery-issuer-not-matching-config: no issuer-path document for a seed platform or an unknown platform', async () => {
    const seed = await buildPlatform(p.t.services);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const guid of [seed.id, unknown]) {
      for (const path of [
        `/platforms/${guid}/.well-known/openid-configuration`,
        `/.well-known/oauth-authorization-server/platforms/${guid}`,
      ]) {
        const res = await api(p).get(path);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: expect.any(String), error_description: expect.any(String) });
      }
    }
    // The seed platform keeps the spec's document: issuer BASE_URL, HS512 only.
    const seedDoc = (await api(p).get(`/.well-known/openid-configuration?platform_guid=${seed.id}`).expect(200)).body;
    expect(seedDoc.issuer).toBe(p.base);
    expect(seedDoc.id_token_signing_alg_values_supported).toEqual(['HS512']);
  });

  it('oidcc-discovery-issuer-not-matching-config: the issuer of discovery is the iss of the authorization response, the ID token and the access token', async () => {
    const op = await standardOp(p);
    const { client, user } = await clientAndUser(p, op);
    const { callback, tokens } = await codeFlow(p, op, newBrowser(p), client, user);
    expect(callback.searchParams.get('iss')).toBe(op.issuer); // RFC 9207
    expect(jose.decodeJwt(tokens.id_token!).iss).toBe(op.issuer);
    expect(jose.decodeJwt(tokens.access_token).iss).toBe(op.issuer);
    // …and an error response's iss too
    const err = await api(p).get(pathOf(authorizeUrl(op, client, { prompt: 'none' }).toString()));
    expect(err.status).toBe(302);
    expect(new URL(err.headers.location).searchParams.get('iss')).toBe(op.issuer);
  });
});

describe('Config OP: JWKS', () => {
  it('oidcc-server (ValidateServerJWKs): jwks_uri publishes public RSA/EC/OKP keys only, each with a unique kid, use=sig and alg', async () => {
    const op = await standardOp(p);
    const res = await api(p).get(pathOf(op.discovery.jwks_uri)).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/(jwk-set\+)?json/);
    expect(Object.keys(res.body)).toEqual(['keys']);
    const keys = res.body.keys as Jwk[];
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
    for (const key of keys) {
      expect(['RSA', 'EC', 'OKP']).toContain(key.kty);
      expect(key).toMatchObject({ kid: expect.any(String), use: 'sig', alg: expect.any(String) });
      expect(KTY_OF[key.alg]).toBe(key.kty);
      for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
      await expect(jose.importJWK(key, key.alg)).resolves.toBeDefined();
      if (key.kty === 'RSA') expect(Buffer.from(key.n, 'base64url').length * 8).toBeGreaterThanOrEqual(2048);
    }
    // Every advertised asymmetric ID-token alg has a key to verify it with.
    for (const alg of (op.discovery.id_token_signing_alg_values_supported as string[]).filter((a) => a !== 'HS512')) {
      expect(keys.map((k) => k.alg)).toContain(alg);
    }
  });

  it('oidcc-idtoken-rs256: a client with no registered alg gets RS256 ID tokens whose kid resolves in the JWKS', async () => {
    const op = await standardOp(p);
    const { client, user } = await clientAndUser(p, op);
    const { tokens } = await codeFlow(p, op, newBrowser(p), client, user);
    const { header, payload } = await verifyWithJwks(p, tokens.id_token!, op.jwks, {
      alg: 'RS256',
      issuer: op.issuer,
      audience: client.id,
    });
    expect(header.kid).toEqual(expect.any(String));
    expect(payload.sub).toBe(user.id);
  });

  it('oidcc-idtoken-signature: each advertised asymmetric alg, registered per client, verifies against the JWKS key its kid names', async () => {
    const op = await standardOp(p);
    for (const alg of ['ES256', 'EdDSA'] as const) {
      const { client, user } = await clientAndUser(p, op, { idTokenSignedResponseAlg: alg });
      const { tokens } = await codeFlow(p, op, newBrowser(p), client, user);
      const { payload } = await verifyWithJwks(p, tokens.id_token!, op.jwks, {
        alg,
        issuer: op.issuer,
        audience: client.id,
      });
      expect(payload.sub).toBe(user.id);
    }
  });

  it('oidcc-userinfo-rs256 (skipped by the suite when unsupported): userinfo is plain JSON and no userinfo signing is advertised', async () => {
    const op = await standardOp(p);
    expect(op.discovery.userinfo_signing_alg_values_supported).toBeUndefined();
    const { client, user } = await clientAndUser(p, op);
    const { tokens } = await codeFlow(p, op, newBrowser(p), client, user);
    const res = await api(p)
      .get(pathOf(op.discovery.userinfo_endpoint))
      .set('Authorization', `Bearer ${tokens.access_token}`)
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.sub).toBe(user.id);
  });

  it('oidcc-server-rotate-keys: after an RS256 rotation the JWKS verifies earlier tokens, and once the new key signs, the new tokens', async () => {
    const op = await standardOp(p);
    const { client, user } = await clientAndUser(p, op);
    const before = await codeFlow(p, op, newBrowser(p), client, user);
    const oldKid = jose.decodeProtectedHeader(before.tokens.id_token!).kid;
    const rotated = await runCommand(p.t.services, ['key', 'rotate', '--platform', op.platformId, '--alg', 'RS256']);
    // Published before it signs, so relying parties holding a cached JWKS have it by then.
    const jwks = await fetchJwks(p, op.discovery);
    expect(jwks.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, rotated.kid]));
    await verifyWithJwks(p, before.tokens.id_token!, jwks, { alg: 'RS256', issuer: op.issuer, audience: client.id });
    await verifyWithJwks(p, before.tokens.access_token, jwks, { alg: 'RS256', issuer: op.issuer, audience: client.id });

    p.tick(p.t.config.signingKeyPublicationSeconds + 1);
    const after = await codeFlow(p, op, newBrowser(p), client, user);
    const latest = await fetchJwks(p, op.discovery);
    for (const token of [after.tokens.id_token!, after.tokens.access_token]) {
      expect(jose.decodeProtectedHeader(token).kid).toBe(rotated.kid);
      await verifyWithJwks(p, token, latest, { alg: 'RS256', issuer: op.issuer, audience: client.id });
    }
  });
});
