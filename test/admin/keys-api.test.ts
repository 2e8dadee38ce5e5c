import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';
import { runCommand } from '../../src/cli/commands';
import { adminClient, adminToken } from './admin-api-client';

/** Polls until the condition holds; the cross-instance path (NOTIFY) is asynchronous by nature. */
async function eventually(check: () => Promise<boolean>, ms = 5000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

describe('admin API: signing keys', () => {
  let t: Awaited<ReturnType<typeof buildTestApp>>;
  let global: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    t = await buildTestApp();
    global = adminClient(t.app, await adminToken(t.services));
  });
  afterAll(() => t.close());

  const jwksKids = async (app: typeof t.app, platformId: string) =>
    (await request(app).get(`/oauth/jwks?platform_guid=${platformId}`).expect(200)).body.keys.map(
      (k: { kid: string }) => k.kid,
    );

  /** An access token of the platform, through the real code exchange. */
  async function accessToken(platformId: string) {
    const c = await buildClient(t.services, platformId);
    const u = await buildUser(t.services, platformId);
    const code = await buildCode(t.services, { platformId, client: c, user: u });
    const res = await request(t.app)
      .post('/oauth/token')
      .auth(c.id, c.secret!)
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0], platform_guid: platformId })
      .expect(200);
    return res.body.access_token as string;
  }
  const userinfo = (app: typeof t.app, token: string) =>
    request(app).get('/oauth/userinfo').set('Authorization', `Bearer ${token}`);

  it('lists, rotates and retires keys; never the key material; each change audited with the token as actor', async () => {
    const p = await buildPlatform(t.services);
    const first = await global.get(`/platforms/${p.id}/keys`);
    expect(first.body).toEqual({
      items: [
        {
          kid: expect.any(String),
          alg: 'HS512',
          status: 'active',
          created_at: expect.any(String),
          rotated_at: null,
          retired_at: null,
        },
      ],
      next_cursor: null,
    });
    const oldKid = first.body.items[0].kid;

    const rotated = await global.post(`/platforms/${p.id}/keys/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.body).toEqual({ platform_guid: p.id, kid: expect.any(String), previous_kid: oldKid });
    const newKid = rotated.body.kid;

    const listed = (await global.get(`/platforms/${p.id}/keys`)).body.items;
    expect(listed.map((k: { kid: string; status: string }) => [k.kid, k.status])).toEqual([
      [newKid, 'active'],
      [oldKid, 'retiring'],
    ]);
    const retiring = listed[1];
    // Retiring: it verifies the tokens it signed for the access-token lifetime after the rotation.
    expect(Date.parse(retiring.retired_at) - Date.parse(retiring.rotated_at)).toBe(
      t.config.accessTokenTtlSeconds * 1000,
    );

    const retired = await global.post(`/platforms/${p.id}/keys/${oldKid}/retire`);
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({ kid: oldKid, status: 'retired', rotated_at: retiring.rotated_at });
    expect(Date.parse(retired.body.retired_at)).toBeLessThan(Date.parse(retiring.retired_at));
    // Retiring it again changes nothing and records nothing.
    expect((await global.post(`/platforms/${p.id}/keys/${oldKid}/retire`)).body).toEqual(retired.body);

    const text = JSON.stringify([first.body, rotated.body, listed, retired.body]);
    const rows = await t.database.db('signing_keys').where({ platform_id: p.id });
    for (const row of rows) expect(text).not.toContain(row.sealed_secret);
    expect(text).not.toMatch(/"k"|secret/);

    const { events } = await t.services.audit.list({ platformId: p.id }, 10);
    expect(events.map((e) => [e.kind, e.details])).toEqual([
      ['key.retired', { kid: oldKid, status: { from: 'retiring', to: 'retired' } }],
      ['key.rotated', { kid: newKid, previous_kid: oldKid }],
    ]);
    expect(events[0]).toMatchObject({
      actorType: 'admin_token',
      actorName: 'test token',
      requestId: retired.headers['x-request-id'],
    });
  });

  it('refuses to retire the active key (409: rotate first), and answers unknown and malformed kids plainly', async () => {
    const p = await buildPlatform(t.services);
    const active = (await global.get(`/platforms/${p.id}/keys`)).body.items[0].kid;
    const refused = await global.post(`/platforms/${p.id}/keys/${active}/retire`);
    expectOAuthError(refused, 409, 'invalid_request');
    expect(refused.body.error_description).toMatch(/active signing key: rotate first/);
    expect((await t.services.signingKeys.activeKey(p.id)).kid).toBe(active);

    expectOAuthError(
      await global.post(`/platforms/${p.id}/keys/00000000-0000-4000-8000-000000000000/retire`),
      404,
      'not_found',
    );
    const malformed = await global.post(`/platforms/${p.id}/keys/not-a-kid/retire`);
    expectOAuthError(malformed, 400, 'invalid_request');
    expect(malformed.body.error_description).toMatch(/^kid: must be a UUID/);
    expectOAuthError(await global.get(`/platforms/${p.id}/keys?limit=0`), 400, 'invalid_request');
    expectOAuthError(await global.get(`/platforms/${p.id}/keys?cursor=garbage`), 400, 'invalid_request');
    expectOAuthError(await global.get('/platforms/not-a-uuid/keys'), 400, 'invalid_request');
    expectOAuthError(await global.get('/platforms/00000000-0000-4000-8000-000000000000/keys'), 404, 'not_found');
    // Another platform's kid is unknown under this platform.
    const other = await buildPlatform(t.services);
    await t.services.platforms.rotateKey(other.id);
    const otherOld = (await global.get(`/platforms/${other.id}/keys`)).body.items[1].kid;
    expectOAuthError(await global.post(`/platforms/${p.id}/keys/${otherOld}/retire`), 404, 'not_found');
    expect(await t.services.audit.list({ platformId: p.id, kind: 'key.retired' }, 10)).toEqual({
      events: [],
      nextCursor: null,
    });
  });

  it('pages keys newest first with a cursor', async () => {
    const p = await buildPlatform(t.services);
    for (let i = 0; i < 3; i++) await global.post(`/platforms/${p.id}/keys/rotate`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await global.get(`/platforms/${p.id}/keys?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.items).toHaveLength(1);
      seen.push(page.body.items[0].kid);
      cursor = page.body.next_cursor;
    } while (cursor);
    const rows = await t.database.db('signing_keys').where({ platform_id: p.id }).orderBy('created_at', 'desc');
    expect(seen).toHaveLength(4);
    expect(new Set(seen)).toEqual(new Set(rows.map((r) => r.kid)));
  });

  it('a token signed by a retired key is refused at userinfo at once, and the JWKS no longer lists the key', async () => {
    const p = await buildPlatform(t.services);
    const token = await accessToken(p.id);
    const oldKid = (await global.get(`/platforms/${p.id}/keys`)).body.items[0].kid;
    await userinfo(t.app, token).expect(200);
    await userinfo(t.app, token).expect(200); // cached as verified, where the cache serves

    const { kid: newKid } = (await global.post(`/platforms/${p.id}/keys/rotate`)).body;
    await userinfo(t.app, token).expect(200); // a rotation leaves the old key verifying its tokens
    expect(await jwksKids(t.app, p.id)).toEqual([newKid, oldKid]);

    expect((await global.post(`/platforms/${p.id}/keys/${oldKid}/retire`)).status).toBe(200);
    expectOAuthError(await userinfo(t.app, token), 401, 'invalid_token');
    expect(await jwksKids(t.app, p.id)).toEqual([newKid]);
    // Tokens signed since the rotation still work.
    await userinfo(t.app, await accessToken(p.id)).expect(200);
  });

  (process.env.TEST_DATABASE_KIND === 'embedded' ? it.skip : it)(
    'another instance learns of a retirement through NOTIFY, without waiting for its key cache to expire',
    async () => {
      const other = await buildTestApp();
      try {
        const p = await buildPlatform(t.services);
        const token = await accessToken(p.id);
        const oldKid = (await global.get(`/platforms/${p.id}/keys`)).body.items[0].kid;
        expect((await global.post(`/platforms/${p.id}/keys/rotate`)).status).toBe(201);
        await userinfo(other.app, token).expect(200);
        await userinfo(other.app, token).expect(200); // the other instance caches the keys and the verified token
        expect(await jwksKids(other.app, p.id)).toContain(oldKid);
        // As another process would: straight to the database, so only the trigger's NOTIFY tells `other`.
        await t.database.db('signing_keys').where({ kid: oldKid }).update({ withdrawn_at: new Date() });
        expect(await eventually(async () => (await userinfo(other.app, token)).status === 401)).toBe(true);
        expect(await jwksKids(other.app, p.id)).not.toContain(oldKid);
      } finally {
        await other.close();
      }
    },
  );

  it("a platform token manages its own platform's keys only", async () => {
    const mine = await buildPlatform(t.services);
    const theirs = await buildPlatform(t.services);
    const scoped = adminClient(t.app, await adminToken(t.services, mine.id));
    expect((await scoped.get(`/platforms/${mine.id}/keys`)).status).toBe(200);
    expect((await scoped.post(`/platforms/${mine.id}/keys/rotate`)).status).toBe(201);
    const theirKid = (await global.get(`/platforms/${theirs.id}/keys`)).body.items[0].kid;
    expectOAuthError(await scoped.get(`/platforms/${theirs.id}/keys`), 404, 'not_found');
    expectOAuthError(await scoped.post(`/platforms/${theirs.id}/keys/rotate`), 404, 'not_found');
    expectOAuthError(await scoped.post(`/platforms/${theirs.id}/keys/${theirKid}/retire`), 404, 'not_found');
    expect((await global.get(`/platforms/${theirs.id}/keys`)).body.items.map((k: { kid: string }) => k.kid)).toEqual([
      theirKid,
    ]);
  });

  it('admin key list, rotate and retire (audited as the CLI)', async () => {
    const p = await buildPlatform(t.services);
    const [first] = (await runCommand(t.services, ['key', 'list', '--platform', p.id])).items as Array<{
      kid: string;
      status: string;
    }>;
    expect(first.status).toBe('active');
    const rotated = await runCommand(t.services, ['key', 'rotate', '--platform', p.id]);
    expect(rotated).toEqual({ platform_guid: p.id, kid: expect.any(String), previous_kid: first.kid });
    await expect(
      runCommand(t.services, ['key', 'retire', '--platform', p.id, '--kid', rotated.kid as string]),
    ).rejects.toThrow(/rotate first/);
    await expect(runCommand(t.services, ['key', 'retire', '--platform', p.id, '--kid', 'nope'])).rejects.toThrow(
      /kid: must be a UUID/,
    );
    await expect(runCommand(t.services, ['key', 'list', '--platform', 'nope'])).rejects.toThrow(
      /unknown platform "nope"/,
    );
    expect(await runCommand(t.services, ['key', 'retire', '--platform', p.id, '--kid', first.kid])).toMatchObject({
      kid: first.kid,
      status: 'retired',
    });
    const listed = (await runCommand(t.services, ['key', 'list', '--platform', p.id, '--limit', '1'])) as {
      items: Array<{ kid: string }>;
      next_cursor: string;
    };
    expect(listed.items.map((k) => k.kid)).toEqual([rotated.kid]);
    const rest = (await runCommand(t.services, [
      'key',
      'list',
      '--platform',
      p.id,
      '--cursor',
      listed.next_cursor,
    ])) as { items: Array<{ kid: string; status: string }> };
    expect(rest.items).toEqual([expect.objectContaining({ kid: first.kid, status: 'retired' })]);
    const { events } = await t.services.audit.list({ platformId: p.id, actorType: 'cli' }, 10);
    expect(events.map((e) => e.kind)).toEqual(['key.retired', 'key.rotated']);
  });
});
