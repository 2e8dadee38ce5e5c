import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform } from '../factories';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
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

  it('serves a seed platform the same bytes as ever (the spec fixes its interface)', async () => {
    const p = await buildPlatform(t.services);
    const res = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`).expect(200);
    expect(res.text).toBe(SEED_DOCUMENT.replaceAll('PLATFORM', p.id));
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

/** The seed document, byte for byte (member order included), with PLATFORM for the platform's guid. */
const SEED_DOCUMENT = [
  '{"issuer":"http://issuer.test"',
  ',"authorization_endpoint":"http://issuer.test/oauth/authorize?platform_guid=PLATFORM"',
  ',"token_endpoint":"http://issuer.test/oauth/token?platform_guid=PLATFORM"',
  ',"userinfo_endpoint":"http://issuer.test/oauth/userinfo?platform_guid=PLATFORM"',
  ',"jwks_uri":"http://issuer.test/oauth/jwks?platform_guid=PLATFORM"',
  ',"introspection_endpoint":"http://issuer.test/oauth/introspect?platform_guid=PLATFORM"',
  ',"revocation_endpoint":"http://issuer.test/oauth/revoke?platform_guid=PLATFORM"',
  ',"end_session_endpoint":"http://issuer.test/oauth/logout?platform_guid=PLATFORM"',
  ',"scopes_supported":["openid","profile","email","phone","address","offline_access"]',
  ',"response_types_supported":["code"]',
  ',"response_modes_supported":["query"]',
  ',"grant_types_supported":["authorization_code","refresh_token"]',
  ',"code_challenge_methods_supported":["S256"]',
  ',"token_endpoint_auth_methods_supported":["client_secret_basic","client_secret_post","none"]',
  ',"introspection_endpoint_auth_methods_supported":["client_secret_basic","client_secret_post"]',
  ',"revocation_endpoint_auth_methods_supported":["none","client_secret_basic","client_secret_post"]',
  ',"id_token_signing_alg_values_supported":["HS512"]',
  ',"subject_types_supported":["public"]',
  ',"claims_supported":["sub","human_guid","iss","aud","exp","iat","auth_time","nonce","at_hash","azp","amr","acr","sid","name","given_name","family_name","middle_name","nickname","preferred_username","birthdate","picture","updated_at","email","email_verified","phone_number","phone_number_verified","address"]',
  ',"prompt_values_supported":["none","login","consent","select_account"]',
  ',"acr_values_supported":["urn:latchkey:acr:pwd","urn:latchkey:acr:mfa"]',
  ',"ui_locales_supported":["en","de","fr","es"]',
  ',"claims_parameter_supported":false',
  ',"request_parameter_supported":false',
  ',"request_uri_parameter_supported":false',
  ',"authorization_response_iss_parameter_supported":true',
  ',"backchannel_logout_supported":true',
  ',"backchannel_logout_session_supported":true',
  ',"frontchannel_logout_supported":true',
  ',"frontchannel_logout_session_supported":true}',
].join('');
