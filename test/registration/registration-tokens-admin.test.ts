import { buildTestApp } from '../helpers';
import { adminClient, adminToken } from '../admin/admin-api-client';
import { runCommand } from '../../src/cli/commands';
import { digest } from '../../src/crypto/digest';

// Initial access tokens (RFC 7591 §3) on the admin API and CLI: shown once, stored as a digest.
let t: Awaited<ReturnType<typeof buildTestApp>>;
let api: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp();
  api = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());

const newPlatform = async (profile: 'seed' | 'standard') =>
  (await api.post('/platforms', { name: `Tokens ${profile}`, signing_profile: profile })).body.platform_guid as string;

describe('registration tokens: admin API', () => {
  it('creates one (shown once, only its digest stored), lists it without the token, revokes it; audited', async () => {
    const guid = await newPlatform('standard');
    const created = await api.post(`/platforms/${guid}/registration-tokens`, { max_uses: 3, expires_in: 3600 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      platform_guid: guid,
      status: 'active',
      max_uses: 3,
      uses: 0,
      revoked_at: null,
      created_by: expect.any(String),
      token: expect.stringMatching(/^lk_reg_/),
    });
    const row = await t.database.db('registration_tokens').where({ id: created.body.id }).first();
    expect(row.token_hash).toBe(digest(created.body.token));
    expect(JSON.stringify(row)).not.toContain(created.body.token);

    const listed = await api.get(`/platforms/${guid}/registration-tokens`);
    expect(listed.body.items).toHaveLength(1);
    expect(listed.body.items[0]).not.toHaveProperty('token');

    const revoked = await api.post(`/platforms/${guid}/registration-tokens/${created.body.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
    const kinds = (await t.services.audit.list({ platformId: guid }, 10)).events.map((e) => e.kind);
    expect(kinds.slice(0, 2)).toEqual(['registration_token.revoked', 'registration_token.created']);
    const events = (await t.services.audit.list({ platformId: guid }, 10)).events;
    expect(JSON.stringify(events)).not.toContain(created.body.token);
  });

  it('unlimited and never-expiring without a body; 409 on a seed platform; 404 for an unknown token; bad input 400', async () => {
    const guid = await newPlatform('standard');
    expect((await api.post(`/platforms/${guid}/registration-tokens`)).body).toMatchObject({
      max_uses: null,
      expires_at: null,
    });
    const seed = await newPlatform('seed');
    expect((await api.post(`/platforms/${seed}/registration-tokens`, {})).status).toBe(409);
    expect(
      (await api.post(`/platforms/${guid}/registration-tokens/00000000-0000-4000-8000-000000000000/revoke`)).status,
    ).toBe(404);
    expect((await api.post(`/platforms/${guid}/registration-tokens`, { max_uses: 0 })).status).toBe(400);
    expect((await api.post(`/platforms/${guid}/registration-tokens`, { expires_in: 10 })).status).toBe(400);
  });
});

describe('registration tokens: CLI', () => {
  it('registration-token create|list|revoke', async () => {
    const guid = await newPlatform('standard');
    const created = await runCommand(t.services, [
      'registration-token',
      'create',
      '--platform',
      guid,
      '--max-uses',
      '2',
      '--expires-in',
      '600',
    ]);
    expect(created).toMatchObject({ max_uses: 2, status: 'active', token: expect.stringMatching(/^lk_reg_/) });
    const listed = await runCommand(t.services, ['registration-token', 'list', '--platform', guid]);
    expect((listed.items as unknown[]).length).toBe(1);
    expect(JSON.stringify(listed)).not.toContain(created.token as string);
    expect(
      await runCommand(t.services, ['registration-token', 'revoke', '--platform', guid, '--id', created.id as string]),
    ).toMatchObject({ status: 'revoked' });
    await expect(
      runCommand(t.services, ['registration-token', 'create', '--platform', guid, '--max-uses', 'many']),
    ).rejects.toThrow(/max_uses/);
  });
});
