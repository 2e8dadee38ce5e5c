import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform } from '../factories';
import { adminClient, adminToken } from '../admin/admin-api-client';
import { runCommand } from '../../src/cli/commands';

// The signing profile and per-alg rotation on the admin API and CLI.
let t: Awaited<ReturnType<typeof buildTestApp>>;
let global: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp();
  global = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());

const jwksAlgs = async (platformId: string) =>
  (
    (await request(t.app).get(`/oauth/jwks?platform_guid=${platformId}`).expect(200)).body.keys as Array<{
      alg: string;
    }>
  )
    .map((k) => k.alg)
    .sort();

describe('admin API: signing profile', () => {
  it('creates a standard platform with its three asymmetric keys; audited with the profile and kids', async () => {
    const created = await global.post('/platforms', { name: 'Standard one', signing_profile: 'standard' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Standard one', signing_profile: 'standard', kid: expect.any(String) });
    const guid = created.body.platform_guid;
    expect(await jwksAlgs(guid)).toEqual(['ES256', 'EdDSA', 'RS256']);
    const [event] = (await t.services.audit.list({ platformId: guid }, 10)).events;
    expect(event).toMatchObject({
      kind: 'platform.created',
      actorType: 'admin_token',
      details: {
        name: 'Standard one',
        kid: created.body.kid,
        signing_profile: 'standard',
        keys_created: { RS256: expect.any(String), ES256: expect.any(String), EdDSA: expect.any(String) },
      },
    });
    expect(JSON.stringify(event.details)).not.toMatch(/"d"|"n"|"x"/); // kids only, no key material

    const keys = await global.get(`/platforms/${guid}/keys`);
    expect(keys.body.items.map((k: { alg: string }) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'HS512', 'RS256']);
    expect(JSON.stringify(keys.body)).not.toMatch(/"(d|n|x|k|e|crv)"/);
  });

  it('a platform is seed unless told; switching is audited as {from, to}; list and show carry the profile', async () => {
    const created = await global.post('/platforms', { name: 'Seed one' });
    expect(created.body.signing_profile).toBe('seed');
    const guid = created.body.platform_guid;
    expect(await jwksAlgs(guid)).toEqual(['HS512']);
    const updated = await global.patch(`/platforms/${guid}`, { signing_profile: 'standard' });
    expect(updated.status).toBe(200);
    expect(updated.body.signing_profile).toBe('standard');
    expect((await global.get(`/platforms/${guid}`)).body.signing_profile).toBe('standard');
    expect(await jwksAlgs(guid)).toEqual(['ES256', 'EdDSA', 'RS256']);
    const [event] = (await t.services.audit.list({ platformId: guid }, 10)).events;
    expect(event).toMatchObject({
      kind: 'platform.updated',
      details: { signing_profile: { from: 'seed', to: 'standard' }, keys_created: { RS256: expect.any(String) } },
    });
    const listed: Array<{ platform_guid: string; signing_profile: string }> = [];
    let cursor: string | null = null;
    do {
      const page = await global.get(`/platforms?limit=50${cursor ? `&cursor=${cursor}` : ''}`);
      listed.push(...page.body.items);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(listed.find((p) => p.platform_guid === guid)).toMatchObject({ signing_profile: 'standard' });
  });

  it('rotates one algorithm with {alg}; the seed rotation without a body answers as before', async () => {
    const guid = (await global.post('/platforms', { name: 'Rotating', signing_profile: 'standard' })).body
      .platform_guid;
    const before = (await global.get(`/platforms/${guid}/keys`)).body.items as Array<{ kid: string; alg: string }>;
    const oldRs = before.find((k) => k.alg === 'RS256')!.kid;
    const rotated = await global.post(`/platforms/${guid}/keys/rotate`, { alg: 'RS256' });
    expect(rotated.status).toBe(201);
    expect(rotated.body).toEqual({
      platform_guid: guid,
      kid: expect.any(String),
      previous_kid: oldRs,
      alg: 'RS256',
      activates_at: expect.any(String),
    });
    // Published before it signs: the old key signs until activates_at.
    const after = (await global.get(`/platforms/${guid}/keys`)).body.items as Array<{
      kid: string;
      alg: string;
      status: string;
    }>;
    expect(after.find((k) => k.kid === oldRs)).toMatchObject({ status: 'active', alg: 'RS256' });
    expect(after.find((k) => k.kid === rotated.body.kid)).toMatchObject({
      status: 'next',
      alg: 'RS256',
      activates_at: rotated.body.activates_at,
    });
    const [event] = (await t.services.audit.list({ platformId: guid }, 10)).events;
    expect(event).toMatchObject({
      kind: 'key.rotated',
      details: { kid: rotated.body.kid, previous_kid: oldRs, alg: 'RS256' },
    });

    const hs = await global.post(`/platforms/${guid}/keys/rotate`);
    expect(hs.status).toBe(201);
    expect(hs.body).toEqual({
      platform_guid: guid,
      kid: expect.any(String),
      previous_kid: before.find((k) => k.alg === 'HS512')!.kid,
    });
  });

  it('answers bad input with a 400 naming the field, asymmetric keys on a seed platform with 409, other platforms with 404', async () => {
    const seed = await buildPlatform(t.services);
    const badProfile = await global.post('/platforms', { name: 'x', signing_profile: 'fancy' });
    expectOAuthError(badProfile, 400, 'invalid_request');
    expect(badProfile.body.error_description).toMatch(/^signing_profile: /);
    const badUpdate = await global.patch(`/platforms/${seed.id}`, { signing_profile: 'HS512' });
    expectOAuthError(badUpdate, 400, 'invalid_request');
    expect(badUpdate.body.error_description).toMatch(/^signing_profile: /);
    const badAlg = await global.post(`/platforms/${seed.id}/keys/rotate`, { alg: 'none' });
    expectOAuthError(badAlg, 400, 'invalid_request');
    expect(badAlg.body.error_description).toMatch(/^alg: /);
    expectOAuthError(
      await global.post(`/platforms/${seed.id}/keys/rotate`, { alg: 'RS256', extra: 1 }),
      400,
      'invalid_request',
    );
    const onSeed = await global.post(`/platforms/${seed.id}/keys/rotate`, { alg: 'ES256' });
    expectOAuthError(onSeed, 409, 'invalid_request');
    expect(onSeed.body.error_description).toMatch(/standard/);
    expect(await jwksAlgs(seed.id)).toEqual(['HS512']);

    const mine = await buildPlatform(t.services);
    const scoped = adminClient(t.app, await adminToken(t.services, mine.id));
    expectOAuthError(await scoped.patch(`/platforms/${seed.id}`, { signing_profile: 'standard' }), 404, 'not_found');
    expectOAuthError(await scoped.post(`/platforms/${seed.id}/keys/rotate`, { alg: 'HS512' }), 404, 'not_found');
    expectOAuthError(await scoped.post('/platforms', { name: 'x', signing_profile: 'standard' }), 403, 'access_denied');
    expect((await scoped.patch(`/platforms/${mine.id}`, { signing_profile: 'standard' })).body.signing_profile).toBe(
      'standard',
    );
  });
});

describe('CLI: signing profile', () => {
  it('platform create --profile standard, update --profile, key rotate --alg; bad values named', async () => {
    const created = await runCommand(t.services, [
      'platform',
      'create',
      '--name',
      'From the CLI',
      '--profile',
      'standard',
    ]);
    expect(created).toMatchObject({ signing_profile: 'standard', kid: expect.any(String) });
    const guid = created.platform_guid as string;
    expect(await jwksAlgs(guid)).toEqual(['ES256', 'EdDSA', 'RS256']);
    expect(await runCommand(t.services, ['platform', 'show', '--platform', guid])).toMatchObject({
      signing_profile: 'standard',
    });
    const rotated = await runCommand(t.services, ['key', 'rotate', '--platform', guid, '--alg', 'EdDSA']);
    expect(rotated).toMatchObject({ alg: 'EdDSA', previous_kid: expect.any(String) });
    expect(await runCommand(t.services, ['platform', 'update', '--platform', guid, '--profile', 'seed'])).toMatchObject(
      { signing_profile: 'seed' },
    );
    expect(await jwksAlgs(guid)).toEqual(['HS512']);
    expect(await runCommand(t.services, ['platform', 'create', '--name', 'Plain'])).toMatchObject({
      signing_profile: 'seed',
    });
    await expect(runCommand(t.services, ['platform', 'create', '--name', 'x', '--profile', 'fancy'])).rejects.toThrow(
      /signing_profile/,
    );
    await expect(runCommand(t.services, ['key', 'rotate', '--platform', guid, '--alg', 'HS256'])).rejects.toThrow(
      /alg/,
    );
  });
});
