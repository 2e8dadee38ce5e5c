import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildUser } from '../factories';
import { configurationPath, countClients, register, registrationPlatform, WEB_APP } from './support';

// RFC 7592: the client configuration endpoint at registration_client_uri, with the registration access token.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function registered(
  body: Record<string, unknown> = { ...WEB_APP, token_endpoint_auth_method: 'client_secret_post' },
) {
  const guid = await registrationPlatform(t.services, 'open');
  const res = await register(t.app, guid, body);
  expect(res.status).toBe(201);
  return { guid, info: res.body as Record<string, any> };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('RFC 7592 client configuration endpoint', () => {
  it('GET: the registration as stored, with the same credentials and URIs', async () => {
    const { guid, info } = await registered();
    const res = await request(t.app)
      .get(configurationPath(guid, info.client_id))
      .set(bearer(info.registration_access_token));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(res.body).toEqual(info);
  });

  it("wrong, missing or another client's token: 401 invalid_token; an operator's client has none; an unknown id the same", async () => {
    const { guid, info } = await registered();
    const other = (await register(t.app, guid, WEB_APP)).body;
    const path = configurationPath(guid, info.client_id);
    expectOAuthError(await request(t.app).get(path), 401, 'invalid_token');
    expectOAuthError(
      await request(t.app)
        .get(path)
        .set(bearer(`${info.registration_access_token}x`)),
      401,
      'invalid_token',
    );
    expectOAuthError(await request(t.app).get(path).set(bearer(other.registration_access_token)), 401, 'invalid_token');
    expectOAuthError(
      await request(t.app).delete(path).set(bearer(other.registration_access_token)),
      401,
      'invalid_token',
    );
    const operators = await buildClient(t.services, guid);
    expectOAuthError(
      await request(t.app).get(configurationPath(guid, operators.id)).set(bearer(info.registration_access_token)),
      401,
      'invalid_token',
    );
    expectOAuthError(
      await request(t.app).get(configurationPath(guid, 'not-a-uuid')).set(bearer(info.registration_access_token)),
      401,
      'invalid_token',
    );
  });

  it('PUT replaces the metadata with the same checks; client_id must match; public ↔ confidential handles the secret', async () => {
    const { guid, info } = await registered();
    const path = configurationPath(guid, info.client_id);
    const put = (body: unknown) =>
      request(t.app)
        .put(path)
        .set(bearer(info.registration_access_token))
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(body));

    expectOAuthError(await put({ ...WEB_APP }), 400, 'invalid_request'); // no client_id
    expectOAuthError(
      await put({ ...WEB_APP, client_id: '00000000-0000-4000-8000-000000000000' }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await put({ ...WEB_APP, client_id: info.client_id, client_secret: 'wrong' }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await put({ client_id: info.client_id, redirect_uris: ['http://app.example.com/cb'] }),
      400,
      'invalid_redirect_uri',
    );

    const replaced = await put({
      client_id: info.client_id,
      client_secret: info.client_secret,
      client_name: 'Renamed',
      redirect_uris: ['https://app.example.com/new'],
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      client_id: info.client_id,
      client_name: 'Renamed',
      redirect_uris: ['https://app.example.com/new'],
      client_secret: info.client_secret,
      registration_access_token: info.registration_access_token,
    });
    // Fields left out fall back to their defaults (RFC 7592 §2.2): the contacts and software_id are gone.
    const becamePublic = await put({
      client_id: info.client_id,
      redirect_uris: ['https://app.example.com/new'],
      token_endpoint_auth_method: 'none',
    });
    expect(becamePublic.body).not.toHaveProperty('client_secret');
    expect((await t.database.db('clients').where({ id: info.client_id }).first()).sealed_secret).toBeNull();
    const [event] = (await t.services.audit.list({ platformId: guid }, 1)).events;
    expect(event).toMatchObject({ kind: 'client.updated', actorType: 'anonymous' });
  });

  it('PUT that changes what consent showed (name, logo, home page, redirect URIs) forgets remembered consents; one that does not keeps them', async () => {
    const { guid, info } = await registered();
    const user = await buildUser(t.services, guid);
    const remember = () =>
      t.database
        .db('consents')
        .insert({ platform_id: guid, user_id: user.id, client_id: info.client_id, scopes: ['openid'] })
        .onConflict(['user_id', 'client_id'])
        .ignore();
    const remembered = async () => (await t.database.db('consents').where({ client_id: info.client_id })).length;
    const put = (body: Record<string, unknown>) =>
      request(t.app)
        .put(configurationPath(guid, info.client_id))
        .set(bearer(info.registration_access_token))
        .set('Content-Type', 'application/json')
        .send(
          JSON.stringify({
            ...WEB_APP,
            token_endpoint_auth_method: 'client_secret_post',
            client_id: info.client_id,
            ...body,
          }),
        );
    await remember();
    expect((await put({ contacts: ['ops@app.example.com'] })).status).toBe(200);
    expect(await remembered()).toBe(1);
    expect((await put({ client_name: 'Something else' })).status).toBe(200);
    expect(await remembered()).toBe(0);
    const [renamed] = (await t.services.audit.list({ clientId: info.client_id, kind: 'client.updated' }, 1)).events;
    expect(renamed.details).toMatchObject({ consents_cleared: 1 });
    await remember();
    expect((await put({ client_name: 'Something else', redirect_uris: ['https://elsewhere.example/cb'] })).status).toBe(
      200,
    );
    expect(await remembered()).toBe(0);
  });

  it('DELETE: 204, the client and its grants are gone; the token then opens nothing', async () => {
    const { guid, info } = await registered();
    const path = configurationPath(guid, info.client_id);
    const res = await request(t.app).delete(path).set(bearer(info.registration_access_token));
    expect(res.status).toBe(204);
    expect(await countClients(t.database.db, guid)).toBe(0);
    expectOAuthError(await request(t.app).get(path).set(bearer(info.registration_access_token)), 401, 'invalid_token');
    const [event] = (await t.services.audit.list({ platformId: guid }, 1)).events;
    expect(event).toMatchObject({ kind: 'client.deleted', actorType: 'anonymous', clientId: info.client_id });
  });

  it('registration turned off: the configuration endpoint answers 404 too (the client keeps signing in)', async () => {
    const { guid, info } = await registered();
    await t.database.db('platforms').where({ id: guid }).update({ registration: 'off' });
    t.services.platforms.forget(guid);
    expectOAuthError(
      await request(t.app).get(configurationPath(guid, info.client_id)).set(bearer(info.registration_access_token)),
      404,
      'not_found',
    );
  });
});
