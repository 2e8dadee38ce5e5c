import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform } from '../factories';
import { adminClient, adminToken } from './admin-api-client';

describe('admin API: platforms, tokens, rate limits', () => {
  let t: Awaited<ReturnType<typeof buildTestApp>>;
  let global: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    t = await buildTestApp();
    global = adminClient(t.app, await adminToken(t.services));
  });
  afterAll(() => t.close());

  it('refuses requests without a live admin token, in the error format', async () => {
    // RFC 6750 §3.1: no credentials at all → a bare challenge, no error code in it.
    const none = await adminClient(t.app, undefined).get('/platforms');
    expect({ status: none.status, error: none.body.error, challenge: none.headers['www-authenticate'] }).toEqual({
      status: 401,
      error: 'invalid_token',
      challenge: 'Bearer',
    });
    const wrong = await adminClient(t.app, 'lk_admin_' + 'x'.repeat(43)).get('/platforms');
    expectOAuthError(wrong, 401, 'invalid_token');
    const notAdmin = await request(t.app).get('/admin/api/v1/platforms').set('Authorization', 'Basic abc');
    expectOAuthError(notAdmin, 401, 'invalid_token');
  });

  it('a revoked token stops working at once', async () => {
    const created = await t.services.admin.tokens.create(
      { actorType: 'cli', platformId: null },
      { name: 'short-lived', platformId: null },
    );
    expect((await adminClient(t.app, created.token).get('/platforms')).status).toBe(200);
    await t.services.admin.tokens.revoke({ actorType: 'cli', platformId: null }, created.id);
    expectOAuthError(await adminClient(t.app, created.token).get('/platforms'), 401, 'invalid_token');
  });

  it('creates, shows, lists with a cursor and updates platforms; each change is audited with the token as actor', async () => {
    const created = await global.post('/platforms', { name: '  Acme  ' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Acme', mfa: 'optional', rate_limits: {} });
    const guid = created.body.platform_guid;
    expect((await global.get(`/platforms/${guid}`)).body.name).toBe('Acme');

    const updated = await global.patch(`/platforms/${guid}`, { name: 'Acme Corp', mfa: 'required' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Acme Corp', mfa: 'required' });

    // Paging: every platform exactly once across pages of 2.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await global.get(`/platforms?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((p: { platform_guid: string }) => p.platform_guid));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain(guid);

    const { events } = await t.services.audit.list({ platformId: guid }, 10);
    expect(events.map((e) => e.kind)).toEqual(['platform.updated', 'platform.created']);
    expect(events[0]).toMatchObject({
      actorType: 'admin_token',
      actorName: 'test token',
      details: { name: { from: 'Acme', to: 'Acme Corp' }, mfa: { from: 'optional', to: 'required' } },
    });
    expect(events[0].requestId).toBe(updated.headers['x-request-id']);
    expect(events[0].source).toBe('127.0.0.1'); // not the dual-stack socket's ::ffff:127.0.0.1
  });

  it('answers bad input with a clear 400 naming the field', async () => {
    const platform = await buildPlatform(t.services);
    const empty = await global.patch(`/platforms/${platform.id}`, { name: '   ' });
    expectOAuthError(empty, 400, 'invalid_request');
    expect(empty.body.error_description).toMatch(/^name: /);
    expectOAuthError(await global.patch(`/platforms/${platform.id}`, {}), 400, 'invalid_request');
    expectOAuthError(await global.patch(`/platforms/${platform.id}`, { mfa: 'sometimes' }), 400, 'invalid_request');
    expectOAuthError(await global.patch(`/platforms/${platform.id}`, { colour: 'red' }), 400, 'invalid_request');
    expectOAuthError(await global.get('/platforms/not-a-uuid'), 400, 'invalid_request');
    expectOAuthError(await global.get('/platforms?limit=0'), 400, 'invalid_request');
    expectOAuthError(await global.get('/platforms?cursor=garbage'), 400, 'invalid_request');
    expectOAuthError(await global.get('/platforms/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    const notJson = await global.post('/platforms', 'name=x', { 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(notJson.status).toBe(415);
    const malformed = await request(t.app)
      .post('/admin/api/v1/platforms')
      .set('Authorization', `Bearer ${await adminToken(t.services)}`)
      .set('Content-Type', 'application/json')
      .send('{"name":');
    expectOAuthError(malformed, 400, 'invalid_request');
    const unknownRoute = await request(t.app)
      .get('/admin/api/v1/nothing-here')
      .set('Authorization', `Bearer ${await adminToken(t.services)}`);
    expectOAuthError(unknownRoute, 404, 'not_found');
    const messages = [];
    for (const body of [{ mfa: 'sometimes' }, { colour: 'red' }, { name: 5 }])
      messages.push((await global.patch(`/platforms/${platform.id}`, body)).body.error_description);
    expect(messages).toEqual([
      expect.stringMatching(/^mfa: .*"off"\|"optional"\|"required"/),
      expect.stringMatching(/Unrecognized key: "colour"/),
      expect.stringMatching(/^name: .*expected string/),
    ]);
  });

  it('a platform token sees its own platform only, and cannot create platforms', async () => {
    const mine = await buildPlatform(t.services);
    const other = await buildPlatform(t.services);
    const scoped = adminClient(t.app, await adminToken(t.services, mine.id));
    const list = await scoped.get('/platforms');
    expect(list.body.items.map((p: { platform_guid: string }) => p.platform_guid)).toEqual([mine.id]);
    expect((await scoped.get(`/platforms/${mine.id}`)).status).toBe(200);
    expectOAuthError(await scoped.get(`/platforms/${other.id}`), 404, 'not_found');
    expectOAuthError(await scoped.patch(`/platforms/${other.id}`, { name: 'mine now' }), 404, 'not_found');
    expectOAuthError(await scoped.put(`/platforms/${other.id}/rate-limits/token`, { per_minute: 5 }), 404, 'not_found');
    expectOAuthError(await scoped.post('/platforms', { name: 'new' }), 403, 'access_denied');
  });

  it('overrides and resets rate limits per endpoint; the override is in force at once', async () => {
    const platform = await buildPlatform(t.services);
    const before = await global.get(`/platforms/${platform.id}/rate-limits`);
    expect(before.body.limits).toContainEqual({
      endpoint: 'token',
      default_per_minute: 120,
      override_per_minute: null,
      effective_per_minute: 120,
    });
    const set = await global.put(`/platforms/${platform.id}/rate-limits/token`, { per_minute: 7 });
    expect(set.body.limits).toContainEqual({
      endpoint: 'token',
      default_per_minute: 120,
      override_per_minute: 7,
      effective_per_minute: 7,
    });
    expect((await t.services.platforms.findPlatform(platform.id))!.rateLimitOverrides).toEqual({ token: 7 });
    expectOAuthError(
      await global.put(`/platforms/${platform.id}/rate-limits/nope`, { per_minute: 7 }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await global.put(`/platforms/${platform.id}/rate-limits/token`, { per_minute: 0 }),
      400,
      'invalid_request',
    );
    const reset = await global.delete(`/platforms/${platform.id}/rate-limits/token`);
    expect(reset.body.limits).toContainEqual({
      endpoint: 'token',
      default_per_minute: 120,
      override_per_minute: null,
      effective_per_minute: 120,
    });
    const kinds = (await t.services.audit.list({ platformId: platform.id, kind: 'rate_limit.changed' }, 10)).events.map(
      (e) => e.details,
    );
    expect(kinds).toEqual([
      { endpoint: 'token', from: 7, to: null },
      { endpoint: 'token', from: null, to: 7 },
    ]);
  });
});
