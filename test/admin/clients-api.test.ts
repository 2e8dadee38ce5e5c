import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildCode, buildPlatform, buildUser } from '../factories';
import { adminClient, adminToken } from './admin-api-client';
import { runCommand } from '../../src/cli/commands';
import { importHs512Key, verifyHs512 } from '../../src/crypto/jwt';
import { createSealer } from '../../src/crypto/seal';
import { migrateLatest } from '../../src/db';
import { randomBytes } from 'node:crypto';
import { freshDatabase } from '../support/fresh-database';

// The injected clock: tests move it to end a secret's overlap.
let offsetMs = 0;
let t: Awaited<ReturnType<typeof buildTestApp>>;
let global: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp({}, () => new Date(Date.now() + offsetMs));
  global = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());
afterEach(() => {
  offsetMs = 0;
});

const NEW_CLIENT = {
  name: 'Web',
  type: 'confidential',
  redirect_uris: ['https://app.example/cb'],
  scopes: 'openid profile offline_access',
};

async function platformWithClient(body: Record<string, unknown> = NEW_CLIENT) {
  const p = await buildPlatform(t.services);
  const res = await global.post(`/platforms/${p.id}/clients`, body);
  expect(res.status).toBe(201);
  return { p, client: res.body as { client_id: string; client_secret: string | null; [k: string]: unknown } };
}

/** Client authentication at the token endpoint, told apart from the grant: a bogus code is invalid_grant (400) once the client is authenticated, invalid_client (401) if not. */
const authenticates = async (platformId: string, clientId: string, secret: string) => {
  const res = await request(t.app).post('/oauth/token').auth(clientId, secret).type('form').send({
    grant_type: 'authorization_code',
    code: 'not-a-code',
    redirect_uri: 'https://app.example/cb',
    platform_guid: platformId,
  });
  if (res.status === 401) return false;
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
  return true;
};

async function exchange(platformId: string, clientId: string, secret: string) {
  const client = await t.services.admin.clients.get({ actorType: 'cli', platformId: null }, platformId, clientId);
  const user = await buildUser(t.services, platformId);
  const code = await buildCode(t.services, { platformId, client, user, scopes: ['openid', 'offline_access'] });
  return request(t.app)
    .post('/oauth/token')
    .auth(clientId, secret)
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0], platform_guid: platformId });
}

const events = async (clientId: string) => (await t.services.audit.list({ clientId }, 20)).events;

describe('admin API: clients', () => {
  it('creates a confidential client (secret once), shows and lists it without the secret; audited', async () => {
    const { p, client } = await platformWithClient({
      ...NEW_CLIENT,
      post_logout_redirect_uris: ['https://app.example/bye'],
      is_resource_server: true,
    });
    expect(client).toMatchObject({
      platform_guid: p.id,
      name: 'Web',
      type: 'confidential',
      scopes: 'openid profile offline_access',
      is_resource_server: true,
      post_logout_redirect_uris: ['https://app.example/bye'],
      previous_secret_expires_at: null,
    });
    expect(Buffer.from(client.client_secret!, 'base64url').length).toBe(64);
    expect(await authenticates(p.id, client.client_id, client.client_secret!)).toBe(true);

    const shown = await global.get(`/platforms/${p.id}/clients/${client.client_id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).not.toHaveProperty('client_secret');
    expect(JSON.stringify(shown.body)).not.toContain(client.client_secret);

    const [event] = await events(client.client_id);
    expect(event).toMatchObject({
      kind: 'client.created',
      platformId: p.id,
      actorType: 'admin_token',
      details: {
        name: 'Web',
        type: 'confidential',
        redirect_uris: ['https://app.example/cb'],
        is_resource_server: true,
      },
    });
    expect(JSON.stringify(event.details)).not.toContain(client.client_secret);
  });

  it('a public client gets no secret', async () => {
    const { client } = await platformWithClient({ ...NEW_CLIENT, type: 'public' });
    expect(client.client_secret).toBeNull();
  });

  it("lists every client of the platform once across cursor pages, and only that platform's", async () => {
    const { p } = await platformWithClient();
    for (const name of ['B', 'C', 'D'])
      expect((await global.post(`/platforms/${p.id}/clients`, { ...NEW_CLIENT, name })).status).toBe(201);
    await platformWithClient(); // another platform's client
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await global.get(`/platforms/${p.id}/clients?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(3);
      for (const c of page.body.items) expect(c).not.toHaveProperty('client_secret');
      seen.push(...page.body.items.map((c: { name: string }) => c.name));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['Web', 'B', 'C', 'D']);
  });

  it('updates name, URIs, scopes and the resource-server flag with the creation rules; audits {field: {from, to}}', async () => {
    const { p, client } = await platformWithClient();
    const path = `/platforms/${p.id}/clients/${client.client_id}`;
    const res = await global.patch(path, {
      name: 'Web 2',
      redirect_uris: ['https://app.example/cb2', 'http://127.0.0.1/cb'],
      post_logout_redirect_uris: ['https://app.example/bye'],
      scopes: 'openid email',
      is_resource_server: true,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Web 2',
      redirect_uris: ['https://app.example/cb2', 'http://127.0.0.1/cb'],
      post_logout_redirect_uris: ['https://app.example/bye'],
      scopes: 'openid email',
      is_resource_server: true,
      type: 'confidential',
    });
    expect(res.body).not.toHaveProperty('client_secret');
    // The secret is untouched.
    expect(await authenticates(p.id, client.client_id, client.client_secret!)).toBe(true);

    const [event] = await events(client.client_id);
    expect(event).toMatchObject({
      kind: 'client.updated',
      details: {
        name: { from: 'Web', to: 'Web 2' },
        redirect_uris: { from: ['https://app.example/cb'], to: ['https://app.example/cb2', 'http://127.0.0.1/cb'] },
        post_logout_redirect_uris: { from: [], to: ['https://app.example/bye'] },
        scopes: { from: 'openid profile offline_access', to: 'openid email' },
        is_resource_server: { from: false, to: true },
      },
    });
    expect(event.details).not.toHaveProperty('type');
  });

  it('public → confidential issues a secret once; confidential → public drops it', async () => {
    const { p, client } = await platformWithClient({ ...NEW_CLIENT, type: 'public' });
    const path = `/platforms/${p.id}/clients/${client.client_id}`;
    const confidential = await global.patch(path, { type: 'confidential' });
    expect(confidential.status).toBe(200);
    expect(Buffer.from(confidential.body.client_secret, 'base64url').length).toBe(64);
    expect(await authenticates(p.id, client.client_id, confidential.body.client_secret)).toBe(true);
    expect((await global.get(path)).body).not.toHaveProperty('client_secret');

    const backToPublic = await global.patch(path, { type: 'public' });
    expect(backToPublic.body).toMatchObject({ type: 'public' });
    expect(backToPublic.body).not.toHaveProperty('client_secret');
    expect((await t.database.db('clients').where({ id: client.client_id }).first()).sealed_secret).toBeNull();
    expect(await authenticates(p.id, client.client_id, confidential.body.client_secret)).toBe(false);
    const [event] = await events(client.client_id);
    expect(event.details).toEqual({ type: { from: 'confidential', to: 'public' } });
  });

  describe('secret rotation', () => {
    it('the previous secret works until the overlap ends; the new one at once; ID tokens use the new one', async () => {
      const { p, client } = await platformWithClient();
      const old = client.client_secret!;
      const res = await global.post(`/platforms/${p.id}/clients/${client.client_id}/rotate-secret`, {
        overlap_seconds: 3600,
      });
      expect(res.status).toBe(200);
      const fresh: string = res.body.client_secret;
      expect(fresh).not.toBe(old);
      expect(Date.parse(res.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3500_000);
      expect((await global.get(`/platforms/${p.id}/clients/${client.client_id}`)).body).not.toHaveProperty(
        'client_secret',
      );

      expect(await authenticates(p.id, client.client_id, old)).toBe(true);
      expect(await authenticates(p.id, client.client_id, fresh)).toBe(true);
      expect(await authenticates(p.id, client.client_id, 'x' + fresh.slice(1))).toBe(false);

      // The ID token is keyed with the current secret, even when the client authenticated with the previous one.
      const tokens = await exchange(p.id, client.client_id, old);
      expect(tokens.status).toBe(200);
      const key = async (s: string) => importHs512Key(new TextEncoder().encode(s));
      expect(await verifyHs512(tokens.body.id_token, await key(fresh), t.config.baseUrl)).toBeTruthy();
      expect(await verifyHs512(tokens.body.id_token, await key(old), t.config.baseUrl)).toBeFalsy();

      offsetMs = 3601_000; // past the overlap
      expect(await authenticates(p.id, client.client_id, old)).toBe(false);
      expect(await authenticates(p.id, client.client_id, fresh)).toBe(true);
      // A refresh token issued before keeps working with the new secret.
      const refreshed = await request(t.app)
        .post('/oauth/token')
        .auth(client.client_id, fresh)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, platform_guid: p.id });
      expect(refreshed.status).toBe(200);

      const [event] = await events(client.client_id);
      expect(event).toMatchObject({
        kind: 'client.secret_rotated',
        details: { overlap_seconds: 3600, previous_secret_expires_at: res.body.previous_secret_expires_at },
      });
      expect(JSON.stringify(event.details)).not.toContain(fresh);
      expect(JSON.stringify(event.details)).not.toContain(old);
    });

    it('an ID token issued before the rotation is still a valid id_token_hint during the overlap, not after', async () => {
      const { p, client } = await platformWithClient();
      const before = await exchange(p.id, client.client_id, client.client_secret!);
      const hint = before.body.id_token as string;
      const logout = () =>
        request(t.app).get(
          `/oauth/logout?${new URLSearchParams({ platform_guid: p.id, client_id: client.client_id, id_token_hint: hint })}`,
        );
      expect((await logout()).status).not.toBe(400);
      await global.post(`/platforms/${p.id}/clients/${client.client_id}/rotate-secret`, { overlap_seconds: 3600 });
      expect((await logout()).status).not.toBe(400);
      offsetMs = 3601_000; // past the overlap
      expect((await logout()).status).toBe(400);
    });

    it('overlap 0 ends the previous secret at once', async () => {
      const { p, client } = await platformWithClient();
      expect(await authenticates(p.id, client.client_id, client.client_secret!)).toBe(true); // now cached
      const res = await global.post(`/platforms/${p.id}/clients/${client.client_id}/rotate-secret`, {
        overlap_seconds: 0,
      });
      expect(res.body.previous_secret_expires_at).toBeNull();
      expect(await authenticates(p.id, client.client_id, client.client_secret!)).toBe(false);
      expect(await authenticates(p.id, client.client_id, res.body.client_secret)).toBe(true);
      expect(
        (await t.database.db('clients').where({ id: client.client_id }).first()).previous_sealed_secret,
      ).toBeNull();
    });

    it('without overlap_seconds the default CLIENT_SECRET_OVERLAP_SECONDS (a day) applies; a second rotation ends the first overlap', async () => {
      const { p, client } = await platformWithClient();
      const first = await global.post(`/platforms/${p.id}/clients/${client.client_id}/rotate-secret`, {});
      expect(t.config.clientSecretOverlapSeconds).toBe(86400);
      expect(Date.parse(first.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(86_000_000);
      const second = await global.post(`/platforms/${p.id}/clients/${client.client_id}/rotate-secret`, {});
      expect(await authenticates(p.id, client.client_id, client.client_secret!)).toBe(false);
      expect(await authenticates(p.id, client.client_id, first.body.client_secret)).toBe(true);
      expect(await authenticates(p.id, client.client_id, second.body.client_secret)).toBe(true);
    });

    it('a public client has no secret to rotate', async () => {
      const { p, client } = await platformWithClient({ ...NEW_CLIENT, type: 'public' });
      const res = await global.post(`/platforms/${p.id}/clients/${client.client_id}/rotate-secret`, {});
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(/public client has no secret/);
    });
  });

  it('delete removes the client with its tokens: its refresh token no longer works; audited', async () => {
    const { p, client } = await platformWithClient();
    const tokens = await exchange(p.id, client.client_id, client.client_secret!);
    expect(tokens.status).toBe(200);
    const userinfo = () =>
      request(t.app)
        .get(`/oauth/userinfo?platform_guid=${p.id}`)
        .set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect((await userinfo()).status).toBe(200);

    const res = await global.delete(`/platforms/${p.id}/clients/${client.client_id}`);
    expect(res.status).toBe(204);
    expect((await global.get(`/platforms/${p.id}/clients/${client.client_id}`)).status).toBe(404);
    for (const table of ['refresh_token_families', 'consents', 'authorization_codes', 'device_authorizations']) {
      expect(
        Number((await t.database.db(table).where({ client_id: client.client_id }).count('* as n').first())?.n),
      ).toBe(0);
    }
    const refreshed = await request(t.app)
      .post('/oauth/token')
      .auth(client.client_id, client.client_secret!)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, platform_guid: p.id });
    expectOAuthError(refreshed, 401, 'invalid_client');
    expect((await userinfo()).status).toBe(401);

    const [event] = await events(client.client_id);
    expect(event).toMatchObject({
      kind: 'client.deleted',
      platformId: p.id,
      details: { name: 'Web', refresh_token_families: 1, authorization_codes: 1, device_authorizations: 0 },
    });
  });

  it("a platform token sees and changes only its own platform's clients (another's is 404)", async () => {
    const mine = await platformWithClient();
    const theirs = await platformWithClient();
    const scoped = adminClient(t.app, await adminToken(t.services, mine.p.id));
    expect((await scoped.get(`/platforms/${mine.p.id}/clients`)).status).toBe(200);
    expect((await scoped.get(`/platforms/${mine.p.id}/clients/${mine.client.client_id}`)).status).toBe(200);
    const other = `/platforms/${theirs.p.id}/clients`;
    const id = theirs.client.client_id;
    expectOAuthError(await scoped.get(other), 404, 'not_found');
    expectOAuthError(await scoped.post(other, NEW_CLIENT), 404, 'not_found');
    expectOAuthError(await scoped.get(`${other}/${id}`), 404, 'not_found');
    expectOAuthError(await scoped.patch(`${other}/${id}`, { name: 'Mine now' }), 404, 'not_found');
    expectOAuthError(await scoped.post(`${other}/${id}/rotate-secret`, {}), 404, 'not_found');
    expectOAuthError(await scoped.delete(`${other}/${id}`), 404, 'not_found');
    // The other platform's client id under my platform: unknown as well.
    expectOAuthError(await scoped.get(`/platforms/${mine.p.id}/clients/${id}`), 404, 'not_found');
    expect(await authenticates(theirs.p.id, id, theirs.client.client_secret!)).toBe(true);
    expect((await events(id)).map((e) => e.kind)).toEqual(['client.created']);
  });

  it('unknown ids are 404', async () => {
    const { p } = await platformWithClient();
    expectOAuthError(
      await global.get(`/platforms/${p.id}/clients/00000000-0000-4000-8000-000000000000`),
      404,
      'not_found',
    );
    expectOAuthError(await global.get('/platforms/00000000-0000-4000-8000-000000000000/clients'), 404, 'not_found');
    expectOAuthError(
      await global.delete(`/platforms/${p.id}/clients/00000000-0000-4000-8000-000000000000`),
      404,
      'not_found',
    );
  });

  describe('bad input is 400 naming the field, and changes nothing', () => {
    const create: Array<[string, Record<string, unknown>, RegExp]> = [
      ['no name', { ...NEW_CLIENT, name: ' ' }, /name: must not be empty/],
      ['an unknown type', { ...NEW_CLIENT, type: 'spa' }, /type: client type must be/],
      ['no redirect URI', { ...NEW_CLIENT, redirect_uris: [] }, /redirect_uris: at least one redirect URI is required/],
      ['a non-https redirect URI', { ...NEW_CLIENT, redirect_uris: ['http://app.example/cb'] }, /must use https/],
      [
        'a localhost post-logout URI',
        { ...NEW_CLIENT, post_logout_redirect_uris: ['http://localhost/'] },
        /uses localhost/,
      ],
      ['an unknown scope', { ...NEW_CLIENT, scopes: 'openid admin' }, /unknown scope "admin"/],
      ['scopes without openid', { ...NEW_CLIENT, scopes: 'profile' }, /scopes must include openid/],
      [
        'a public resource server',
        { ...NEW_CLIENT, type: 'public', is_resource_server: true },
        /resource server must be a confidential client/,
      ],
      ['an unknown field', { ...NEW_CLIENT, client_secret: 'mine' }, /client_secret/],
    ];
    it.each(create)('create: %s', async (_label, body, message) => {
      const p = await buildPlatform(t.services);
      const res = await global.post(`/platforms/${p.id}/clients`, body);
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(message);
      expect((await global.get(`/platforms/${p.id}/clients`)).body.items).toEqual([]);
    });

    const update: Array<[string, Record<string, unknown>, RegExp]> = [
      ['nothing to change', {}, /give at least one field/],
      ['a fragment in a redirect URI', { redirect_uris: ['https://app.example/cb#x'] }, /fragment/],
      ['an empty redirect list', { redirect_uris: [] }, /redirect_uris: at least one redirect URI is required/],
      ['scopes without openid', { scopes: 'email' }, /scopes must include openid/],
      [
        'public while a resource server',
        { type: 'public', is_resource_server: true },
        /resource server must be a confidential client/,
      ],
      ['a flag that is not a boolean', { is_resource_server: 'yes' }, /is_resource_server: /],
    ];
    it.each(update)('update: %s', async (_label, body, message) => {
      const { p, client } = await platformWithClient();
      const res = await global.patch(`/platforms/${p.id}/clients/${client.client_id}`, body);
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(message);
      expect((await events(client.client_id)).map((e) => e.kind)).toEqual(['client.created']);
    });

    it.each([
      [-1, /overlap_seconds: must be at least 0/],
      [2_592_001, /overlap_seconds: must be at most 2592000/],
      [1.5, /overlap_seconds: must be a whole number/],
    ])('rotate-secret: overlap_seconds %p', async (overlap, message) => {
      const { p, client } = await platformWithClient();
      const res = await global.post(`/platforms/${p.id}/clients/${client.client_id}/rotate-secret`, {
        overlap_seconds: overlap,
      });
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(message);
      expect(await authenticates(p.id, client.client_id, client.client_secret!)).toBe(true);
    });

    it('a malformed client id names the field', async () => {
      const { p } = await platformWithClient();
      const res = await global.get(`/platforms/${p.id}/clients/nope`);
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(/client_id: must be a UUID/);
    });
  });
});

describe('admin CLI: client', () => {
  const run = (...argv: string[]) => runCommand(t.services, argv);
  const created = async (p: string, ...extra: string[]) =>
    run(
      'client',
      'create',
      '--platform',
      p,
      '--name',
      'CLI app',
      '--type',
      'confidential',
      '--redirect-uri',
      'https://cli.example/cb',
      '--scopes',
      'openid email',
      ...extra,
    );

  it('create is audited as the CLI and prints the API shape with the secret once', async () => {
    const p = await buildPlatform(t.services);
    const out = await created(p.id);
    expect(out).toMatchObject({
      platform_guid: p.id,
      name: 'CLI app',
      type: 'confidential',
      scopes: 'openid email',
      redirect_uris: ['https://cli.example/cb'],
      is_resource_server: false,
      previous_secret_expires_at: null,
    });
    expect(Buffer.from(out.client_secret as string, 'base64url').length).toBe(64);
    expect((await events(out.client_id as string))[0]).toMatchObject({ kind: 'client.created', actorType: 'cli' });
  });

  it('list and show print the API shapes without secrets', async () => {
    const p = await buildPlatform(t.services);
    const a = await created(p.id);
    const list = await run('client', 'list', '--platform', p.id);
    const api = await global.get(`/platforms/${p.id}/clients`);
    expect(list).toEqual(api.body);
    const shown = await run('client', 'show', '--platform', p.id, '--client', a.client_id as string);
    expect(shown).toEqual((await global.get(`/platforms/${p.id}/clients/${a.client_id}`)).body);
    expect(JSON.stringify({ list, shown })).not.toContain(a.client_secret as string);
  });

  it('update replaces the lists and switches the flag; --type confidential prints a new secret', async () => {
    const p = await buildPlatform(t.services);
    const a = await created(p.id);
    const id = a.client_id as string;
    const out = await run(
      'client',
      'update',
      '--platform',
      p.id,
      '--client',
      id,
      '--name',
      'Renamed',
      '--redirect-uri',
      'https://cli.example/a',
      '--redirect-uri',
      'https://cli.example/b',
      '--post-logout-redirect-uri',
      'https://cli.example/bye',
      '--scopes',
      'openid profile',
      '--resource-server',
    );
    expect(out).toMatchObject({
      name: 'Renamed',
      redirect_uris: ['https://cli.example/a', 'https://cli.example/b'],
      post_logout_redirect_uris: ['https://cli.example/bye'],
      scopes: 'openid profile',
      is_resource_server: true,
    });
    expect(out).not.toHaveProperty('client_secret');
    const off = await run(
      'client',
      'update',
      '--platform',
      p.id,
      '--client',
      id,
      '--no-resource-server',
      '--no-post-logout-redirect-uris',
    );
    expect(off).toMatchObject({ is_resource_server: false, post_logout_redirect_uris: [] });
    expect(await run('client', 'update', '--platform', p.id, '--client', id, '--type', 'public')).toMatchObject({
      type: 'public',
    });
    const back = await run('client', 'update', '--platform', p.id, '--client', id, '--type', 'confidential');
    expect(await authenticates(p.id, id, back.client_secret as string)).toBe(true);
    const [event] = await events(id);
    expect(event).toMatchObject({
      kind: 'client.updated',
      actorType: 'cli',
      details: { type: { from: 'public', to: 'confidential' } },
    });
  });

  it('rotate-secret [--overlap-seconds N] and delete', async () => {
    const p = await buildPlatform(t.services);
    const a = await created(p.id);
    const id = a.client_id as string;
    const rotated = await run('client', 'rotate-secret', '--platform', p.id, '--client', id, '--overlap-seconds', '0');
    expect(rotated).toMatchObject({ client_id: id, previous_secret_expires_at: null });
    expect(await authenticates(p.id, id, a.client_secret as string)).toBe(false);
    expect(await authenticates(p.id, id, rotated.client_secret as string)).toBe(true);
    const defaulted = await run('client', 'rotate-secret', '--platform', p.id, '--client', id);
    expect(defaulted.previous_secret_expires_at).toEqual(expect.any(String));
    expect(await authenticates(p.id, id, rotated.client_secret as string)).toBe(true);

    expect(await run('client', 'delete', '--platform', p.id, '--client', id)).toEqual({
      deleted: true,
      platform_guid: p.id,
      client_id: id,
    });
    expect(await authenticates(p.id, id, defaulted.client_secret as string)).toBe(false);
    expect((await events(id)).map((e) => e.kind)).toEqual([
      'client.deleted',
      'client.secret_rotated',
      'client.secret_rotated',
      'client.created',
    ]);
  });

  it.each<[string, (p: string, id: string) => string[], RegExp]>([
    [
      'update without a change',
      (p, id) => ['client', 'update', '--platform', p, '--client', id],
      /give at least one field/,
    ],
    [
      'update with both switches',
      (p, id) => ['client', 'update', '--platform', p, '--client', id, '--resource-server', '--no-resource-server'],
      /not both/,
    ],
    [
      'update with a bad scope',
      (p, id) => ['client', 'update', '--platform', p, '--client', id, '--scopes', 'openid admin'],
      /unknown scope "admin"/,
    ],
    [
      'update with a bad type',
      (p, id) => ['client', 'update', '--platform', p, '--client', id, '--type', 'spa'],
      /type: client type must be/,
    ],
    [
      'rotate with a bad overlap',
      (p, id) => ['client', 'rotate-secret', '--platform', p, '--client', id, '--overlap-seconds', 'soon'],
      /overlap_seconds: /,
    ],
    [
      'rotate with a negative overlap',
      (p, id) => ['client', 'rotate-secret', '--platform', p, '--client', id, '--overlap-seconds', '-5'],
      /overlap_seconds: must be at least 0/,
    ],
    ['show without --client', (p) => ['client', 'show', '--platform', p], /--client is required/],
    [
      'show with a malformed id',
      (p) => ['client', 'show', '--platform', p, '--client', 'nope'],
      /client_id: must be a UUID/,
    ],
    [
      'delete an unknown client',
      (p) => ['client', 'delete', '--platform', p, '--client', '00000000-0000-4000-8000-000000000000'],
      /unknown client/,
    ],
  ])("%s: the API's message, nothing changed", async (_label, argv, message) => {
    const p = await buildPlatform(t.services);
    const a = await created(p.id);
    await expect(run(...argv(p.id, a.client_id as string))).rejects.toThrow(message);
    expect((await events(a.client_id as string)).map((e) => e.kind)).toEqual(['client.created']);
    expect(await authenticates(p.id, a.client_id as string, a.client_secret as string)).toBe(true);
  });
});

describe('MASTER_KEY rotation covers a previous secret during its overlap', () => {
  // A database of its own: resealing touches every row sealed under the run's key. Postgres only:
  // an embedded database of its own would be served in-process, which jest cannot (test/ops/master-key covers processes).
  const onPostgres = process.env.TEST_DATABASE_KIND === 'postgres' ? it : it.skip;
  onPostgres(
    'admin master-key reseal reseals clients.previous_sealed_secret; the previous secret still works under the new key',
    async () => {
      const fresh = await freshDatabase();
      const own = fresh.env;
      const before = await buildTestApp(own, undefined, { mailWorker: false });
      let after: typeof before | undefined;
      try {
        await migrateLatest(before.database.db);
        const p = await buildPlatform(before.services);
        const actor = { actorType: 'cli' as const, platformId: null };
        const { client, secret: old } = await before.services.admin.clients.create(actor, p.id, {
          name: 'Web',
          type: 'confidential',
          redirect_uris: ['https://app.example/cb'],
          scopes: 'openid',
        });
        const rotated = await before.services.admin.clients.rotateSecret(actor, p.id, client.id, {
          overlap_seconds: 3600,
        });
        await before.close();

        const newKey = randomBytes(32).toString('base64url');
        after = await buildTestApp(
          { ...own, MASTER_KEY: newKey, MASTER_KEY_PREVIOUS: before.config.masterKey! },
          undefined,
          { mailWorker: false },
        );
        const counts = await after.services.masterKey.resealAll();
        expect(counts['clients.previous_sealed_secret']).toBe(1);
        const row = await after.database.db('clients').where({ id: client.id }).first();
        expect(createSealer(newKey).unseal(row.previous_sealed_secret).toString('utf8')).toBe(old);
        expect(createSealer(newKey).unseal(row.sealed_secret).toString('utf8')).toBe(rotated.secret);
        expect(() => createSealer(before.config.masterKey!).unseal(row.previous_sealed_secret)).toThrow();
        expect(
          await after.services.clientAuth.authenticate(
            { id: p.id } as never,
            { bodyClientId: client.id, bodyClientSecret: old! },
            { allowPublic: false },
          ),
        ).toMatchObject({ client: { id: client.id } });
      } finally {
        await after?.close();
        await fresh.drop();
      }
    },
  );
});
