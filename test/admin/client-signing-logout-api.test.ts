import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { adminClient, adminToken } from './admin-api-client';
import { runCommand } from '../../src/cli/commands';

// A client's ID-token algorithm and logout registration on the admin API and the CLI.
let t: Awaited<ReturnType<typeof buildTestApp>>;
let global: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp();
  global = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());

const NEW_CLIENT = {
  name: 'Web',
  type: 'confidential',
  redirect_uris: ['https://app.example/cb'],
  scopes: 'openid profile',
};
const DEFAULTS = {
  id_token_signed_response_alg: null,
  backchannel_logout_uri: null,
  backchannel_logout_session_required: false,
  frontchannel_logout_uri: null,
  frontchannel_logout_session_required: false,
};
const standardPlatform = async () =>
  (await t.services.platforms.createPlatform(`Standard ${Date.now()}`, undefined, 'standard')).platform;
const events = async (clientId: string) => (await t.services.audit.list({ clientId }, 20)).events;
const stored = async (clientId: string) => t.database.db('clients').where({ id: clientId }).first();

describe('admin API: client ID-token algorithm and logout registration', () => {
  it('a client registers them; show and list carry them; the creation event has them', async () => {
    const p = await standardPlatform();
    const created = await global.post(`/platforms/${p.id}/clients`, {
      ...NEW_CLIENT,
      id_token_signed_response_alg: 'ES256',
      backchannel_logout_uri: 'https://app.example/backchannel?tenant=1',
      backchannel_logout_session_required: true,
      frontchannel_logout_uri: 'http://127.0.0.1:8080/frontchannel',
      frontchannel_logout_session_required: true,
    });
    expect(created.status).toBe(201);
    const expected = {
      id_token_signed_response_alg: 'ES256',
      backchannel_logout_uri: 'https://app.example/backchannel?tenant=1',
      backchannel_logout_session_required: true,
      frontchannel_logout_uri: 'http://127.0.0.1:8080/frontchannel',
      frontchannel_logout_session_required: true,
    };
    expect(created.body).toMatchObject(expected);
    const id = created.body.client_id;
    expect((await global.get(`/platforms/${p.id}/clients/${id}`)).body).toMatchObject(expected);
    expect((await global.get(`/platforms/${p.id}/clients`)).body.items[0]).toMatchObject(expected);
    expect(await stored(id)).toMatchObject({
      id_token_signed_response_alg: 'ES256',
      backchannel_logout_session_required: true,
      frontchannel_logout_uri: 'http://127.0.0.1:8080/frontchannel',
    });
    const [event] = await events(id);
    expect(event).toMatchObject({ kind: 'client.created', details: expected });
  });

  it('left out, they are the defaults (null, false), on seed platforms too', async () => {
    for (const p of [await standardPlatform(), await buildPlatform(t.services)]) {
      const created = await global.post(`/platforms/${p.id}/clients`, NEW_CLIENT);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject(DEFAULTS);
    }
  });

  it('an update changes them, null or "" clears them, each change audited as {from, to}; other fields stay', async () => {
    const p = await standardPlatform();
    const id = (await global.post(`/platforms/${p.id}/clients`, NEW_CLIENT)).body.client_id;
    const path = `/platforms/${p.id}/clients/${id}`;

    const set = await global.patch(path, {
      id_token_signed_response_alg: 'HS512',
      backchannel_logout_uri: 'https://app.example/bc',
      backchannel_logout_session_required: true,
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      name: 'Web',
      id_token_signed_response_alg: 'HS512',
      backchannel_logout_uri: 'https://app.example/bc',
      backchannel_logout_session_required: true,
      frontchannel_logout_uri: null,
    });
    expect((await events(id))[0].details).toEqual({
      id_token_signed_response_alg: { from: null, to: 'HS512' },
      backchannel_logout_uri: { from: null, to: 'https://app.example/bc' },
      backchannel_logout_session_required: { from: false, to: true },
    });

    const front = await global.patch(path, {
      frontchannel_logout_uri: 'https://app.example/fc',
      frontchannel_logout_session_required: true,
    });
    expect(front.body).toMatchObject({
      id_token_signed_response_alg: 'HS512',
      backchannel_logout_uri: 'https://app.example/bc',
      frontchannel_logout_uri: 'https://app.example/fc',
      frontchannel_logout_session_required: true,
    });

    const cleared = await global.patch(path, {
      id_token_signed_response_alg: null,
      backchannel_logout_uri: '',
      frontchannel_logout_uri: null,
      backchannel_logout_session_required: false,
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ ...DEFAULTS, frontchannel_logout_session_required: true });
    expect((await events(id))[0].details).toEqual({
      id_token_signed_response_alg: { from: 'HS512', to: null },
      backchannel_logout_uri: { from: 'https://app.example/bc', to: null },
      backchannel_logout_session_required: { from: true, to: false },
      frontchannel_logout_uri: { from: 'https://app.example/fc', to: null },
    });
    expect(await stored(id)).toMatchObject({
      id_token_signed_response_alg: null,
      backchannel_logout_uri: null,
      frontchannel_logout_uri: null,
    });
  });

  it('the algorithm applies to standard platforms only: 400 naming the field on a seed platform (null is accepted)', async () => {
    const p = await buildPlatform(t.services);
    const refused = await global.post(`/platforms/${p.id}/clients`, {
      ...NEW_CLIENT,
      id_token_signed_response_alg: 'RS256',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_request');
    expect(refused.body.error_description).toMatch(/^id_token_signed_response_alg: applies to standard platforms only/);
    const id = (await global.post(`/platforms/${p.id}/clients`, { ...NEW_CLIENT, id_token_signed_response_alg: null }))
      .body.client_id;
    const update = await global.patch(`/platforms/${p.id}/clients/${id}`, { id_token_signed_response_alg: 'ES256' });
    expect(update.status).toBe(400);
    expect(update.body.error_description).toMatch(/^id_token_signed_response_alg: applies to standard platforms only/);
    expect((await stored(id)).id_token_signed_response_alg).toBeNull();
  });

  it('HS512 is for confidential clients only (creation, update, and a switch to public while it is set)', async () => {
    const p = await standardPlatform();
    const pub = await global.post(`/platforms/${p.id}/clients`, {
      ...NEW_CLIENT,
      type: 'public',
      id_token_signed_response_alg: 'HS512',
    });
    expect(pub.status).toBe(400);
    expect(pub.body.error_description).toMatch(/^id_token_signed_response_alg: HS512 .*confidential clients only/);
    const publicId = (
      await global.post(`/platforms/${p.id}/clients`, {
        ...NEW_CLIENT,
        type: 'public',
        id_token_signed_response_alg: 'EdDSA',
      })
    ).body.client_id;
    expect(
      (await global.patch(`/platforms/${p.id}/clients/${publicId}`, { id_token_signed_response_alg: 'HS512' })).status,
    ).toBe(400);

    const id = (
      await global.post(`/platforms/${p.id}/clients`, { ...NEW_CLIENT, id_token_signed_response_alg: 'HS512' })
    ).body.client_id;
    const toPublic = await global.patch(`/platforms/${p.id}/clients/${id}`, { type: 'public' });
    expect(toPublic.status).toBe(400);
    expect(toPublic.body.error_description).toMatch(/^id_token_signed_response_alg: HS512/);
    expect((await stored(id)).type).toBe('confidential');
    // …together with another algorithm it may
    expect(
      (
        await global.patch(`/platforms/${p.id}/clients/${id}`, {
          type: 'public',
          id_token_signed_response_alg: 'RS256',
        })
      ).body,
    ).toMatchObject({ type: 'public', id_token_signed_response_alg: 'RS256' });
  });

  it('refuses a bad algorithm or logout URI with a 400 naming the field; nothing is written', async () => {
    const p = await standardPlatform();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { id_token_signed_response_alg: 'none' },
        /^id_token_signed_response_alg: must be one of RS256, ES256, EdDSA, HS512/,
      ],
      [{ id_token_signed_response_alg: 'PS256' }, /^id_token_signed_response_alg: /],
      [{ backchannel_logout_uri: 'not a uri' }, /^backchannel_logout_uri: "not a uri" is not an absolute URL/],
      [{ backchannel_logout_uri: '/logout' }, /^backchannel_logout_uri: .* not an absolute URL/],
      [{ backchannel_logout_uri: 'ftp://app.example/bc' }, /^backchannel_logout_uri: .*must be an http or https URL/],
      [
        { backchannel_logout_uri: 'https://app.example/bc#x' },
        /^backchannel_logout_uri: .*must not contain a fragment/,
      ],
      [{ frontchannel_logout_uri: 'javascript:alert(1)' }, /^frontchannel_logout_uri: .*must be an http or https URL/],
      [{ frontchannel_logout_uri: 'https://app.example/fc#' }, /^frontchannel_logout_uri: .*fragment/],
      [{ backchannel_logout_session_required: 'yes' }, /^backchannel_logout_session_required: /],
      [{ frontchannel_logout_uri: 'x'.repeat(2001) }, /^frontchannel_logout_uri: must be at most 2000 characters/],
    ];
    for (const [fields, message] of cases) {
      const res = await global.post(`/platforms/${p.id}/clients`, { ...NEW_CLIENT, ...fields });
      expect({ fields, status: res.status, error: res.body.error }).toEqual({
        fields,
        status: 400,
        error: 'invalid_request',
      });
      expect(res.body.error_description).toMatch(message);
    }
    expect((await global.get(`/platforms/${p.id}/clients`)).body.items).toEqual([]);
    const id = (await global.post(`/platforms/${p.id}/clients`, NEW_CLIENT)).body.client_id;
    for (const [fields, message] of cases) {
      const res = await global.patch(`/platforms/${p.id}/clients/${id}`, fields);
      expect({ fields, status: res.status }).toEqual({ fields, status: 400 });
      expect(res.body.error_description).toMatch(message);
    }
    expect((await events(id)).map((e) => e.kind)).toEqual(['client.created']);
  });

  it('outside production a logout URI may be plain http on any host', async () => {
    const p = await standardPlatform();
    const res = await global.post(`/platforms/${p.id}/clients`, {
      ...NEW_CLIENT,
      backchannel_logout_uri: 'http://rp.internal:8080/bc',
      frontchannel_logout_uri: 'http://localhost:3001/fc',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      backchannel_logout_uri: 'http://rp.internal:8080/bc',
      frontchannel_logout_uri: 'http://localhost:3001/fc',
    });
  });
});

describe('admin CLI: client ID-token algorithm and logout registration', () => {
  const run = (...argv: string[]) => runCommand(t.services, argv);

  it('client create and update take the flags; show prints them; audited like the API', async () => {
    const p = await standardPlatform();
    const created = await run(
      'client',
      'create',
      '--platform',
      p.id,
      '--name',
      'CLI',
      '--type',
      'confidential',
      '--redirect-uri',
      'https://cli.example/cb',
      '--scopes',
      'openid',
      '--id-token-alg',
      'EdDSA',
      '--backchannel-logout-uri',
      'https://cli.example/bc',
      '--backchannel-logout-session-required',
      '--frontchannel-logout-uri',
      'https://cli.example/fc',
    );
    expect(created).toMatchObject({
      id_token_signed_response_alg: 'EdDSA',
      backchannel_logout_uri: 'https://cli.example/bc',
      backchannel_logout_session_required: true,
      frontchannel_logout_uri: 'https://cli.example/fc',
      frontchannel_logout_session_required: false,
    });
    const id = created.client_id as string;
    expect(await run('client', 'show', '--platform', p.id, '--client', id)).toMatchObject({
      id_token_signed_response_alg: 'EdDSA',
      backchannel_logout_session_required: true,
    });

    const updated = await run(
      'client',
      'update',
      '--platform',
      p.id,
      '--client',
      id,
      '--id-token-alg',
      'HS512',
      '--no-backchannel-logout-session-required',
      '--frontchannel-logout-session-required',
      '--no-backchannel-logout-uri',
    );
    expect(updated).toMatchObject({
      id_token_signed_response_alg: 'HS512',
      backchannel_logout_uri: null,
      backchannel_logout_session_required: false,
      frontchannel_logout_uri: 'https://cli.example/fc',
      frontchannel_logout_session_required: true,
    });
    expect((await events(id))[0]).toMatchObject({
      kind: 'client.updated',
      actorType: 'cli',
      details: {
        id_token_signed_response_alg: { from: 'EdDSA', to: 'HS512' },
        backchannel_logout_uri: { from: 'https://cli.example/bc', to: null },
      },
    });

    const back = await run(
      'client',
      'update',
      '--platform',
      p.id,
      '--client',
      id,
      '--id-token-alg',
      'default',
      '--no-frontchannel-logout-uri',
    );
    expect(back).toMatchObject({ id_token_signed_response_alg: null, frontchannel_logout_uri: null });
  });

  it("refuses bad flags with the API's messages", async () => {
    const p = await buildPlatform(t.services);
    const base = [
      'client',
      'create',
      '--platform',
      p.id,
      '--name',
      'X',
      '--type',
      'confidential',
      '--redirect-uri',
      'https://x.example/cb',
      '--scopes',
      'openid',
    ];
    await expect(run(...base, '--id-token-alg', 'RS256')).rejects.toThrow(
      /id_token_signed_response_alg: applies to standard platforms only/,
    );
    await expect(run(...base, '--backchannel-logout-uri', 'https://x.example/bc#f')).rejects.toThrow(
      /backchannel_logout_uri: .*fragment/,
    );
    await expect(run(...base, '--frontchannel-logout-session-required', 'yes')).rejects.toThrow(
      /--frontchannel-logout-session-required takes no value/,
    );
    const id = (await run(...base)).client_id as string;
    await expect(
      run(
        'client',
        'update',
        '--platform',
        p.id,
        '--client',
        id,
        '--backchannel-logout-uri',
        'https://x.example/bc',
        '--no-backchannel-logout-uri',
      ),
    ).rejects.toThrow(/not both/);
    await expect(
      run(
        'client',
        'update',
        '--platform',
        p.id,
        '--client',
        id,
        '--frontchannel-logout-session-required',
        '--no-frontchannel-logout-session-required',
      ),
    ).rejects.toThrow(/not both/);
    expect((await events(id)).map((e) => e.kind)).toEqual(['client.created']);
  });
});
