import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform } from '../factories';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(() => t.close());

describe('GET /.well-known/openid-configuration', () => {
  it('serves the spec fields for two platforms side by side', async () => {
    const a = await buildPlatform(t.services);
    const b = await buildPlatform(t.services);
    for (const p of [a, b]) {
      const res = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`).expect(200);
      const q = `?platform_guid=${p.id}`;
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body).toMatchObject({
        issuer: 'http://issuer.test',
        authorization_endpoint: `http://issuer.test/oauth/authorize${q}`,
        token_endpoint: `http://issuer.test/oauth/token${q}`,
        userinfo_endpoint: `http://issuer.test/oauth/userinfo${q}`,
        jwks_uri: `http://issuer.test/oauth/jwks${q}`,
        introspection_endpoint: `http://issuer.test/oauth/introspect${q}`,
        revocation_endpoint: `http://issuer.test/oauth/revoke${q}`,
        scopes_supported: ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'],
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        id_token_signing_alg_values_supported: ['HS512'],
        subject_types_supported: ['public'],
        authorization_response_iss_parameter_supported: true,
        // Additions to the spec's document on both profiles
        backchannel_logout_supported: true,
        backchannel_logout_session_supported: true,
        frontchannel_logout_supported: true,
        frontchannel_logout_session_supported: true,
      });
      expect(res.body.claims_supported).toContain('sid');
    }
  });

  it('lets clients cache it for an hour and revalidate with the ETag', async () => {
    const p = await buildPlatform(t.services);
    const res = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`).expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    expect(res.headers.etag).toBeTruthy();
    await request(t.app)
      .get(`/.well-known/openid-configuration?platform_guid=${p.id}`)
      .set('If-None-Match', res.headers.etag)
      .expect(304);
  });

  it.each([
    ['missing', ''],
    ['unknown', '?platform_guid=00000000-0000-4000-8000-000000000000'],
    ['malformed', '?platform_guid=%27%20OR%201%3D1--'],
    ['repeated', '?platform_guid=a&platform_guid=b'],
  ])('answers a %s platform_guid with invalid_request', async (_label, query) => {
    const res = await request(t.app).get(`/.well-known/openid-configuration${query}`);
    expectOAuthError(res, 400, 'invalid_request');
  });
});
