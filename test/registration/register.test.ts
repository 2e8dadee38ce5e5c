import { buildTestApp, expectOAuthError } from '../helpers';
import { digest } from '../../src/crypto/digest';
import { cliActor } from '../../src/domain/admin';
import { countClients, initialToken, register, registrationPlatform, WEB_APP } from './support';

// RFC 7591 registration at /oauth/register: policies, metadata checks, and nothing stored on a refusal.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ BASE_URL: 'https://issuer.test' });
});
afterAll(() => t.close());

const clients = (platformId: string) => countClients(t.database.db, platformId);

describe('POST /oauth/register: policy', () => {
  it('off (the default), and any seed platform: 404 not_found; nothing stored', async () => {
    const off = await registrationPlatform(t.services, 'off');
    expectOAuthError(await register(t.app, off, WEB_APP), 404, 'not_found');
    const { platform: seed } = await t.services.platforms.createPlatform('Seed DCR');
    expectOAuthError(await register(t.app, seed.id, WEB_APP), 404, 'not_found');
    expect(await clients(off)).toBe(0);
    expect(await clients(seed.id)).toBe(0);
  });

  it('open: a public native client and a confidential web client; the answer is RFC 7591 §3.2.1; stored as dynamic, audited', async () => {
    const guid = await registrationPlatform(t.services, 'open');
    const res = await register(t.app, guid, {
      ...WEB_APP,
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'openid email unknown:scope',
      client_uri: 'https://app.example.com',
      logo_uri: 'https://app.example.com/logo.png',
      contacts: ['ops@example.com'],
      software_id: 'example-app',
      software_version: '1.2.3',
      'client_name#fr': 'ignored',
      extra_field: { x: 1 },
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(res.body).toMatchObject({
      client_id: expect.any(String),
      client_id_issued_at: expect.any(Number),
      client_secret: expect.any(String),
      client_secret_expires_at: 0,
      registration_access_token: expect.stringMatching(/^lk_rat_/),
      registration_client_uri: `https://issuer.test/platforms/${guid}/oauth/register/${res.body.client_id}`,
      client_name: 'Example App',
      redirect_uris: ['https://app.example.com/callback'],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      application_type: 'web',
      scope: 'openid email',
      contacts: ['ops@example.com'],
      software_id: 'example-app',
      software_version: '1.2.3',
      logo_uri: 'https://app.example.com/logo.png',
    });
    expect(res.body).not.toHaveProperty('extra_field');
    const row = await t.database.db('clients').where({ id: res.body.client_id }).first();
    expect(row).toMatchObject({
      registration_source: 'dynamic',
      application_type: 'web',
      type: 'confidential',
      last_used_at: null,
      registration_access_token_hash: digest(res.body.registration_access_token),
    });
    expect(JSON.stringify(row)).not.toContain(res.body.client_secret);
    const [event] = (await t.services.audit.list({ platformId: guid }, 1)).events;
    expect(event).toMatchObject({
      kind: 'client.registered',
      actorType: 'anonymous',
      clientId: res.body.client_id,
      source: expect.any(String),
    });
    expect(JSON.stringify(event)).not.toContain(res.body.client_secret);
    expect(JSON.stringify(event)).not.toContain(res.body.registration_access_token);

    const native = await register(t.app, guid, {
      redirect_uris: ['http://127.0.0.1/cb', 'com.example.app:/oauth2redirect'],
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    });
    expect(native.status).toBe(201);
    expect(native.body).not.toHaveProperty('client_secret');
    expect(native.body).toMatchObject({
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'openid profile email phone address offline_access',
    });
    expect((await t.database.db('clients').where({ id: native.body.client_id }).first()).type).toBe('public');
  });

  it('token: the initial access token is required, counted, and refused when exhausted, expired, revoked, unknown or of another platform', async () => {
    const guid = await registrationPlatform(t.services, 'token');
    const other = await registrationPlatform(t.services, 'token');
    expectOAuthError(await register(t.app, guid, WEB_APP), 401, 'invalid_token');
    expectOAuthError(await register(t.app, guid, WEB_APP, { token: 'lk_reg_nonsense' }), 401, 'invalid_token');
    const once = await initialToken(t.services, guid, { max_uses: 1 });
    expectOAuthError(await register(t.app, other, WEB_APP, { token: once.token }), 401, 'invalid_token');
    // A refused body spends no use.
    expect(
      (await register(t.app, guid, { redirect_uris: ['javascript:alert(1)'] }, { token: once.token })).status,
    ).toBe(400);
    expect((await register(t.app, guid, WEB_APP, { token: once.token })).status).toBe(201);
    expectOAuthError(await register(t.app, guid, WEB_APP, { token: once.token }), 401, 'invalid_token');
    expect((await t.database.db('registration_tokens').where({ id: once.id }).first()).uses).toBe(1);

    const revoked = await initialToken(t.services, guid);
    await t.services.admin.registrationTokens.revoke(cliActor(), guid, revoked.id);
    expectOAuthError(await register(t.app, guid, WEB_APP, { token: revoked.token }), 401, 'invalid_token');

    const expiring = await initialToken(t.services, guid, { expires_in: 60 });
    await t.database
      .db('registration_tokens')
      .where({ id: expiring.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expectOAuthError(await register(t.app, guid, WEB_APP, { token: expiring.token }), 401, 'invalid_token');
    // A token that looks right but whose secret differs.
    const forged = `${once.token.slice(0, -4)}AAAA`;
    expectOAuthError(await register(t.app, guid, WEB_APP, { token: forged }), 401, 'invalid_token');
    expect(await clients(guid)).toBe(1);
    expect(await clients(other)).toBe(0);
  });

  it('token: concurrent registrations never spend more than max_uses', async () => {
    const guid = await registrationPlatform(t.services, 'token');
    const { token } = await initialToken(t.services, guid, { max_uses: 3 });
    const results = await Promise.all(Array.from({ length: 8 }, () => register(t.app, guid, WEB_APP, { token })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(await clients(guid)).toBe(3);
  });
});

describe('POST /oauth/register: loopback redirects of public clients', () => {
  it('a public client registers http://localhost:PORT/callback without naming itself native (as MCP clients do); a confidential one may not', async () => {
    const guid = await registrationPlatform(t.services, 'open');
    const agent = {
      client_name: 'Agent CLI',
      redirect_uris: ['http://localhost:33418/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
    const res = await register(t.app, guid, agent);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      redirect_uris: ['http://localhost:33418/callback'],
      application_type: 'web',
      token_endpoint_auth_method: 'none',
    });
    expect((await register(t.app, guid, { ...agent, redirect_uris: ['http://127.0.0.1:33418/callback'] })).status).toBe(
      201,
    );
    const before = await clients(guid);
    expectOAuthError(
      await register(t.app, guid, { ...agent, token_endpoint_auth_method: 'client_secret_basic' }),
      400,
      'invalid_redirect_uri',
    );
    expectOAuthError(
      await register(t.app, guid, { ...agent, redirect_uris: ['http://localhost.evil.example/callback'] }),
      400,
      'invalid_redirect_uri',
    );
    expectOAuthError(
      await register(t.app, guid, { ...agent, redirect_uris: ['http://sub.localhost:33418/callback'] }),
      400,
      'invalid_redirect_uri',
    );
    expect(await clients(guid)).toBe(before);
  });
});

describe('POST /oauth/register: refusals are audited', () => {
  it('a refused registration leaves one client.registration_refused event (the error and reason, never the body) and no client', async () => {
    const guid = await registrationPlatform(t.services, 'open');
    expectOAuthError(
      await register(t.app, guid, { redirect_uris: ['javascript:alert(1)'], client_name: 'secret-name-xyz' }),
      400,
      'invalid_redirect_uri',
    );
    const events = await t.database
      .db('audit_events')
      .where({ platform_id: guid, kind: 'client.registration_refused' });
    expect(events).toHaveLength(1);
    expect(events[0].details).toMatchObject({
      error: 'invalid_redirect_uri',
      reason: expect.stringContaining('redirect_uris'),
    });
    expect(JSON.stringify(events[0].details)).not.toContain('secret-name-xyz');
    expect(await clients(guid)).toBe(0);
  });
});

describe('POST /oauth/register: grant types hold through the scope', () => {
  it('offline_access is registered only with the refresh_token grant, so a client without it never gets a refresh token', async () => {
    const guid = await registrationPlatform(t.services, 'open');
    const without = await register(t.app, guid, { ...WEB_APP, scope: 'openid email offline_access' });
    expect(without.status).toBe(201);
    expect(without.body).toMatchObject({ grant_types: ['authorization_code'], scope: 'openid email' });
    const withRefresh = await register(t.app, guid, {
      ...WEB_APP,
      scope: 'openid email offline_access',
      grant_types: ['authorization_code', 'refresh_token'],
    });
    expect(withRefresh.body).toMatchObject({
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'openid email offline_access',
    });
  });
});

describe('POST /oauth/register: hostile and invalid metadata (RFC 7591 §3.2.2), nothing stored', () => {
  let guid: string;
  beforeAll(async () => {
    guid = await registrationPlatform(t.services, 'open');
  });

  const cases: Array<[string, unknown, string, RegExp]> = [
    ['no redirect_uris', { client_name: 'x' }, 'invalid_redirect_uri', /redirect_uris/],
    ['redirect_uris not an array', { redirect_uris: 'https://a.example/cb' }, 'invalid_redirect_uri', /redirect_uris/],
    ['an empty array', { redirect_uris: [] }, 'invalid_redirect_uri', /redirect_uris/],
    ['a number among them', { redirect_uris: [42] }, 'invalid_redirect_uri', /redirect_uris/],
    [
      'a huge array',
      { redirect_uris: Array.from({ length: 500 }, (_, i) => `https://a.example/${i}`) },
      'invalid_redirect_uri',
      /at most/,
    ],
    ['javascript:', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri', /redirect_uris/],
    [
      'data:',
      { redirect_uris: ['data:text/html,hi'], application_type: 'native' },
      'invalid_redirect_uri',
      /redirect_uris/,
    ],
    ['a fragment', { redirect_uris: ['https://a.example/cb#frag'] }, 'invalid_redirect_uri', /fragment/],
    ['http for a web app', { redirect_uris: ['http://a.example/cb'] }, 'invalid_redirect_uri', /https/],
    ['loopback for a web app', { redirect_uris: ['http://127.0.0.1/cb'] }, 'invalid_redirect_uri', /https/],
    [
      'http non-loopback for a native app',
      { redirect_uris: ['http://a.example/cb'], application_type: 'native' },
      'invalid_redirect_uri',
      /loopback/,
    ],
    [
      'localhost by name',
      { redirect_uris: ['http://localhost:8080/cb'], application_type: 'native' },
      'invalid_redirect_uri',
      /localhost/,
    ],
    [
      'a private-use scheme without a domain',
      { redirect_uris: ['myapp:/cb'], application_type: 'native' },
      'invalid_redirect_uri',
      /reverse domain/,
    ],
    ['a private-use scheme for a web app', { redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri', /https/],
    [
      'credentials in the URI',
      { redirect_uris: ['https://user:pw@a.example/cb'] },
      'invalid_redirect_uri',
      /credentials/,
    ],
    [
      'a 10k-character redirect URI',
      { redirect_uris: [`https://a.example/${'a'.repeat(10_000)}`] },
      'invalid_redirect_uri',
      /at most/,
    ],
    [
      'a 10k-character client_name',
      { ...WEB_APP, client_name: 'n'.repeat(10_000) },
      'invalid_client_metadata',
      /client_name/,
    ],
    ['client_name not a string', { ...WEB_APP, client_name: ['x'] }, 'invalid_client_metadata', /client_name/],
    [
      'an unsupported grant type',
      { ...WEB_APP, grant_types: ['client_credentials'] },
      'invalid_client_metadata',
      /grant_types/,
    ],
    [
      'implicit',
      { ...WEB_APP, grant_types: ['implicit'], response_types: ['token'] },
      'invalid_client_metadata',
      /grant_types/,
    ],
    ['refresh_token alone', { ...WEB_APP, grant_types: ['refresh_token'] }, 'invalid_client_metadata', /grant_types/],
    ['response_types token', { ...WEB_APP, response_types: ['token'] }, 'invalid_client_metadata', /response_types/],
    [
      'an unknown auth method',
      { ...WEB_APP, token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
      /token_endpoint_auth_method/,
    ],
    [
      'an unknown application_type',
      { ...WEB_APP, application_type: 'desktop' },
      'invalid_client_metadata',
      /application_type/,
    ],
    [
      'logo_uri over http',
      { ...WEB_APP, logo_uri: 'http://a.example/logo.png' },
      'invalid_client_metadata',
      /logo_uri/,
    ],
    ['logo_uri javascript:', { ...WEB_APP, logo_uri: 'javascript:alert(1)' }, 'invalid_client_metadata', /logo_uri/],
    ['client_uri not a URL', { ...WEB_APP, client_uri: 'not a url' }, 'invalid_client_metadata', /client_uri/],
    ['scope not a string', { ...WEB_APP, scope: ['openid'] }, 'invalid_client_metadata', /scope/],
    [
      'contacts too many',
      { ...WEB_APP, contacts: Array.from({ length: 100 }, (_, i) => `a${i}@example.com`) },
      'invalid_client_metadata',
      /contacts/,
    ],
    ['a JSON array', [WEB_APP], 'invalid_client_metadata', /JSON object/],
  ];
  it.each(cases)('%s', async (_name, body, code, description) => {
    const res = await register(t.app, guid, body);
    expectOAuthError(res, 400, code);
    expect(res.body.error_description).toMatch(description);
    expect(await clients(guid)).toBe(0);
  });

  it('a body that is not JSON, not sent as JSON, or empty: invalid_client_metadata; over 16 KB: 413', async () => {
    expectOAuthError(await register(t.app, guid, null, { raw: '{"redirect_uris": [' }), 400, 'invalid_client_metadata');
    expectOAuthError(
      await register(t.app, guid, null, {
        raw: 'redirect_uris=https://a.example/cb',
        contentType: 'application/x-www-form-urlencoded',
      }),
      400,
      'invalid_client_metadata',
    );
    expectOAuthError(await register(t.app, guid, null, { raw: '"just a string"' }), 400, 'invalid_client_metadata');
    expectOAuthError(
      await register(t.app, guid, null, { raw: '', contentType: 'text/plain' }),
      400,
      'invalid_client_metadata',
    );
    const huge = await register(t.app, guid, { ...WEB_APP, padding: 'x'.repeat(20_000) });
    expect(huge.status).toBe(413);
    expect(await clients(guid)).toBe(0);
  });
});

describe('POST /oauth/register: rate limit per source', () => {
  it('REGISTRATION_PER_HOUR per source address per platform, then 429 with Retry-After; another source or platform has its own', async () => {
    const limited = await buildTestApp({ RATE_LIMIT_SCALE: '1', REGISTRATION_PER_HOUR: '3', TRUST_PROXY: 'true' });
    try {
      const guid = await registrationPlatform(limited.services, 'open');
      const other = await registrationPlatform(limited.services, 'open');
      const from = (ip: string, platform = guid) => register(limited.app, platform, WEB_APP).set('X-Forwarded-For', ip);
      for (let i = 0; i < 3; i++) expect((await from('203.0.113.7')).status).toBe(201);
      const over = await from('203.0.113.7');
      expectOAuthError(over, 429, 'too_many_requests');
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(60);
      // Another source, and the same source on another platform, count apart.
      expect((await from('198.51.100.9')).status).toBe(201);
      expect((await from('203.0.113.7', other)).status).toBe(201);
      expect(await countClients(limited.database.db, guid)).toBe(4);
    } finally {
      await limited.close();
    }
  });
});
