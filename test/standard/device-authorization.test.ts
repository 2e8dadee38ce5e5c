import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform } from '../factories';
import { basic } from '../support/account-flows';
import { deviceSetup, poll, requestDevice, startDevice } from '../support/device';
import { DEVICE_CODE_GRANT } from '../../src/domain/client';
import { digest } from '../../src/crypto/digest';

// The device authorization endpoint (RFC 8628 §3.1–3.2) of a standard platform: who may ask, what
// it answers, what it stores, and that a seed platform has neither the endpoint nor the grant
// (docs/decisions.md, "Machine and device clients").
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const BASE = 'http://issuer.test';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

describe('POST {issuer}/oauth/device_authorization', () => {
  it('answers the RFC 8628 §3.2 response, not cacheable', async () => {
    const d = await deviceSetup(t.services);
    const res = await requestDevice(t.app, d, { scope: 'openid profile' }).expect(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(Object.keys(res.body).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    expect(res.body.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.user_code).toMatch(USER_CODE);
    expect(res.body.verification_uri).toBe(`${BASE}/device`);
    expect(res.body.verification_uri_complete).toBe(`${BASE}/device?user_code=${res.body.user_code}`);
    expect(res.body.expires_in).toBe(600);
    expect(res.body.interval).toBe(5);
  });

  it('is also served at the query-string form of the endpoint', async () => {
    const d = await deviceSetup(t.services);
    const res = await request(t.app)
      .post(`/oauth/device_authorization?platform_guid=${d.platform.id}`)
      .type('form')
      .send({ client_id: d.client.id })
      .expect(200);
    expect(res.body.user_code).toMatch(USER_CODE);
  });

  it('stores both codes as digests only, bound to the client and the narrowed scope', async () => {
    const d = await deviceSetup(t.services);
    const body = await startDevice(t.app, d, { scope: 'openid email phone unknown' });
    const rows = await t.database.db('device_authorizations').where({ platform_id: d.platform.id });
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row.device_code_hash).toBe(digest(body.device_code));
    expect(row.user_code_hash).toBe(digest(body.user_code.replace('-', '')));
    expect(JSON.stringify(row)).not.toContain(body.device_code);
    expect(JSON.stringify(row)).not.toContain(body.user_code.replace('-', ''));
    // phone is not the client's, unknown is nobody's: dropped silently (spec scope rule 1).
    expect(row).toMatchObject({
      client_id: d.client.id,
      scope: 'openid email',
      status: 'pending',
      interval_seconds: 5,
    });
  });

  it('gives every request its own codes', async () => {
    const d = await deviceSetup(t.services);
    const a = await startDevice(t.app, d);
    const b = await startDevice(t.app, d);
    expect(a.device_code).not.toBe(b.device_code);
    expect(a.user_code).not.toBe(b.user_code);
  });

  it('authenticates a confidential client as the token endpoint does', async () => {
    const d = await deviceSetup(t.services, { type: 'confidential' });
    await requestDevice(t.app, d).expect(200);
    const wrong = await request(t.app)
      .post(`${d.issuerPath}/oauth/device_authorization`)
      .set('Authorization', basic({ ...d.client, secret: 'wrong' }))
      .type('form')
      .send({});
    expectOAuthError(wrong, 401, 'invalid_client');
    const none = await request(t.app)
      .post(`${d.issuerPath}/oauth/device_authorization`)
      .type('form')
      .send({ client_id: d.client.id });
    expectOAuthError(none, 401, 'invalid_client');
  });

  it('refuses an unknown client and a request without client_id', async () => {
    const d = await deviceSetup(t.services);
    const unknown = await request(t.app)
      .post(`${d.issuerPath}/oauth/device_authorization`)
      .type('form')
      .send({ client_id: '00000000-0000-4000-8000-000000000000' });
    expectOAuthError(unknown, 401, 'invalid_client');
    const missing = await request(t.app).post(`${d.issuerPath}/oauth/device_authorization`).type('form').send({});
    expectOAuthError(missing, 401, 'invalid_client');
  });

  it('refuses a client that does not hold the device grant: unauthorized_client', async () => {
    const d = await deviceSetup(t.services, {
      type: 'public',
      redirectUris: ['https://app.example/callback'],
      grantTypes: ['authorization_code', 'refresh_token'],
    });
    expectOAuthError(await requestDevice(t.app, d), 400, 'unauthorized_client');
    expect(await t.database.db('device_authorizations').where({ platform_id: d.platform.id })).toEqual([]);
  });

  it('refuses a request with nothing left to grant: invalid_scope', async () => {
    const d = await deviceSetup(t.services);
    expectOAuthError(await requestDevice(t.app, d, { scope: 'phone address' }), 400, 'invalid_scope');
  });

  it('checks RFC 8707 resources as the authorize endpoint does: invalid_target', async () => {
    const d = await deviceSetup(t.services);
    expectOAuthError(await requestDevice(t.app, d, { resource: 'https://api.example/unknown' }), 400, 'invalid_target');
    expectOAuthError(await requestDevice(t.app, d, { resource: 'not a uri' }), 400, 'invalid_target');
  });

  it('keeps a named resource and its scopes with the authorization', async () => {
    const d = await deviceSetup(t.services);
    await t.services.resources.create(d.platform.id, {
      uri: 'https://tv.example/api',
      name: 'TV API',
      scopes: [
        { name: 'tv:watch', description: 'Watch' },
        { name: 'tv:record', description: 'Record' },
      ],
    });
    await startDevice(t.app, d, { scope: 'openid tv:watch', resource: 'https://tv.example/api' });
    const row = await t.database.db('device_authorizations').where({ platform_id: d.platform.id }).first();
    expect(row.scope).toBe('openid tv:watch');
    expect(row.resources).toEqual(['https://tv.example/api']);
    expect(row.resource_grants).toEqual([{ uri: 'https://tv.example/api', scopes: ['tv:watch'] }]);
  });

  it('refuses bodies that are not forms, and repeated parameters', async () => {
    const d = await deviceSetup(t.services);
    const json = await request(t.app)
      .post(`${d.issuerPath}/oauth/device_authorization`)
      .send({ client_id: d.client.id });
    expectOAuthError(json, 400, 'invalid_request');
    const repeated = await request(t.app)
      .post(`${d.issuerPath}/oauth/device_authorization`)
      .type('form')
      .send(`client_id=${d.client.id}&scope=openid&scope=email`);
    expectOAuthError(repeated, 400, 'invalid_request');
  });

  it('records device_authorization.requested in the audit log, without the codes', async () => {
    const d = await deviceSetup(t.services);
    const body = await startDevice(t.app, d, { scope: 'openid' });
    const events = await t.database
      .db('audit_events')
      .where({ platform_id: d.platform.id, kind: 'device_authorization.requested' });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ client_id: d.client.id, details: { scope: 'openid', resources: [] } });
    expect(JSON.stringify(events[0])).not.toContain(body.device_code);
    expect(JSON.stringify(events[0])).not.toContain(body.user_code);
  });
});

describe('a seed platform', () => {
  it('has no device authorization endpoint: 404 not_found, before any client is read', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id, { type: 'public' });
    const res = await request(t.app)
      .post(`/oauth/device_authorization?platform_guid=${p.id}`)
      .type('form')
      .send({ client_id: c.id });
    expectOAuthError(res, 404, 'not_found');
    const underIssuer = await request(t.app)
      .post(`/platforms/${p.id}/oauth/device_authorization`)
      .type('form')
      .send({ client_id: c.id });
    expectOAuthError(underIssuer, 404, 'not_found');
  });

  it('answers the device_code grant with unsupported_grant_type', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const res = await request(t.app)
      .post('/oauth/token')
      .set('Authorization', basic(c))
      .type('form')
      .send({ platform_guid: p.id, grant_type: DEVICE_CODE_GRANT, device_code: 'x' });
    expectOAuthError(res, 400, 'unsupported_grant_type');
  });

  it('does not list the endpoint or the grant in its discovery document', async () => {
    const p = await buildPlatform(t.services);
    const res = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`).expect(200);
    expect(res.body.device_authorization_endpoint).toBeUndefined();
    expect(res.body.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
  });
});

describe('discovery of a standard platform', () => {
  it('lists the endpoint under the issuer and the grant, in both documents (RFC 8628 §4)', async () => {
    const d = await deviceSetup(t.services);
    for (const path of [
      `/platforms/${d.platform.id}/.well-known/openid-configuration`,
      `/.well-known/oauth-authorization-server/platforms/${d.platform.id}`,
      `/.well-known/openid-configuration?platform_guid=${d.platform.id}`,
    ]) {
      const res = await request(t.app).get(path).expect(200);
      expect(res.body.device_authorization_endpoint).toBe(
        `${BASE}/platforms/${d.platform.id}/oauth/device_authorization`,
      );
      expect(res.body.grant_types_supported).toContain(DEVICE_CODE_GRANT);
    }
  });
});

describe('the token endpoint before the person answers', () => {
  it('refuses the device grant to a client that does not hold it: unauthorized_client', async () => {
    const d = await deviceSetup(t.services);
    const body = await startDevice(t.app, d);
    const other = await buildClient(t.services, d.platform.id, { type: 'public' });
    const res = await poll(t.app, { ...d, client: other }, body.device_code);
    expectOAuthError(res, 400, 'unauthorized_client');
  });

  it('answers an unknown device code with invalid_grant and a missing one with invalid_request', async () => {
    const d = await deviceSetup(t.services);
    expectOAuthError(await poll(t.app, d, 'no-such-code'), 400, 'invalid_grant');
    const missing = await request(t.app)
      .post(`${d.issuerPath}/oauth/token`)
      .type('form')
      .send({ grant_type: DEVICE_CODE_GRANT, client_id: d.client.id });
    expectOAuthError(missing, 400, 'invalid_request');
  });
});

describe('rate limits', () => {
  it('counts the endpoint per client, at the token endpoint rate', async () => {
    const limited = await buildTestApp({ RATE_LIMIT_SCALE: '0.05' });
    try {
      const d = await deviceSetup(limited.services, { type: 'confidential' });
      const other = await deviceSetup(limited.services, { type: 'confidential' });
      const limit = Math.round(120 * 0.05);
      for (let i = 0; i < limit; i++) {
        const res = await requestDevice(limited.app, d).expect(200);
        expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
        expect(res.headers['x-ratelimit-remaining']).toBe(String(limit - 1 - i));
      }
      const over = await requestDevice(limited.app, d);
      expect(over.status).toBe(429);
      expect(over.body.error).toBe('too_many_requests');
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      // Another client has a bucket of its own.
      await requestDevice(limited.app, other).expect(200);
    } finally {
      await limited.close();
    }
  });
});
