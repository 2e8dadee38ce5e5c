import { buildTestApp } from '../helpers';
import { buildPlatform, buildStandardPlatform } from '../factories';
import {
  RESOURCE_SCOPES_MAX,
  RESOURCE_TOKEN_TTL_MAX,
  RESOURCE_TOKEN_TTL_MIN,
  RESOURCES_PER_PLATFORM_MAX,
} from '../../src/domain/resource';
import type { ResourceInput } from '../../src/services/resources.service';
import type { OAuthError } from '../../src/errors';

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const DOCS: ResourceInput = {
  uri: 'https://api.example.com/docs',
  name: 'Documents API',
  scopes: [
    { name: 'docs:read', description: 'Read your documents' },
    { name: 'docs:write', description: 'Change your documents' },
  ],
  defaultScopes: ['docs:read'],
  accessTokenTtlSeconds: 600,
};

/** The refusal `work` ends in: its status and description. */
async function refusal(work: Promise<unknown>): Promise<{ status: number; description: string }> {
  const err = (await work.then(
    () => undefined,
    (e: unknown) => e,
  )) as OAuthError | undefined;
  if (!err) throw new Error('expected a refusal');
  return { status: err.status, description: err.description };
}

describe('resources service', () => {
  it('registers a resource on a standard platform and finds it by URI, from the cache', async () => {
    const p = await buildStandardPlatform(t.services);
    const created = await t.services.resources.create(p.id, DOCS);
    expect(created).toMatchObject({
      platformId: p.id,
      uri: DOCS.uri,
      name: 'Documents API',
      scopes: DOCS.scopes,
      defaultScopes: ['docs:read'],
      accessTokenTtlSeconds: 600,
    });
    expect(await t.services.resources.findByUri(p.id, DOCS.uri)).toEqual(created);
    expect(await t.services.resources.findByUri(p.id, 'https://api.example.com/docs/')).toBeUndefined(); // compared exactly
    expect(await t.services.resources.listForPlatform(p.id)).toEqual([created]);
    expect(await t.services.resources.listForPlatform('not-a-uuid')).toEqual([]);
    // Shared by every caller: frozen.
    expect(Object.isFrozen((await t.services.resources.listForPlatform(p.id))[0].scopes)).toBe(true);
  });

  it('refuses a seed platform with a clear 409, and an unknown platform as not found', async () => {
    const seed = await buildPlatform(t.services);
    expect(await refusal(t.services.resources.create(seed.id, DOCS))).toEqual({
      status: 409,
      description: expect.stringContaining('standard platforms only'),
    });
    expect(await refusal(t.services.resources.create('00000000-0000-4000-8000-000000000000', DOCS))).toMatchObject({
      status: 404,
    });
  });

  it('refuses a URI that is not an absolute URI without a fragment, naming the field', async () => {
    const p = await buildStandardPlatform(t.services);
    for (const [uri, why] of [
      ['https://api.example.com/#section', 'uri: must not contain a fragment'],
      ['/relative/path', 'uri: must be an absolute URI'],
      ['api.example.com', 'uri: must be an absolute URI'],
      ['', 'uri: must be an absolute URI'],
    ]) {
      expect({ uri, ...(await refusal(t.services.resources.create(p.id, { ...DOCS, uri }))) }).toEqual({
        uri,
        status: 400,
        description: why,
      });
    }
    expect(await t.services.resources.list(p.id)).toEqual([]);
  });

  it('refuses a URI taken on the platform (409), but not one taken on another platform', async () => {
    const [p, other] = [await buildStandardPlatform(t.services), await buildStandardPlatform(t.services)];
    await t.services.resources.create(p.id, DOCS);
    expect(await refusal(t.services.resources.create(p.id, { ...DOCS, name: 'Again' }))).toEqual({
      status: 409,
      description: `uri: a resource "${DOCS.uri}" already exists on this platform`,
    });
    await expect(t.services.resources.create(other.id, DOCS)).resolves.toMatchObject({ platformId: other.id });
    const second = await t.services.resources.create(p.id, { ...DOCS, uri: 'https://api.example.com/mail' });
    expect(await refusal(t.services.resources.update(p.id, second.id, { uri: DOCS.uri }))).toMatchObject({
      status: 409,
    });
  });

  it('refuses bad scope names, repeated names and OpenID Connect scopes', async () => {
    const p = await buildStandardPlatform(t.services);
    const withScope = (name: string) =>
      t.services.resources.create(p.id, { ...DOCS, scopes: [{ name, description: '' }], defaultScopes: [] });
    for (const name of ['has space', 'quo"te', 'back\\slash', '', 'x'.repeat(129)]) {
      expect({ name, ...(await refusal(withScope(name))) }).toEqual({
        name,
        status: 400,
        description: expect.stringMatching(/^scopes: ".*" is not a scope name/),
      });
    }
    expect((await refusal(withScope('openid'))).description).toBe(
      'scopes: "openid" is an OpenID Connect scope; a resource defines its own',
    );
    const twice = [
      { name: 'a', description: '' },
      { name: 'a', description: 'again' },
    ];
    expect(
      (await refusal(t.services.resources.create(p.id, { ...DOCS, scopes: twice, defaultScopes: [] }))).description,
    ).toBe('scopes: "a" is given twice');
    const many = Array.from({ length: RESOURCE_SCOPES_MAX + 1 }, (_, i) => ({ name: `s${i}`, description: '' }));
    expect(
      (await refusal(t.services.resources.create(p.id, { ...DOCS, scopes: many, defaultScopes: [] }))).description,
    ).toBe(`scopes: at most ${RESOURCE_SCOPES_MAX} scopes`);
    await expect(withScope('mcp:tools/call')).resolves.toMatchObject({
      scopes: [{ name: 'mcp:tools/call', description: '' }],
    });
  });

  it('refuses default scopes that are not among the scopes, on creation and after a change of scopes', async () => {
    const p = await buildStandardPlatform(t.services);
    expect(await refusal(t.services.resources.create(p.id, { ...DOCS, defaultScopes: ['docs:admin'] }))).toEqual({
      status: 400,
      description: 'default_scopes: "docs:admin" is not one of the resource\'s scopes',
    });
    const r = await t.services.resources.create(p.id, DOCS);
    expect(
      (await refusal(t.services.resources.update(p.id, r.id, { scopes: [{ name: 'docs:write', description: '' }] })))
        .description,
    ).toMatch(/^default_scopes: "docs:read"/);
    await expect(
      t.services.resources.update(p.id, r.id, { scopes: [{ name: 'docs:write', description: '' }], defaultScopes: [] }),
    ).resolves.toMatchObject({ defaultScopes: [] });
  });

  it('keeps the token lifetime within its bounds; null is the platform default', async () => {
    const p = await buildStandardPlatform(t.services);
    for (const ttl of [RESOURCE_TOKEN_TTL_MIN - 1, RESOURCE_TOKEN_TTL_MAX + 1, 90.5, 0, -60]) {
      expect({
        ttl,
        ...(await refusal(t.services.resources.create(p.id, { ...DOCS, accessTokenTtlSeconds: ttl }))),
      }).toEqual({ ttl, status: 400, description: expect.stringMatching(/^access_token_ttl_seconds: /) });
    }
    const r = await t.services.resources.create(p.id, { ...DOCS, accessTokenTtlSeconds: RESOURCE_TOKEN_TTL_MAX });
    expect(
      (await t.services.resources.update(p.id, r.id, { accessTokenTtlSeconds: null })).accessTokenTtlSeconds,
    ).toBeNull();
    expect(
      (await t.services.resources.update(p.id, r.id, { accessTokenTtlSeconds: RESOURCE_TOKEN_TTL_MIN }))
        .accessTokenTtlSeconds,
    ).toBe(RESOURCE_TOKEN_TTL_MIN);
  });

  it(`holds a platform to ${RESOURCES_PER_PLATFORM_MAX} resources, also under concurrent creations`, async () => {
    const p = await buildStandardPlatform(t.services);
    const uris = Array.from({ length: RESOURCES_PER_PLATFORM_MAX + 3 }, (_, i) => `urn:example:api:${i}`);
    const results = await Promise.allSettled(uris.map((uri) => t.services.resources.create(p.id, { ...DOCS, uri })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(RESOURCES_PER_PLATFORM_MAX);
    const refused = results
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => (r.reason as OAuthError).status);
    expect(refused).toEqual([409, 409, 409]);
  });

  it('drops the cached list on a change: an update and a deletion are seen at once', async () => {
    const p = await buildStandardPlatform(t.services);
    const r = await t.services.resources.create(p.id, DOCS);
    expect(await t.services.resources.findByUri(p.id, DOCS.uri)).toMatchObject({ name: 'Documents API' }); // cached
    await t.services.resources.update(p.id, r.id, {
      name: 'Docs',
      scopes: [{ name: 'docs:read', description: 'Read them' }],
    });
    expect(await t.services.resources.findByUri(p.id, DOCS.uri)).toMatchObject({
      name: 'Docs',
      scopes: [{ name: 'docs:read', description: 'Read them' }],
    });
    await t.services.resources.delete(p.id, r.id);
    expect(await t.services.resources.findByUri(p.id, DOCS.uri)).toBeUndefined();
    expect(await refusal(t.services.resources.delete(p.id, r.id))).toMatchObject({ status: 404 });
  });

  const viaNotify = process.env.TEST_DATABASE_KIND === 'embedded' ? it.skip : it;
  viaNotify('another instance drops its cached list when the database NOTIFYs the change', async () => {
    const other = await buildTestApp();
    try {
      const p = await buildStandardPlatform(t.services);
      const r = await t.services.resources.create(p.id, DOCS);
      expect(await other.services.resources.findByUri(p.id, DOCS.uri)).toMatchObject({ name: 'Documents API' }); // cached there
      await t.services.resources.update(p.id, r.id, { name: 'Renamed' });
      const deadline = Date.now() + 5000;
      while ((await other.services.resources.findByUri(p.id, DOCS.uri))?.name !== 'Renamed' && Date.now() < deadline)
        await new Promise((ok) => setTimeout(ok, 50));
      expect(await other.services.resources.findByUri(p.id, DOCS.uri)).toMatchObject({ name: 'Renamed' });
    } finally {
      await other.close();
    }
  });
});
