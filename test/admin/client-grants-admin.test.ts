import request from 'supertest';
import { exportJWK, generateKeyPair } from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform, buildStandardPlatform } from '../factories';
import { adminClient, adminToken } from './admin-api-client';
import { runCommand } from '../../src/cli/commands';

// Grants, keys and token-exchange resources per client, through the admin API, the CLI and the
// token endpoint's check (docs/decisions.md, "Machine and device clients").
let t: Awaited<ReturnType<typeof buildTestApp>>;
let api: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp();
  api = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const API = 'https://api.example/';

async function publicJwks() {
  const { publicKey } = await generateKeyPair('ES256');
  return { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
}

async function standardWithResource() {
  const p = await buildStandardPlatform(t.services);
  await t.services.resources.create(p.id, {
    uri: API,
    name: 'API',
    accessTokenTtlSeconds: 300,
    scopes: [{ name: 'read', description: 'Read' }],
  });
  return p;
}

describe('admin API: grants and keys', () => {
  it('defaults to the two browser grants and a secret; lists the grants and how the client authenticates', async () => {
    const p = await buildStandardPlatform(t.services);
    const res = await api.post(`/platforms/${p.id}/clients`, {
      name: 'Web',
      type: 'confidential',
      redirect_uris: ['https://app.example/cb'],
      scopes: 'openid',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_basic',
      jwks: null,
      jwks_uri: null,
      token_exchange_resources: [],
      registration_source: 'admin',
      metadata_document_url: null,
    });
    expect(typeof res.body.client_secret).toBe('string');
  });

  it('creates a service client with neither redirect URIs nor scopes, and a key client without a secret', async () => {
    const p = await standardWithResource();
    const service = await api.post(`/platforms/${p.id}/clients`, {
      name: 'Billing job',
      type: 'confidential',
      grant_types: ['client_credentials', EXCHANGE],
      token_exchange_resources: [API],
    });
    expect(service.status).toBe(201);
    expect(service.body).toMatchObject({
      grant_types: ['client_credentials', EXCHANGE],
      redirect_uris: [],
      token_exchange_resources: [API],
    });
    const jwks = await publicJwks();
    const keyed = await api.post(`/platforms/${p.id}/clients`, {
      name: 'Signer',
      type: 'confidential',
      grant_types: ['client_credentials'],
      jwks,
    });
    expect(keyed.status).toBe(201);
    expect(keyed.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks, client_secret: null });
    const device = await api.post(`/platforms/${p.id}/clients`, {
      name: 'TV',
      type: 'public',
      grant_types: [DEVICE, 'refresh_token'],
      scopes: 'openid offline_access',
    });
    expect(device.status).toBe(201);
    expect(device.body.token_endpoint_auth_method).toBe('none');
  });

  it('swaps the secret for keys and back: keys drop the secret, removing them issues a new one; audited', async () => {
    const p = await buildStandardPlatform(t.services);
    const created = await api.post(`/platforms/${p.id}/clients`, {
      name: 'Web',
      type: 'confidential',
      redirect_uris: ['https://app.example/cb'],
      scopes: 'openid',
    });
    const id = created.body.client_id;
    const keyed = await api.patch(`/platforms/${p.id}/clients/${id}`, { jwks_uri: 'https://app.example/jwks.json' });
    expect(keyed.status).toBe(200);
    expect(keyed.body).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://app.example/jwks.json',
    });
    expect(keyed.body.client_secret).toBeUndefined();
    const rotate = await api.post(`/platforms/${p.id}/clients/${id}/rotate-secret`, {});
    expectOAuthError(rotate, 400, 'invalid_request');
    expect(rotate.body.error_description).toMatch(/has no secret to rotate/);
    // The old secret no longer authenticates the client.
    const withSecret = await request(t.app)
      .post('/oauth/token')
      .auth(id, created.body.client_secret)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'rt_nothing', platform_guid: p.id });
    expect(withSecret.status).toBe(401);
    const unkeyed = await api.patch(`/platforms/${p.id}/clients/${id}`, { jwks_uri: null });
    expect(unkeyed.body).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic' });
    expect(typeof unkeyed.body.client_secret).toBe('string');
    const events = (await t.services.audit.list({ clientId: id }, 10)).events;
    const updated = events.filter((e) => e.kind === 'client.updated').map((e) => e.details);
    expect(updated).toContainEqual({ jwks_uri: { from: null, to: 'https://app.example/jwks.json' } });
  });

  const refusals: Array<[string, 'standard' | 'seed', Record<string, unknown>, RegExp]> = [
    ['an unknown grant', 'standard', { grant_types: ['password'] }, /"password" is not a grant type/],
    ['no grant at all', 'standard', { grant_types: [] }, /at least one grant type/],
    ['a machine grant on a seed platform', 'seed', { grant_types: ['client_credentials'] }, /seed platform/],
    [
      'keys on a seed platform',
      'seed',
      { jwks_uri: 'https://k.example/jwks' },
      /seed platform's clients authenticate with their secret/,
    ],
    [
      'client credentials for a public client',
      'standard',
      { type: 'public', grant_types: ['client_credentials'] },
      /needs a confidential client/,
    ],
    [
      'keys for a public client',
      'standard',
      { type: 'public', jwks_uri: 'https://k.example/jwks' },
      /only a confidential client/,
    ],
    [
      'both jwks and jwks_uri',
      'standard',
      { jwks: { keys: [{ kty: 'EC' }] }, jwks_uri: 'https://k.example/jwks' },
      /not both/,
    ],
    ['a private key in jwks', 'standard', { jwks: { keys: [{ kty: 'EC', d: 'secret' }] } }, /private member "d"/],
    ['a symmetric key in jwks', 'standard', { jwks: { keys: [{ kty: 'oct', k: 'x' }] } }, /"oct" is not supported/],
    ['a jwks_uri that is no URL', 'standard', { jwks_uri: 'keys' }, /not an absolute URL/],
    [
      'exchange resources without the grant',
      'standard',
      { token_exchange_resources: [API] },
      /needs the .*token-exchange grant/,
    ],
    [
      'an unregistered exchange resource',
      'standard',
      { grant_types: [EXCHANGE], token_exchange_resources: ['https://nope.example/'] },
      /not a resource of this platform/,
    ],
    [
      'HS512 ID tokens with keys',
      'standard',
      { jwks_uri: 'https://k.example/jwks', id_token_signed_response_alg: 'HS512' },
      /HS512/,
    ],
    [
      'the code grant without redirect URIs',
      'standard',
      { redirect_uris: [] },
      /redirect_uris: at least one redirect URI is required/,
    ],
  ];
  it.each(refusals)('refuses %s, naming the field, and creates nothing', async (_label, profile, body, message) => {
    const p = profile === 'seed' ? await buildPlatform(t.services) : await standardWithResource();
    const res = await api.post(`/platforms/${p.id}/clients`, {
      name: 'App',
      type: 'confidential',
      redirect_uris: ['https://app.example/cb'],
      scopes: 'openid',
      ...body,
    });
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toMatch(message);
    expect((await api.get(`/platforms/${p.id}/clients`)).body.items).toEqual([]);
  });
});

describe('token endpoint: a grant the client is not allowed', () => {
  it('is unauthorized_client after authentication; a grant the platform does not offer is unsupported_grant_type', async () => {
    const p = await buildStandardPlatform(t.services);
    const created = await api.post(`/platforms/${p.id}/clients`, {
      name: 'Web',
      type: 'confidential',
      redirect_uris: ['https://app.example/cb'],
      scopes: 'openid',
      grant_types: ['authorization_code'],
    });
    const token = (body: Record<string, string>) =>
      request(t.app)
        .post('/oauth/token')
        .auth(created.body.client_id, created.body.client_secret)
        .type('form')
        .send({ platform_guid: p.id, ...body });
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: 'rt_x' });
    expectOAuthError(refresh, 400, 'unauthorized_client');
    expectOAuthError(
      await token({ grant_type: 'password', username: 'a', password: 'b' }),
      400,
      'unsupported_grant_type',
    );
    const seed = await buildPlatform(t.services);
    const seedRes = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({ platform_guid: seed.id, grant_type: 'client_credentials' });
    expectOAuthError(seedRes, 400, 'unsupported_grant_type');
  });
});

describe('admin CLI: grants and keys', () => {
  const run = (...argv: string[]) => runCommand(t.services, argv);
  it('creates a key client from --jwks and changes its grants and exchange resources', async () => {
    const p = await standardWithResource();
    const jwks = await publicJwks();
    const out = (await run(
      'client',
      'create',
      '--platform',
      p.id,
      '--name',
      'Worker',
      '--type',
      'confidential',
      '--grant-types',
      'client_credentials',
      '--jwks',
      JSON.stringify(jwks),
    )) as Record<string, unknown>;
    expect(out).toMatchObject({
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'private_key_jwt',
      client_secret: null,
    });
    const changed = (await run(
      'client',
      'update',
      '--platform',
      p.id,
      '--client',
      String(out.client_id),
      '--grant-types',
      `client_credentials ${EXCHANGE}`,
      '--token-exchange-resources',
      API,
    )) as Record<string, unknown>;
    expect(changed).toMatchObject({ grant_types: ['client_credentials', EXCHANGE], token_exchange_resources: [API] });
    await expect(
      run('client', 'update', '--platform', p.id, '--client', String(out.client_id), '--jwks', '{not json'),
    ).rejects.toThrow(/--jwks: not JSON/);
  });
});
