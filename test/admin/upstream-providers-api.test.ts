import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildPlatform, buildUser } from '../factories';
import { adminClient, adminDocument, adminToken } from './admin-api-client';
import { cliActor } from '../../src/domain/admin';
import * as identities from '../../src/repositories/user-identity.repository';
import { newId } from '../../src/crypto/random';

let t: Awaited<ReturnType<typeof buildTestApp>>;
let global: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp();
  global = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());

const SECRET = 'upstream-client-secret-that-must-never-come-back';
const GOOGLE = { kind: 'google', client_id: 'g-client.apps.googleusercontent.com', client_secret: SECRET };
const OIDC = {
  kind: 'oidc',
  display_name: 'Acme SSO',
  issuer: 'https://sso.acme.example',
  client_id: 'latchkey',
  client_secret: SECRET,
  scopes: ['openid', 'email'],
};
const providersOf = (p: { id: string }) => `/platforms/${p.id}/upstream-providers`;
const events = async (
  platformId: string,
  kind: 'upstream_provider.created' | 'upstream_provider.updated' | 'upstream_provider.deleted' | 'identity.unlinked',
) => (await t.services.audit.list({ platformId, kind }, 20)).events;

async function created(body: Record<string, unknown> = GOOGLE) {
  const p = await buildPlatform(t.services);
  const res = await global.post(providersOf(p), body);
  expect(res.status).toBe(201);
  return { p, provider: res.body as Record<string, unknown> & { id: string; slug: string } };
}

describe('admin API: upstream providers', () => {
  it('adds a Google preset (the preset fills the rest), shows and lists it; the secret is sealed and never returned; audited without it', async () => {
    const { p, provider } = await created();
    expect(provider).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      platform_guid: p.id,
      kind: 'google',
      slug: 'google',
      display_name: 'Google',
      issuer: 'https://accounts.google.com',
      api_base_url: null,
      client_id: GOOGLE.client_id,
      has_client_secret: true,
      scopes: ['openid', 'email', 'profile'],
      claim_mapping: {},
      trust_email: true,
      trust_mfa: false,
      store_tokens: false,
      enabled: true,
      callback_url: `http://issuer.test/platforms/${p.id}/upstream/callback`,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const shown = await global.get(`${providersOf(p)}/${provider.id}`);
    expect(shown.body).toEqual(provider);
    expect((await global.get(`${providersOf(p)}/google`)).body).toEqual(provider); // by slug too
    const list = await global.get(providersOf(p));
    expect(list.body).toEqual({ items: [provider] });
    for (const body of [provider, shown.body, list.body]) expect(JSON.stringify(body)).not.toContain(SECRET);

    const row = await t.database.db('upstream_providers').where({ id: provider.id }).first();
    expect(row.sealed_client_secret).toEqual(expect.any(String));
    expect(row.sealed_client_secret).not.toContain(SECRET);
    expect((await t.services.federation.providers.forSignIn(p.id, 'google'))?.clientSecret).toBe(SECRET);

    const [event] = await events(p.id, 'upstream_provider.created');
    expect(event).toMatchObject({
      actorType: 'admin_token',
      platformId: p.id,
      details: {
        provider_id: provider.id,
        slug: 'google',
        kind: 'google',
        client_id: GOOGLE.client_id,
        client_secret_set: true,
        has_client_secret: true,
        trust_email: true,
      },
    });
    expect(JSON.stringify(event)).not.toContain(SECRET);
  });

  it('adds a generic OIDC provider, Microsoft by tenant, GitHub with its API base URL and a public upstream client', async () => {
    const { p, provider } = await created({
      ...OIDC,
      claim_mapping: { email: 'mail', given_name: 'first_name' },
      trust_mfa: true,
      store_tokens: true,
      enabled: false,
    });
    expect(provider).toMatchObject({
      kind: 'oidc',
      slug: 'acme-sso',
      display_name: 'Acme SSO',
      issuer: 'https://sso.acme.example',
      scopes: ['openid', 'email'],
      claim_mapping: { email: 'mail', given_name: 'first_name' },
      trust_email: false,
      trust_mfa: true,
      store_tokens: true,
      enabled: false,
    });
    const ms = await global.post(providersOf(p), {
      kind: 'microsoft',
      tenant: 'contoso.onmicrosoft.com',
      client_id: 'ms-app',
    });
    expect(ms.status).toBe(201);
    expect(ms.body).toMatchObject({
      slug: 'microsoft',
      display_name: 'Microsoft',
      issuer: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0',
      has_client_secret: false,
      trust_email: false,
    });
    const moved = await global.patch(`${providersOf(p)}/microsoft`, { tenant: '72f988bf-86f1-41af-91ab-2d7cd011db47' });
    expect(moved.body.issuer).toBe('https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0'); // a new tenant moves the issuer
    const gh = await global.post(providersOf(p), {
      kind: 'github',
      slug: 'ghe',
      display_name: 'GitHub Enterprise',
      issuer: 'https://ghe.acme.example',
      api_base_url: 'https://ghe.acme.example/api/v3',
      client_id: 'Iv1.abc',
      client_secret: SECRET,
    });
    expect(gh.status).toBe(201);
    expect(gh.body).toMatchObject({
      slug: 'ghe',
      issuer: 'https://ghe.acme.example',
      api_base_url: 'https://ghe.acme.example/api/v3',
      scopes: ['read:user', 'user:email'],
    });
    expect((await global.get(providersOf(p))).body.items.map((i: { slug: string }) => i.slug)).toEqual([
      'acme-sso',
      'microsoft',
      'ghe',
    ]);
  });

  it('updates any field but the kind: a rename, a new secret (audited as set, never shown), removing the secret, disabling', async () => {
    const { p, provider } = await created(OIDC);
    const path = `${providersOf(p)}/${provider.id}`;
    const renamed = await global.patch(path, {
      display_name: 'Acme Login',
      slug: 'acme',
      scopes: ['openid', 'email', 'profile'],
      claim_mapping: { email: 'upn' },
      enabled: false,
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      id: provider.id,
      slug: 'acme',
      display_name: 'Acme Login',
      scopes: ['openid', 'email', 'profile'],
      claim_mapping: { email: 'upn' },
      enabled: false,
      has_client_secret: true,
    });
    const [rename] = await events(p.id, 'upstream_provider.updated');
    expect(rename).toMatchObject({ actorType: 'admin_token', platformId: p.id });
    expect(rename.details).toEqual({
      provider_id: provider.id,
      provider: 'acme',
      slug: { from: 'acme-sso', to: 'acme' },
      display_name: { from: 'Acme SSO', to: 'Acme Login' },
      scopes: { from: ['openid', 'email'], to: ['openid', 'email', 'profile'] },
      claim_mapping: { from: {}, to: { email: 'upn' } },
      enabled: { from: true, to: false },
    });
    expect(rename.details).not.toHaveProperty('client_secret_set');

    const NEW = 'a-brand-new-upstream-secret';
    const rotated = await global.patch(`${providersOf(p)}/acme`, { client_secret: NEW });
    expect(rotated.body.has_client_secret).toBe(true);
    expect(JSON.stringify(rotated.body)).not.toContain(NEW);
    expect(await t.services.federation.providers.forSignIn(p.id, 'acme')).toBeUndefined(); // disabled: no sign-in through it
    await global.patch(path, { enabled: true });
    expect((await t.services.federation.providers.forSignIn(p.id, 'acme'))?.clientSecret).toBe(NEW);
    const secretEvent = (await events(p.id, 'upstream_provider.updated')).find(
      (e) => e.details.client_secret_set === true,
    )!;
    expect(secretEvent.details).toMatchObject({ provider_id: provider.id, client_secret_set: true });
    expect(JSON.stringify(secretEvent)).not.toContain(NEW);

    const removed = await global.patch(path, { client_secret: null });
    expect(removed.body.has_client_secret).toBe(false);
    expect((await events(p.id, 'upstream_provider.updated'))[0].details).toMatchObject({
      client_secret_set: false,
      has_client_secret: { from: true, to: false },
    });
    expect((await t.services.federation.providers.forSignIn(p.id, 'acme'))?.clientSecret).toBeNull();
  });

  it('deletes a provider (204) with the identities linked through it; audited with their count', async () => {
    const { p, provider } = await created();
    const u = await buildUser(t.services, p.id);
    await identities.insertUnlessLinked(
      t.database.db,
      {
        id: newId(),
        platformId: p.id,
        userId: u.id,
        providerId: provider.id,
        subject: 'g-123',
        email: u.email,
        sealedTokens: null,
      },
      new Date(),
    );
    const res = await global.delete(`${providersOf(p)}/${provider.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectOAuthError(await global.get(`${providersOf(p)}/${provider.id}`), 404, 'not_found');
    expect(await identities.listByUser(t.database.db, p.id, u.id)).toEqual([]);
    expect((await events(p.id, 'upstream_provider.deleted'))[0]).toMatchObject({
      actorType: 'admin_token',
      details: { provider_id: provider.id, slug: 'google', identities_unlinked: 1 },
    });
  });

  describe('refuses bad input with 400 and a description naming the field; nothing is stored', () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['no kind', { client_id: 'x' }, /^kind: /],
      [
        'an unknown kind',
        { kind: 'facebook', client_id: 'x' },
        /^kind: must be one of oidc, google, microsoft, github$/,
      ],
      ['no client id', { kind: 'google' }, /^client_id: /],
      ['an empty client id', { kind: 'google', client_id: '  ' }, /^client_id: must not be empty$/],
      [
        'oidc without an issuer',
        { kind: 'oidc', display_name: 'X', client_id: 'x' },
        /^issuer: required for an OpenID Connect provider$/,
      ],
      ['an issuer that is not a URL', { ...OIDC, issuer: 'sso.acme.example' }, /^issuer: must be an absolute URL$/],
      ['an http issuer off loopback', { ...OIDC, issuer: 'http://sso.acme.example' }, /^issuer: must use https/],
      ['an issuer with a query', { ...OIDC, issuer: 'https://sso.acme.example/?x=1' }, /^issuer: must have no query/],
      ['a bad slug', { ...GOOGLE, slug: 'Not A Slug' }, /^slug: lowercase letters, digits and dashes/],
      ['scopes without openid', { ...OIDC, scopes: ['email'] }, /^scopes: must include openid$/],
      ['scopes as a string', { ...OIDC, scopes: 'openid email' }, /^scopes: /],
      [
        'an unknown claim',
        { ...OIDC, claim_mapping: { groups: 'roles' } },
        /^claim_mapping: unknown claim "groups" \(mappable: email, email_verified/,
      ],
      ['GitHub without a secret', { kind: 'github', client_id: 'Iv1.abc' }, /^client_secret: required for GitHub$/],
      ['a tenant on another kind', { ...GOOGLE, tenant: 'contoso' }, /^tenant: only for a Microsoft provider/],
      [
        'an API base URL on another kind',
        { ...OIDC, api_base_url: 'https://api.example' },
        /^api_base_url: only for a GitHub provider/,
      ],
      ['an unknown field', { ...GOOGLE, secret: 'x' }, /unknown field "secret"/],
      ['a boolean as a string', { ...GOOGLE, trust_email: 'yes' }, /^trust_email: /],
      [
        'a too long display name',
        { ...OIDC, display_name: 'x'.repeat(61) },
        /^display_name: must be at most 60 characters$/,
      ],
    ];
    it.each(cases)('%s', async (_label, body, description) => {
      const p = await buildPlatform(t.services);
      const res = await global.post(providersOf(p), body);
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(description);
      expect((await global.get(providersOf(p))).body.items).toEqual([]);
      expect(await events(p.id, 'upstream_provider.created')).toEqual([]);
    });

    it('an update: the kind never changes, an empty body, a bad issuer; the provider stays as it was', async () => {
      const { p, provider } = await created(OIDC);
      const path = `${providersOf(p)}/${provider.id}`;
      for (const [body, description] of [
        [{ kind: 'google' }, /unknown field "kind" \(a provider's kind never changes: add another provider instead\)/],
        [{}, /give at least one field to change/],
        [{ issuer: 'ftp://sso.acme.example' }, /^issuer: must use https/],
        [{ scopes: [] }, /^scopes: at least one scope$/],
        [{ tenant: 'contoso' }, /^tenant: only for a Microsoft provider/],
      ] as Array<[Record<string, unknown>, RegExp]>) {
        const res = await global.patch(path, body);
        expectOAuthError(res, 400, 'invalid_request');
        expect(res.body.error_description).toMatch(description);
      }
      expect((await global.get(path)).body).toEqual(provider);
      expect(await events(p.id, 'upstream_provider.updated')).toEqual([]);
    });
  });

  it('409 when the slug is taken on the platform (create and rename); another platform may use it', async () => {
    const { p, provider } = await created();
    const again = await global.post(providersOf(p), GOOGLE);
    expectOAuthError(again, 409, 'invalid_request');
    expect(again.body.error_description).toBe('slug: a provider "google" already exists on this platform');
    const other = await global.post(providersOf(p), { ...OIDC, slug: 'sso' });
    const rename = await global.patch(`${providersOf(p)}/${other.body.id}`, { slug: 'google' });
    expectOAuthError(rename, 409, 'invalid_request');
    expect((await global.get(`${providersOf(p)}/${other.body.id}`)).body.slug).toBe('sso');
    expect((await created()).provider.slug).toBe(provider.slug);
  });

  it('404 for an unknown platform, provider or slug; 400 for a provider reference that is neither', async () => {
    const p = await buildPlatform(t.services);
    expectOAuthError(await global.get(providersOf({ id: '00000000-0000-4000-8000-000000000000' })), 404, 'not_found');
    expectOAuthError(
      await global.post(providersOf({ id: '00000000-0000-4000-8000-000000000000' }), GOOGLE),
      404,
      'not_found',
    );
    for (const ref of ['00000000-0000-4000-8000-000000000000', 'github']) {
      const path = `${providersOf(p)}/${ref}`;
      const res = await global.get(path);
      expectOAuthError(res, 404, 'not_found');
      expect(res.body.error_description).toBe(`unknown upstream provider "${ref}"`);
      expectOAuthError(await global.patch(path, { enabled: false }), 404, 'not_found');
      expectOAuthError(await global.delete(path), 404, 'not_found');
    }
    const bad = await global.get(`${providersOf(p)}/Not%20a%20slug`);
    expectOAuthError(bad, 400, 'invalid_request');
    expect(bad.body.error_description).toBe('provider_id: must be a provider id or slug');
  });

  it("a platform-scoped token sees and changes its own platform only; another platform's providers are unknown to it", async () => {
    const { p, provider } = await created();
    const { p: other, provider: theirs } = await created();
    const scoped = adminClient(t.app, await adminToken(t.services, p.id));
    expect((await scoped.get(providersOf(p))).body.items).toHaveLength(1);
    expect((await scoped.patch(`${providersOf(p)}/${provider.id}`, { display_name: 'Google Workspace' })).status).toBe(
      200,
    );
    for (const res of [
      await scoped.get(providersOf(other)),
      await scoped.post(providersOf(other), OIDC),
      await scoped.get(`${providersOf(other)}/${theirs.id}`),
      await scoped.patch(`${providersOf(other)}/${theirs.id}`, { enabled: false }),
      await scoped.delete(`${providersOf(other)}/${theirs.id}`),
    ]) {
      expectOAuthError(res, 404, 'not_found');
      expect(res.body.error_description).toBe(`unknown platform "${other.id}"`);
    }
    // Another platform's provider id under the token's own platform is just as unknown.
    expectOAuthError(await scoped.get(`${providersOf(p)}/${theirs.id}`), 404, 'not_found');
    expect((await global.get(`${providersOf(other)}/${theirs.id}`)).body.enabled).toBe(true);
    expect(await events(other.id, 'upstream_provider.updated')).toEqual([]);
  });

  it('needs an admin token', async () => {
    const p = await buildPlatform(t.services);
    const res = await request(t.app).get(`/admin/api/v1${providersOf(p)}`);
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 401, error: 'invalid_token' });
  });

  it('is in the OpenAPI document: the paths, their operations and the schemas without client_secret in the output', async () => {
    const doc = (await adminDocument(t.app)) as unknown as {
      paths: Record<string, Record<string, { operationId: string }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
    };
    const ops = (path: string) =>
      Object.fromEntries(Object.entries(doc.paths[path] ?? {}).map(([m, o]) => [m, o.operationId]));
    expect(ops('/platforms/{platform_guid}/upstream-providers')).toEqual({
      get: 'listUpstreamProviders',
      post: 'createUpstreamProvider',
    });
    expect(ops('/platforms/{platform_guid}/upstream-providers/{provider_id}')).toEqual({
      get: 'getUpstreamProvider',
      patch: 'updateUpstreamProvider',
      delete: 'deleteUpstreamProvider',
    });
    expect(ops('/platforms/{platform_guid}/users/{sub}/identities')).toEqual({ get: 'listUserIdentities' });
    expect(ops('/platforms/{platform_guid}/users/{sub}/identities/{identity_id}')).toEqual({
      delete: 'unlinkUserIdentity',
    });
    const { UpstreamProvider, UpstreamProviderCreate } = doc.components.schemas;
    expect(Object.keys(UpstreamProvider.properties)).toEqual(
      expect.arrayContaining(['has_client_secret', 'callback_url']),
    );
    expect(UpstreamProvider.properties).not.toHaveProperty('client_secret');
    expect(UpstreamProvider.properties).not.toHaveProperty('tenant');
    expect(UpstreamProviderCreate.properties).toHaveProperty('client_secret');
    expect(UpstreamProviderCreate.required).toEqual(expect.arrayContaining(['kind', 'client_id']));
  });
});

describe("admin API: a user's linked identities", () => {
  async function linked() {
    const p = await buildPlatform(t.services);
    const google = await t.services.admin.upstreamProviders.create(cliActor(), p.id, {
      kind: 'google',
      client_id: 'g',
      client_secret: 's',
    });
    const sso = await t.services.admin.upstreamProviders.create(cliActor(), p.id, {
      kind: 'oidc',
      display_name: 'Acme SSO',
      issuer: 'https://sso.acme.example',
      client_id: 'x',
    });
    const u = await buildUser(t.services, p.id);
    const link = (providerId: string, subject: string) =>
      identities.insertUnlessLinked(
        t.database.db,
        {
          id: newId(),
          platformId: p.id,
          userId: u.id,
          providerId,
          subject,
          email: `${subject}@upstream.example`,
          sealedTokens: 'sealed-upstream-tokens',
        },
        new Date(),
      );
    const first = (await link(google.id, 'g-1'))!;
    const second = (await link(sso.id, 's-1'))!;
    return { p, u, google, sso, first, second, path: `/platforms/${p.id}/users/${u.id}/identities` };
  }

  it("lists them with the provider's slug and name, never the upstream tokens", async () => {
    const { google, sso, first, second, path } = await linked();
    const res = await global.get(path);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      {
        id: first.id,
        provider_id: google.id,
        provider_slug: 'google',
        provider_name: 'Google',
        provider_kind: 'google',
        subject: 'g-1',
        email: 'g-1@upstream.example',
        created_at: expect.any(String),
        last_used_at: expect.any(String),
      },
      {
        id: second.id,
        provider_id: sso.id,
        provider_slug: 'acme-sso',
        provider_name: 'Acme SSO',
        provider_kind: 'oidc',
        subject: 's-1',
        email: 's-1@upstream.example',
        created_at: expect.any(String),
        last_used_at: expect.any(String),
      },
    ]);
    expect(res.text).not.toContain('sealed-upstream-tokens');
  });

  it('an operator unlinks one, the last way in included; audited as identity.unlinked with the token as actor', async () => {
    const { p, u, first, second, path } = await linked();
    await t.database.db('users').where({ id: u.id }).update({ password_hash: null }); // no password: the identities are the only ways in
    const res = await global.delete(`${path}/${first.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sub: u.id, done: 'identity_unlinked' });
    expect((await global.get(path)).body.items.map((i: { id: string }) => i.id)).toEqual([second.id]);
    expect((await global.delete(`${path}/${second.id}`)).status).toBe(200);
    expect((await global.get(path)).body.items).toEqual([]);
    const [last, firstEvent] = await events(p.id, 'identity.unlinked');
    expect(firstEvent).toMatchObject({
      actorType: 'admin_token',
      subject: u.id,
      details: { provider: 'google', email: 'g-1@upstream.example', identity_id: first.id },
    });
    expect(last.details).toMatchObject({ provider: 'acme-sso', identity_id: second.id });
  });

  it('404 for an unknown user, an identity of another user, or one already unlinked; a scoped token sees its platform only', async () => {
    const a = await linked();
    const b = await linked();
    expectOAuthError(
      await global.get(`/platforms/${a.p.id}/users/00000000-0000-4000-8000-000000000000/identities`),
      404,
      'not_found',
    );
    const foreign = await global.delete(`${a.path}/${b.first.id}`);
    expectOAuthError(foreign, 404, 'not_found');
    expect(foreign.body.error_description).toBe(`no linked identity "${b.first.id}" of this user`);
    expectOAuthError(await global.delete(`${a.path}/not-a-uuid`), 400, 'invalid_request');
    expect((await global.delete(`${a.path}/${a.first.id}`)).status).toBe(200);
    expectOAuthError(await global.delete(`${a.path}/${a.first.id}`), 404, 'not_found');

    const scoped = adminClient(t.app, await adminToken(t.services, a.p.id));
    expect((await scoped.get(a.path)).status).toBe(200);
    expectOAuthError(await scoped.get(b.path), 404, 'not_found');
    expectOAuthError(await scoped.delete(`${b.path}/${b.first.id}`), 404, 'not_found');
    expect((await global.get(b.path)).body.items).toHaveLength(2);
  });
});
