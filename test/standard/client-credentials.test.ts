import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform, buildStandardPlatform } from '../factories';
import { basic, jwtPayload } from '../support/account-flows';
import * as clients from '../../src/repositories/client.repository';

// RFC 6749 §4.4 on a standard platform (docs/decisions.md, "Machine and device clients"): a
// confidential client allowed the grant gets an RFC 9068 access token for the resources it names,
// whose `sub` is itself; no refresh token, no ID token, no UserInfo. Every refusal has its code.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const API = 'https://api.example.com/';
const MCP = 'https://mcp.example.com/mcp';
const BARE = 'https://bare.example.com/';

async function setup() {
  const platform = await buildStandardPlatform(t.services, `CC ${randomBytes(4).toString('hex')}`);
  await t.services.resources.create(platform.id, {
    uri: API,
    name: 'Orders API',
    accessTokenTtlSeconds: 300,
    defaultScopes: ['orders:read'],
    scopes: [
      { name: 'orders:read', description: 'Read orders' },
      { name: 'orders:write', description: 'Place orders' },
    ],
  });
  await t.services.resources.create(platform.id, {
    uri: MCP,
    name: 'Calendar MCP',
    accessTokenTtlSeconds: 120,
    scopes: [{ name: 'calendar', description: 'See the calendar' }],
  });
  await t.services.resources.create(platform.id, { uri: BARE, name: 'No scopes', scopes: [] });
  const client = await buildClient(t.services, platform.id, {
    name: 'Nightly job',
    grantTypes: ['client_credentials'],
  });
  return { platform, client, path: `/platforms/${platform.id}/oauth` };
}
type Setup = Awaited<ReturnType<typeof setup>>;

const grant = (s: Setup, fields: Record<string, string | string[]>, auth = basic(s.client)) =>
  request(t.app)
    .post(`${s.path}/token`)
    .set('Authorization', auth)
    .type('form')
    .send(new URLSearchParams([['grant_type', 'client_credentials'], ...pairs(fields)]).toString());

const pairs = (fields: Record<string, string | string[]>): [string, string][] =>
  Object.entries(fields).flatMap(([k, v]) => [v].flat().map((x): [string, string] => [k, x]));

describe('client credentials: issued', () => {
  it('a resource and no scope: its default scopes, its lifetime, aud the resource, sub the client, no refresh or ID token', async () => {
    const s = await setup();
    const res = await grant(s, { resource: API }).expect(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'orders:read', expires_in: 300 });
    expect(decodeProtectedHeader(res.body.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'RS256' });
    const claims = jwtPayload(res.body.access_token);
    expect(Object.keys(claims).sort()).toEqual(['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'scope', 'sub']);
    expect(claims).toMatchObject({
      iss: `http://issuer.test/platforms/${s.platform.id}`,
      aud: API,
      sub: s.client.id,
      client_id: s.client.id,
      scope: 'orders:read',
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(300);
  });

  it("scopes named among the resource's, in its order; client_secret_post authenticates too", async () => {
    const s = await setup();
    const res = await request(t.app)
      .post(`${s.path}/token`)
      .type('form')
      .send({
        grant_type: 'client_credentials',
        resource: API,
        scope: 'orders:write orders:read',
        client_id: s.client.id,
        client_secret: s.client.secret!,
      })
      .expect(200);
    expect(res.body.scope).toBe('orders:read orders:write');
  });

  it('two resources: aud both, scopes of either, the shorter lifetime', async () => {
    const s = await setup();
    const res = await grant(s, { resource: [API, MCP], scope: 'orders:write calendar' }).expect(200);
    expect(res.body).toMatchObject({ scope: 'orders:write calendar', expires_in: 120 });
    expect(jwtPayload(res.body.access_token).aud).toEqual([API, MCP]);
  });

  it('leaves an audit event naming the client as actor, the resource and scope, never the token', async () => {
    const s = await setup();
    const res = await grant(s, { resource: API }).expect(200);
    const { events } = await t.services.audit.list(
      { platformId: s.platform.id, kind: 'client_credentials.issued' },
      10,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actorType: 'client',
      actorId: s.client.id,
      actorName: 'Nightly job',
      clientId: s.client.id,
      subject: null,
      details: { resource: [API], scope: 'orders:read', jti: jwtPayload(res.body.access_token).jti },
    });
    expect(JSON.stringify(events[0])).not.toContain(res.body.access_token);
  });
});

describe('client credentials: refused', () => {
  it('a client not allowed the grant: unauthorized_client', async () => {
    const s = await setup();
    const other = await buildClient(t.services, s.platform.id);
    expectOAuthError(await grant(s, { resource: API }, basic(other)), 400, 'unauthorized_client');
  });

  it('a public client, even one whose stored grants name it: unauthorized_client', async () => {
    const s = await setup();
    const pub = await buildClient(t.services, s.platform.id, { type: 'public' });
    await clients.update(t.database.db, s.platform.id, pub.id, { grantTypes: ['client_credentials'] });
    const res = await request(t.app)
      .post(`${s.path}/token`)
      .type('form')
      .send({ grant_type: 'client_credentials', resource: API, client_id: pub.id });
    expectOAuthError(res, 400, 'unauthorized_client');
  });

  it('a wrong secret: invalid_client', async () => {
    const s = await setup();
    const res = await grant(s, { resource: API }, basic({ ...s.client, secret: 'not-the-secret' }));
    expectOAuthError(res, 401, 'invalid_client');
  });

  it("a client known (and cached) on its own platform is unknown on another's: invalid_client", async () => {
    const s = await setup();
    const other = await setup();
    await grant(s, { resource: API }).expect(200); // the client is now cached
    const res = await request(t.app)
      .post(`${other.path}/token`)
      .set('Authorization', basic(s.client))
      .type('form')
      .send({ grant_type: 'client_credentials', resource: API });
    expectOAuthError(res, 401, 'invalid_client');
  });

  it('no resource, an unknown one, or one with a fragment: invalid_target', async () => {
    const s = await setup();
    expectOAuthError(await grant(s, {}), 400, 'invalid_target');
    expectOAuthError(await grant(s, { resource: 'https://unknown.example/' }), 400, 'invalid_target');
    expectOAuthError(await grant(s, { resource: `${API}#x` }), 400, 'invalid_target');
    expectOAuthError(await grant(s, { resource: [API, 'https://unknown.example/'] }), 400, 'invalid_target');
  });

  it("a scope beyond the resource's (another resource's, OpenID's, unknown): invalid_scope", async () => {
    const s = await setup();
    expectOAuthError(await grant(s, { resource: API, scope: 'calendar' }), 400, 'invalid_scope');
    expectOAuthError(await grant(s, { resource: API, scope: 'openid orders:read' }), 400, 'invalid_scope');
    expectOAuthError(await grant(s, { resource: API, scope: 'orders:delete' }), 400, 'invalid_scope');
  });

  it('a resource defining no scope has nothing to grant: invalid_scope', async () => {
    const s = await setup();
    expectOAuthError(await grant(s, { resource: BARE }), 400, 'invalid_scope');
  });

  it('a seed platform knows no such grant: unsupported_grant_type', async () => {
    const platform = await buildPlatform(t.services);
    const client = await buildClient(t.services, platform.id);
    const res = await request(t.app)
      .post('/oauth/token')
      .set('Authorization', basic(client))
      .type('form')
      .send({ grant_type: 'client_credentials', platform_guid: platform.id });
    expectOAuthError(res, 400, 'unsupported_grant_type');
  });
});

describe('client credentials: signing keys', () => {
  it("after the platform's keys are reloaded, grants still sign with the active key and verify against the JWKS", async () => {
    const s = await setup();
    const first = (await grant(s, { resource: API }).expect(200)).body.access_token as string;
    t.services.signingKeys.forget(s.platform.id);
    const second = (await grant(s, { resource: API }).expect(200)).body.access_token as string;
    expect(decodeProtectedHeader(second).kid).toBe(decodeProtectedHeader(first).kid);
    const jwks = createLocalJWKSet((await request(t.app).get(`${s.path}/jwks`).expect(200)).body);
    for (const token of [first, second]) await expect(jwtVerify(token, jwks)).resolves.toBeDefined();
  });

  it('an immediate rotation signs with the new key at once, its private key read for it', async () => {
    const s = await setup();
    const before = decodeProtectedHeader((await grant(s, { resource: API }).expect(200)).body.access_token).kid;
    const rotated = await t.database.db.transaction((trx) =>
      t.services.signingKeys.rotateAsymmetric(trx, s.platform.id, 'RS256', true),
    );
    t.services.signingKeys.forget(s.platform.id);
    const token = (await grant(s, { resource: API }).expect(200)).body.access_token as string;
    expect(decodeProtectedHeader(token).kid).toBe(rotated.kid);
    expect(rotated.kid).not.toBe(before);
    const jwks = createLocalJWKSet((await request(t.app).get(`${s.path}/jwks`).expect(200)).body);
    await expect(jwtVerify(token, jwks)).resolves.toBeDefined();
  });
});

describe('a client credentials token after issuance', () => {
  it('userinfo refuses it: invalid_token (no user behind it)', async () => {
    const s = await setup();
    const { access_token } = (await grant(s, { resource: API }).expect(200)).body;
    const res = await request(t.app).get(`${s.path}/userinfo`).set('Authorization', `Bearer ${access_token}`);
    expectOAuthError(res, 401, 'invalid_token');
  });

  it('introspection reports it active with sub = the client, to the client and to a resource server', async () => {
    const s = await setup();
    const { access_token } = (await grant(s, { resource: API }).expect(200)).body;
    const rs = await buildClient(t.services, s.platform.id, { isResourceServer: true });
    for (const caller of [s.client, rs]) {
      const res = await request(t.app)
        .post(`${s.path}/introspect`)
        .set('Authorization', basic(caller))
        .type('form')
        .send({ token: access_token })
        .expect(200);
      expect(res.body).toMatchObject({
        active: true,
        sub: s.client.id,
        client_id: s.client.id,
        scope: 'orders:read',
        aud: API,
        token_type: 'Bearer',
      });
      expect(res.body.act).toBeUndefined();
      expect(res.body.human_guid).toBeUndefined();
    }
  });

  it('revocation (RFC 7009) ends it: introspection then says inactive', async () => {
    const s = await setup();
    const { access_token } = (await grant(s, { resource: API }).expect(200)).body;
    await request(t.app)
      .post(`${s.path}/revoke`)
      .set('Authorization', basic(s.client))
      .type('form')
      .send({ token: access_token })
      .expect(200);
    const res = await request(t.app)
      .post(`${s.path}/introspect`)
      .set('Authorization', basic(s.client))
      .type('form')
      .send({ token: access_token })
      .expect(200);
    expect(res.body).toEqual({ active: false });
  });
});
