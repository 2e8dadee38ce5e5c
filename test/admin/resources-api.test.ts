import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform, buildStandardPlatform } from '../factories';
import { adminClient, adminDocument, adminToken } from './admin-api-client';

let t: Awaited<ReturnType<typeof buildTestApp>>;
let global: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp();
  global = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());

const DOCS = {
  uri: 'https://api.example.com/docs',
  name: 'Documents API',
  scopes: [{ name: 'docs:read', description: 'Read your documents' }, { name: 'docs:write' }],
  default_scopes: ['docs:read'],
  access_token_ttl_seconds: 900,
};
const resourcesOf = (p: { id: string }) => `/platforms/${p.id}/resources`;
const events = async (platformId: string, kind: 'resource.created' | 'resource.updated' | 'resource.deleted') =>
  (await t.services.audit.list({ platformId, kind }, 20)).events;

async function created(body: Record<string, unknown> = DOCS) {
  const p = await buildStandardPlatform(t.services);
  const res = await global.post(resourcesOf(p), body);
  expect(res.status).toBe(201);
  return { p, resource: res.body as Record<string, unknown> & { id: string } };
}

describe('admin API: resources', () => {
  it('creates, shows, lists, updates and deletes a resource; each change audited', async () => {
    const { p, resource } = await created();
    expect(resource).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      platform_guid: p.id,
      uri: DOCS.uri,
      name: 'Documents API',
      scopes: [
        { name: 'docs:read', description: 'Read your documents' },
        { name: 'docs:write', description: '' },
      ],
      default_scopes: ['docs:read'],
      access_token_ttl_seconds: 900,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await global.get(`${resourcesOf(p)}/${resource.id}`)).body).toEqual(resource);
    expect((await global.get(resourcesOf(p))).body).toEqual({ items: [resource] });
    expect(await events(p.id, 'resource.created')).toMatchObject([
      {
        actorType: 'admin_token',
        details: {
          resource_id: resource.id,
          uri: DOCS.uri,
          scopes: ['docs:read', 'docs:write'],
          default_scopes: ['docs:read'],
          access_token_ttl_seconds: 900,
        },
      },
    ]);

    const changed = await global.patch(`${resourcesOf(p)}/${resource.id}`, {
      name: 'Docs',
      scopes: [{ name: 'docs:read', description: 'Read them' }],
      access_token_ttl_seconds: null,
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      name: 'Docs',
      scopes: [{ name: 'docs:read', description: 'Read them' }],
      default_scopes: ['docs:read'],
      access_token_ttl_seconds: null,
    });
    expect(await t.services.resources.findByUri(p.id, DOCS.uri)).toMatchObject({ name: 'Docs' }); // the protocol's cached view too
    expect((await events(p.id, 'resource.updated'))[0].details).toEqual({
      resource_id: resource.id,
      resource: DOCS.uri,
      name: { from: 'Documents API', to: 'Docs' },
      scopes: { from: ['docs:read', 'docs:write'], to: ['docs:read'] },
      access_token_ttl_seconds: { from: 900, to: null },
      scope_descriptions: ['docs:read'],
    });

    expect((await global.delete(`${resourcesOf(p)}/${resource.id}`)).status).toBe(204);
    expect((await global.get(resourcesOf(p))).body).toEqual({ items: [] });
    expect(await t.services.resources.findByUri(p.id, DOCS.uri)).toBeUndefined();
    expect((await events(p.id, 'resource.deleted'))[0].details).toEqual({
      resource_id: resource.id,
      uri: DOCS.uri,
      name: 'Docs',
    });
    expectOAuthError(await global.get(`${resourcesOf(p)}/${resource.id}`), 404, 'not_found');
    expectOAuthError(await global.delete(`${resourcesOf(p)}/${resource.id}`), 404, 'not_found');
  });

  it('answers 404 for an unknown platform or resource, 400 for a malformed id', async () => {
    const p = await buildStandardPlatform(t.services);
    const nobody = '00000000-0000-4000-8000-000000000000';
    expectOAuthError(await global.get(`/platforms/${nobody}/resources`), 404, 'not_found');
    expectOAuthError(await global.post(`/platforms/${nobody}/resources`, DOCS), 404, 'not_found');
    expectOAuthError(await global.get(`${resourcesOf(p)}/${nobody}`), 404, 'not_found');
    expectOAuthError(await global.patch(`${resourcesOf(p)}/${nobody}`, { name: 'x' }), 404, 'not_found');
    const bad = await global.get(`${resourcesOf(p)}/nope`);
    expectOAuthError(bad, 400, 'invalid_request');
    expect(bad.body.error_description).toBe('resource_id: must be a UUID');
  });

  it('refuses invalid input naming the field, and a taken URI with 409', async () => {
    const { p, resource } = await created();
    for (const [body, description] of [
      [{ ...DOCS, uri: 'https://api.example.com/#x' }, 'uri: must not contain a fragment'],
      [{ ...DOCS, uri: 'relative/path' }, 'uri: must be an absolute URI'],
      [{ ...DOCS, uri: undefined }, expect.stringMatching(/^uri: /)],
      [{ ...DOCS, scopes: [{ name: 'two words' }] }, expect.stringMatching(/^scopes: "two words" is not a scope name/)],
      [
        { ...DOCS, default_scopes: ['docs:admin'] },
        'default_scopes: "docs:admin" is not one of the resource\'s scopes',
      ],
      [{ ...DOCS, access_token_ttl_seconds: 5 }, expect.stringMatching(/^access_token_ttl_seconds: /)],
      [{ ...DOCS, access_token_ttl_seconds: 'soon' }, 'access_token_ttl_seconds: must be a number of seconds, or null'],
      [{ ...DOCS, audience: 'x' }, 'unknown field "audience"'],
    ] as const) {
      const res = await global.post(resourcesOf(p), {
        ...body,
        uri: body.uri === DOCS.uri ? 'https://other.example.com/' : body.uri,
      });
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toEqual(description);
    }
    const taken = await global.post(resourcesOf(p), DOCS);
    expectOAuthError(taken, 409, 'invalid_request');
    expect(taken.body.error_description).toBe(`uri: a resource "${DOCS.uri}" already exists on this platform`);
    expectOAuthError(await global.patch(`${resourcesOf(p)}/${resource.id}`, {}), 400, 'invalid_request');
    expect((await global.get(resourcesOf(p))).body.items).toHaveLength(1);
  });

  it('refuses a seed platform with 409 and says why', async () => {
    const seed = await buildPlatform(t.services);
    const res = await global.post(resourcesOf(seed), DOCS);
    expectOAuthError(res, 409, 'invalid_request');
    expect(res.body.error_description).toMatch(/^resources are for standard platforms only/);
    expect((await global.get(resourcesOf(seed))).body).toEqual({ items: [] });
  });

  it('a platform-scoped token sees and changes its own platform only', async () => {
    const { p, resource } = await created();
    const { p: other, resource: theirs } = await created();
    const scoped = adminClient(t.app, await adminToken(t.services, p.id));
    expect((await scoped.get(resourcesOf(p))).body.items).toHaveLength(1);
    expect((await scoped.patch(`${resourcesOf(p)}/${resource.id}`, { name: 'Mine' })).status).toBe(200);
    for (const res of [
      await scoped.get(resourcesOf(other)),
      await scoped.post(resourcesOf(other), { ...DOCS, uri: 'urn:x' }),
      await scoped.get(`${resourcesOf(other)}/${theirs.id}`),
      await scoped.patch(`${resourcesOf(other)}/${theirs.id}`, { name: 'Theirs' }),
      await scoped.delete(`${resourcesOf(other)}/${theirs.id}`),
    ]) {
      expectOAuthError(res, 404, 'not_found');
      expect(res.body.error_description).toBe(`unknown platform "${other.id}"`);
    }
    expectOAuthError(await scoped.get(`${resourcesOf(p)}/${theirs.id}`), 404, 'not_found');
    expect((await global.get(`${resourcesOf(other)}/${theirs.id}`)).body.name).toBe('Documents API');
  });

  it('is in the OpenAPI document', async () => {
    const doc = await adminDocument(t.app);
    const paths = doc.paths;
    expect(Object.keys(paths['/platforms/{platform_guid}/resources'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/platforms/{platform_guid}/resources/{resource_id}'] ?? {}).sort()).toEqual([
      'delete',
      'get',
      'patch',
    ]);
  });
});
