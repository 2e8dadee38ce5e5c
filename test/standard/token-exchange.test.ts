import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildStandardPlatform, buildUser } from '../factories';
import { basic, jwtPayload } from '../support/account-flows';
import * as clients from '../../src/repositories/client.repository';
import { TOKEN_EXCHANGE_GRANT } from '../../src/domain/client';
import { cliActor } from '../../src/domain/admin';

// RFC 8693 on a standard platform (docs/decisions.md, "Machine and device clients"): a confidential
// client allowed the grant exchanges a live access token of the platform for one that only narrows
// it, for a resource of its own policy; an actor token makes it a delegation (`act`). Every refusal
// has its code; the exchanged token dies with its subject token and the subject's refresh family.
let offsetMs = 0;
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({}, () => new Date(Date.now() + offsetMs));
});
afterAll(() => t.close());

const API = 'https://api.example.com/';
const MCP = 'https://mcp.example.com/mcp';
const BILLING = 'https://billing.example.com/';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

async function setup() {
  const platform = await buildStandardPlatform(t.services, `TE ${randomBytes(4).toString('hex')}`);
  const resources = t.services.resources;
  await resources.create(platform.id, {
    uri: API,
    name: 'Orders API',
    accessTokenTtlSeconds: 600,
    defaultScopes: ['orders:read'],
    scopes: [
      { name: 'orders:read', description: 'Read orders' },
      { name: 'orders:write', description: 'Place orders' },
    ],
  });
  await resources.create(platform.id, {
    uri: MCP,
    name: 'Calendar MCP',
    accessTokenTtlSeconds: 900,
    scopes: [{ name: 'calendar', description: 'See the calendar' }],
  });
  await resources.create(platform.id, {
    uri: BILLING,
    name: 'Billing',
    scopes: [{ name: 'billing:read', description: 'See invoices' }],
  });
  const app = await buildClient(t.services, platform.id, { name: 'Web app' });
  const exchanger = await buildClient(t.services, platform.id, {
    name: 'Orders backend',
    grantTypes: [TOKEN_EXCHANGE_GRANT, 'client_credentials'],
    tokenExchangeResources: [API, MCP],
  });
  const user = await buildUser(t.services, platform.id);
  return { platform, app, exchanger, user, path: `/platforms/${platform.id}/oauth` };
}
type Setup = Awaited<ReturnType<typeof setup>>;
type Client = Setup['app'];

const FULL = [
  { uri: API, scopes: ['orders:read', 'orders:write'] },
  { uri: MCP, scopes: ['calendar'] },
];

/** A user's tokens as the web app gets them: a code for these scopes and resources, exchanged. */
async function userTokens(
  s: Setup,
  scopes = ['openid', 'offline_access', 'orders:read', 'orders:write', 'calendar'],
  resources = FULL,
) {
  const code = await buildCode(t.services, {
    platformId: s.platform.id,
    client: s.app,
    user: s.user,
    scopes,
    resources,
  });
  const res = await request(t.app)
    .post(`${s.path}/token`)
    .set('Authorization', basic(s.app))
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: s.app.redirectUris[0] })
    .expect(200);
  return res.body as { access_token: string; refresh_token?: string; id_token?: string };
}

const pairs = (fields: Record<string, string | string[]>): [string, string][] =>
  Object.entries(fields).flatMap(([k, v]) => [v].flat().map((x): [string, string] => [k, x]));

const exchange = (s: Setup, fields: Record<string, string | string[]>, client: Client = s.exchanger) =>
  request(t.app)
    .post(`${s.path}/token`)
    .set('Authorization', basic(client))
    .type('form')
    .send(new URLSearchParams([['grant_type', TOKEN_EXCHANGE_GRANT], ...pairs(fields)]).toString());

const ofSubject = (subjectToken: string, more: Record<string, string | string[]> = {}) => ({
  subject_token: subjectToken,
  subject_token_type: ACCESS,
  ...more,
});

async function clientToken(s: Setup, client: Client, resource = API) {
  const res = await request(t.app)
    .post(`${s.path}/token`)
    .set('Authorization', basic(client))
    .type('form')
    .send({ grant_type: 'client_credentials', resource })
    .expect(200);
  return res.body.access_token as string;
}

const introspect = (s: Setup, token: string, caller: Client = s.exchanger) =>
  request(t.app).post(`${s.path}/introspect`).set('Authorization', basic(caller)).type('form').send({ token });

describe('token exchange: issued', () => {
  it("for a resource of the client's policy, no scope: the resource's defaults the subject holds; sub and sign-in kept, client_id the exchanger", async () => {
    const s = await setup();
    const subject = await userTokens(s);
    const res = await exchange(s, ofSubject(subject.access_token, { resource: API })).expect(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(Object.keys(res.body).sort()).toEqual([
      'access_token',
      'expires_in',
      'issued_token_type',
      'scope',
      'token_type',
    ]);
    expect(res.body).toMatchObject({ issued_token_type: ACCESS, token_type: 'Bearer', scope: 'orders:read' });
    const before = jwtPayload(subject.access_token);
    const claims = jwtPayload(res.body.access_token);
    expect(claims).toMatchObject({
      iss: before.iss,
      sub: s.user.id,
      client_id: s.exchanger.id,
      aud: API,
      scope: 'orders:read',
      auth_time: before.auth_time,
      amr: before.amr,
    });
    expect(claims.act).toBeUndefined();
    expect(res.body.expires_in).toBeLessThanOrEqual(600);
  });

  it('names the resource by `audience` too, with scopes narrowed to those asked for', async () => {
    const s = await setup();
    const subject = await userTokens(s);
    const res = await exchange(s, ofSubject(subject.access_token, { audience: API, scope: 'orders:write' })).expect(
      200,
    );
    expect(res.body.scope).toBe('orders:write');
    expect(jwtPayload(res.body.access_token).aud).toBe(API);
  });

  it("never outlives its subject token, whatever the resource's lifetime", async () => {
    const s = await setup();
    // The subject token lives 600 s (the API's lifetime); the calendar's tokens would live 900 s.
    const subject = await userTokens(
      s,
      ['calendar'],
      [
        { uri: API, scopes: [] },
        { uri: MCP, scopes: ['calendar'] },
      ],
    );
    const res = await exchange(s, ofSubject(subject.access_token, { resource: MCP })).expect(200);
    expect(jwtPayload(res.body.access_token).exp).toBe(jwtPayload(subject.access_token).exp);
    expect(res.body.expires_in).toBeLessThanOrEqual(600);
  });

  it("a client credentials token as subject: sub stays that client's id", async () => {
    const s = await setup();
    const service = await buildClient(t.services, s.platform.id, { grantTypes: ['client_credentials'] });
    const res = await exchange(s, ofSubject(await clientToken(s, service), { resource: API })).expect(200);
    const claims = jwtPayload(res.body.access_token);
    expect(claims).toMatchObject({ sub: service.id, client_id: s.exchanger.id, aud: API, scope: 'orders:read' });
    expect(claims.auth_time).toBeUndefined();
  });

  it('leaves an audit event: the exchanger as actor, the user as subject, never a token', async () => {
    const s = await setup();
    const subject = await userTokens(s);
    const res = await exchange(s, ofSubject(subject.access_token, { resource: API })).expect(200);
    const { events } = await t.services.audit.list({ platformId: s.platform.id, kind: 'token.exchanged' }, 10);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actorType: 'client',
      actorId: s.exchanger.id,
      clientId: s.exchanger.id,
      subject: s.user.id,
      details: {
        sub: s.user.id,
        subject_client_id: s.app.id,
        audience: [API],
        scope: 'orders:read',
        jti: jwtPayload(res.body.access_token).jti,
      },
    });
    expect(JSON.stringify(events[0])).not.toContain(subject.access_token);
  });
});

describe('token exchange: delegation with an actor token', () => {
  it('the actor token yields act: { sub: <actor> }; introspection reports it', async () => {
    const s = await setup();
    const subject = await userTokens(s);
    const actor = await clientToken(s, s.exchanger);
    const res = await exchange(
      s,
      ofSubject(subject.access_token, { resource: API, actor_token: actor, actor_token_type: ACCESS }),
    ).expect(200);
    const claims = jwtPayload(res.body.access_token);
    expect(claims).toMatchObject({ sub: s.user.id, client_id: s.exchanger.id, act: { sub: s.exchanger.id } });
    expect((await introspect(s, res.body.access_token).expect(200)).body).toMatchObject({
      active: true,
      sub: s.user.id,
      client_id: s.exchanger.id,
      aud: API,
      act: { sub: s.exchanger.id },
    });
  });

  it("nests: the subject's earlier actors stay inside, and an actor token's own act goes under its sub", async () => {
    const s = await setup();
    const second = await buildClient(t.services, s.platform.id, {
      name: 'Calendar backend',
      grantTypes: [TOKEN_EXCHANGE_GRANT, 'client_credentials'],
      tokenExchangeResources: [API, MCP],
    });
    const subject = await userTokens(s);
    const viaFirst = (
      await exchange(
        s,
        ofSubject(subject.access_token, {
          resource: API,
          actor_token: await clientToken(s, s.exchanger),
          actor_token_type: ACCESS,
        }),
      ).expect(200)
    ).body.access_token;
    // The second backend acts on a token the first one acted on.
    const viaSecond = (
      await exchange(
        s,
        ofSubject(viaFirst, { resource: API, actor_token: await clientToken(s, second), actor_token_type: ACCESS }),
        second,
      ).expect(200)
    ).body.access_token;
    expect(jwtPayload(viaSecond)).toMatchObject({
      sub: s.user.id,
      client_id: second.id,
      act: { sub: second.id, act: { sub: s.exchanger.id } },
    });
    // Its own delegated token as actor token: the actor is the token's sub, acting through its act.
    const fresh = await userTokens(s);
    const nested = await exchange(
      s,
      ofSubject(fresh.access_token, { resource: API, actor_token: viaSecond, actor_token_type: ACCESS }),
      second,
    ).expect(200);
    expect(jwtPayload(nested.body.access_token).act).toEqual({
      sub: s.user.id,
      act: { sub: second.id, act: { sub: s.exchanger.id } },
    });
  });

  it('a chain of more than 5 actors is refused: invalid_request', async () => {
    const s = await setup();
    const actor = await clientToken(s, s.exchanger);
    let token = (await userTokens(s)).access_token;
    for (let i = 0; i < 5; i++) {
      const res = await exchange(
        s,
        ofSubject(token, { resource: API, actor_token: actor, actor_token_type: ACCESS }),
      ).expect(200);
      token = res.body.access_token;
    }
    const sixth = await exchange(s, ofSubject(token, { resource: API, actor_token: actor, actor_token_type: ACCESS }));
    expectOAuthError(sixth, 400, 'invalid_request');
  });
});

describe('token exchange: refused', () => {
  it('a client not allowed the grant: unauthorized_client', async () => {
    const s = await setup();
    const subject = await userTokens(s);
    expectOAuthError(
      await exchange(s, ofSubject(subject.access_token, { resource: API }), s.app),
      400,
      'unauthorized_client',
    );
  });

  it('a public client, even one whose stored grants name it: unauthorized_client', async () => {
    const s = await setup();
    const subject = await userTokens(s);
    const pub = await buildClient(t.services, s.platform.id, { type: 'public' });
    await clients.update(t.database.db, s.platform.id, pub.id, {
      grantTypes: [TOKEN_EXCHANGE_GRANT],
      tokenExchangeResources: [API],
    });
    const res = await request(t.app)
      .post(`${s.path}/token`)
      .type('form')
      .send({ grant_type: TOKEN_EXCHANGE_GRANT, client_id: pub.id, resource: API, ...ofSubject(subject.access_token) });
    expectOAuthError(res, 400, 'unauthorized_client');
  });

  it("no resource, an unknown one, or one outside the client's policy: invalid_target", async () => {
    const s = await setup();
    const { access_token } = await userTokens(s);
    expectOAuthError(await exchange(s, ofSubject(access_token)), 400, 'invalid_target');
    expectOAuthError(
      await exchange(s, ofSubject(access_token, { resource: 'https://nope.example/' })),
      400,
      'invalid_target',
    );
    expectOAuthError(await exchange(s, ofSubject(access_token, { audience: BILLING })), 400, 'invalid_target');
    expectOAuthError(await exchange(s, ofSubject(access_token, { resource: [API, BILLING] })), 400, 'invalid_target');
  });

  it('a scope the subject token lacks, or the resource does not define: invalid_scope', async () => {
    const s = await setup();
    const narrow = await userTokens(s, ['orders:read'], [{ uri: API, scopes: ['orders:read'] }]);
    expectOAuthError(
      await exchange(s, ofSubject(narrow.access_token, { resource: API, scope: 'orders:write' })),
      400,
      'invalid_scope',
    );
    const full = await userTokens(s);
    expectOAuthError(
      await exchange(s, ofSubject(full.access_token, { resource: API, scope: 'calendar' })),
      400,
      'invalid_scope',
    );
    expectOAuthError(
      await exchange(s, ofSubject(full.access_token, { resource: API, scope: 'openid' })),
      400,
      'invalid_scope',
    );
    // No scope asked, and none of the calendar's held by the subject token.
    expectOAuthError(await exchange(s, ofSubject(narrow.access_token, { resource: MCP })), 400, 'invalid_scope');
  });

  it('a subject token type other than access_token, or none: invalid_request', async () => {
    const s = await setup();
    const { access_token, refresh_token, id_token } = await userTokens(s);
    for (const type of [
      'urn:ietf:params:oauth:token-type:refresh_token',
      'urn:ietf:params:oauth:token-type:id_token',
      'urn:ietf:params:oauth:token-type:jwt',
    ]) {
      const res = await exchange(s, { subject_token: access_token, subject_token_type: type, resource: API });
      expectOAuthError(res, 400, 'invalid_request');
    }
    expectOAuthError(await exchange(s, { subject_token: access_token, resource: API }), 400, 'invalid_request');
    expectOAuthError(await exchange(s, { subject_token_type: ACCESS, resource: API }), 400, 'invalid_request');
    // Called an access token, but a refresh token or an ID token: not one.
    expectOAuthError(await exchange(s, ofSubject(refresh_token!, { resource: API })), 400, 'invalid_grant');
    expectOAuthError(await exchange(s, ofSubject(id_token!, { resource: API })), 400, 'invalid_grant');
    expectOAuthError(
      await exchange(
        s,
        ofSubject(access_token, {
          resource: API,
          requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
        }),
      ),
      400,
      'invalid_request',
    );
  });

  it('a subject token of another platform: invalid_grant', async () => {
    const s = await setup();
    const other = await setup();
    const foreign = await userTokens(other);
    expectOAuthError(await exchange(s, ofSubject(foreign.access_token, { resource: API })), 400, 'invalid_grant');
  });

  it('a revoked subject token: invalid_grant', async () => {
    const s = await setup();
    const { access_token } = await userTokens(s);
    await request(t.app)
      .post(`${s.path}/revoke`)
      .set('Authorization', basic(s.app))
      .type('form')
      .send({ token: access_token })
      .expect(200);
    expectOAuthError(await exchange(s, ofSubject(access_token, { resource: API })), 400, 'invalid_grant');
  });

  it('an expired subject token: invalid_grant', async () => {
    const s = await setup();
    offsetMs = -3_600_000; // issued an hour ago, for 600 s
    let expired: string;
    try {
      expired = (await userTokens(s)).access_token;
    } finally {
      offsetMs = 0;
    }
    expectOAuthError(await exchange(s, ofSubject(expired, { resource: API })), 400, 'invalid_grant');
  });

  it('actor_token without its type, of another type, revoked, or issued to another client', async () => {
    const s = await setup();
    const { access_token } = await userTokens(s);
    const actor = await clientToken(s, s.exchanger);
    expectOAuthError(
      await exchange(s, ofSubject(access_token, { resource: API, actor_token: actor })),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await exchange(s, ofSubject(access_token, { resource: API, actor_token_type: ACCESS })),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await exchange(
        s,
        ofSubject(access_token, {
          resource: API,
          actor_token: actor,
          actor_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        }),
      ),
      400,
      'invalid_request',
    );
    const someoneElses = await clientToken(
      s,
      await buildClient(t.services, s.platform.id, { grantTypes: ['client_credentials'] }),
    );
    expectOAuthError(
      await exchange(
        s,
        ofSubject(access_token, { resource: API, actor_token: someoneElses, actor_token_type: ACCESS }),
      ),
      400,
      'invalid_request',
    );
    await request(t.app)
      .post(`${s.path}/revoke`)
      .set('Authorization', basic(s.exchanger))
      .type('form')
      .send({ token: actor })
      .expect(200);
    expectOAuthError(
      await exchange(s, ofSubject(access_token, { resource: API, actor_token: actor, actor_token_type: ACCESS })),
      400,
      'invalid_grant',
    );
  });

  it('a seed platform knows no such grant: unsupported_grant_type', async () => {
    const platform = await buildPlatform(t.services);
    const client = await buildClient(t.services, platform.id);
    const res = await request(t.app).post('/oauth/token').set('Authorization', basic(client)).type('form').send({
      grant_type: TOKEN_EXCHANGE_GRANT,
      platform_guid: platform.id,
      subject_token: 'x',
      subject_token_type: ACCESS,
    });
    expectOAuthError(res, 400, 'unsupported_grant_type');
  });
});

describe('an exchanged token after issuance', () => {
  it('dies when its subject token is revoked, and so does a token exchanged from it', async () => {
    const s = await setup();
    const subject = await userTokens(s);
    const first = (await exchange(s, ofSubject(subject.access_token, { resource: API })).expect(200)).body.access_token;
    const second = (await exchange(s, ofSubject(first, { resource: API })).expect(200)).body.access_token;
    expect((await introspect(s, second).expect(200)).body.active).toBe(true);
    await request(t.app)
      .post(`${s.path}/revoke`)
      .set('Authorization', basic(s.app))
      .type('form')
      .send({ token: subject.access_token })
      .expect(200);
    expect((await introspect(s, first).expect(200)).body).toEqual({ active: false });
    expect((await introspect(s, second).expect(200)).body).toEqual({ active: false });
  });

  it("dies with the subject's refresh family (the refresh token revoked)", async () => {
    const s = await setup();
    const subject = await userTokens(s);
    const exchanged = (await exchange(s, ofSubject(subject.access_token, { resource: API })).expect(200)).body
      .access_token;
    await request(t.app)
      .post(`${s.path}/revoke`)
      .set('Authorization', basic(s.app))
      .type('form')
      .send({ token: subject.refresh_token })
      .expect(200);
    expect((await introspect(s, exchanged).expect(200)).body).toEqual({ active: false });
  });

  it("goes when the subject token's client is deleted, even without a refresh family", async () => {
    const s = await setup();
    const subject = await userTokens(s, ['orders:read'], [{ uri: API, scopes: ['orders:read'] }]);
    expect(subject.refresh_token).toBeUndefined();
    const exchanged = (await exchange(s, ofSubject(subject.access_token, { resource: API })).expect(200)).body
      .access_token;
    await t.services.admin.clients.delete(cliActor(), s.platform.id, s.app.id);
    expect((await introspect(s, exchanged).expect(200)).body).toEqual({ active: false });
  });

  it('revoking it leaves its subject token live; userinfo refuses it without openid', async () => {
    const s = await setup();
    const subject = await userTokens(s);
    const exchanged = (await exchange(s, ofSubject(subject.access_token, { resource: API })).expect(200)).body
      .access_token;
    const userinfo = await request(t.app).get(`${s.path}/userinfo`).set('Authorization', `Bearer ${exchanged}`);
    expect(userinfo.status).toBe(403);
    expect(userinfo.body.error).toBe('insufficient_scope');
    await request(t.app)
      .post(`${s.path}/revoke`)
      .set('Authorization', basic(s.exchanger))
      .type('form')
      .send({ token: exchanged })
      .expect(200);
    expect((await introspect(s, exchanged).expect(200)).body).toEqual({ active: false });
    expect((await introspect(s, subject.access_token, s.app).expect(200)).body.active).toBe(true);
  });
});
