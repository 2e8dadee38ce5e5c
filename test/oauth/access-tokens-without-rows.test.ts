import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { decodeJwt } from 'jose';
import { buildTestApp } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';
import { asClient, tokensForCode } from '../support/code-tokens';
import { eventually } from '../support/eventually';
import { digest } from '../../src/crypto/digest';
import { randomToken } from '../../src/crypto/random';
import { seedAccessTokenClaims } from '../../src/domain/access-token-claims';
import { cliActor } from '../../src/domain/admin';
import { issuerOf } from '../../src/domain/platform';

// Access tokens have no row of their own (docs/decisions.md, "Access tokens without a row"): each
// lives by the grant its jti names. These show what that promises: no row per token, each grant's
// end ending its tokens, a disable ending them for good, and tokens issued by an earlier version
// (with a row) honoured until they expire.
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const BASE = 'http://issuer.test';

async function tenant() {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;

const exchange = (ten: Tenant, scopes: string[]) => tokensForCode(t.app, t.services, { ...ten, scopes });
const revoke = (ten: Tenant, token: string) => asClient(t.app, 'revoke', ten, token);

const userinfo = (p: { id: string }, token: string) =>
  request(t.app).get(`/oauth/userinfo?platform_guid=${p.id}`).set('Authorization', `Bearer ${token}`);
const introspect = async (ten: Tenant, token: string) => (await asClient(t.app, 'introspect', ten, token)).body;

describe('access tokens without a row', () => {
  it('a grant writes no access-token row; the jti names the grant: the family, else the code', async () => {
    const ten = await tenant();
    const before = Number((await t.database.db('access_tokens').count({ n: '*' }).first())!.n);
    const offline = await exchange(ten, ['openid', 'offline_access']);
    const online = await exchange(ten, ['openid']);
    expect(Number((await t.database.db('access_tokens').count({ n: '*' }).first())!.n)).toBe(before);

    const [family] = await t.database.db('refresh_token_families').where({ client_id: ten.c.id }).pluck('id');
    expect(decodeJwt(offline.access_token).jti).toMatch(new RegExp(`^g${family}\\.[A-Za-z0-9_-]{22}$`));
    const [code] = await t.database
      .db('authorization_codes')
      .where({ client_id: ten.c.id })
      .whereNotIn('id', [(await t.database.db('refresh_token_families').where({ id: family }).first()).code_id])
      .pluck('id');
    expect(decodeJwt(online.access_token).jti).toMatch(new RegExp(`^a${code}\\.`));
    // Introspection reads iat, scope and expiry from the verified token.
    const claims = decodeJwt(online.access_token);
    expect(await introspect(ten, online.access_token)).toMatchObject({
      active: true,
      sub: ten.u.id,
      scope: 'openid',
      iat: claims.iat,
      exp: claims.exp,
    });
  });

  it("a disabled user's tokens stay dead once enabled again, whatever grant they live by", async () => {
    const ten = await tenant();
    const offline = await exchange(ten, ['openid', 'offline_access']);
    const online = await exchange(ten, ['openid']);
    for (const token of [offline.access_token, online.access_token])
      expect((await userinfo(ten.p, token)).status).toBe(200);
    await t.services.admin.users.disable(cliActor(), ten.p.id, ten.u.id);
    await t.services.admin.users.enable(cliActor(), ten.p.id, ten.u.id);
    for (const token of [offline.access_token, online.access_token]) {
      expect((await userinfo(ten.p, token)).status).toBe(401);
      expect(await introspect(ten, token)).toEqual({ active: false });
    }
    // A token issued after the enable lives.
    expect((await userinfo(ten.p, (await exchange(ten, ['openid'])).access_token)).status).toBe(200);
  });

  it('a replayed code ends the token its first exchange issued, without a refresh family too', async () => {
    const ten = await tenant();
    const code = await buildCode(t.services, { platformId: ten.p.id, client: ten.c, user: ten.u, scopes: ['openid'] });
    const send = () =>
      request(t.app)
        .post('/oauth/token')
        .auth(ten.c.id, ten.c.secret!)
        .type('form')
        .send({ grant_type: 'authorization_code', code, redirect_uri: ten.c.redirectUris[0], platform_guid: ten.p.id });
    const first = (await send().expect(200)).body;
    expect((await userinfo(ten.p, first.access_token)).status).toBe(200);
    expect((await send()).body.error).toBe('invalid_grant');
    expect((await userinfo(ten.p, first.access_token)).status).toBe(401);
  });

  it('a revoked token is denied until it would have expired (the purge lets the entry go then)', async () => {
    const ten = await tenant();
    const { access_token } = await exchange(ten, ['openid']);
    await revoke(ten, access_token);
    expect((await userinfo(ten.p, access_token)).status).toBe(401);
    const { jti, exp } = decodeJwt(access_token);
    expect(
      await t.database
        .db('revoked_access_tokens')
        .where({ jti_hash: digest(jti!) })
        .first(),
    ).toMatchObject({
      user_id: ten.u.id,
      expires_at: new Date(exp! * 1000),
    });
  });

  it('a token issued with a row (before this version) is honoured until it expires, and ends as it did', async () => {
    const ten = await tenant();
    const now = Math.floor(Date.now() / 1000);
    const platform = (await t.services.platforms.findPlatform(ten.p.id))!;
    const legacy = async (row: { family_id?: string; revoked_at?: Date }) => {
      const jti = randomToken(18); // the earlier ids: random, no dot
      await t.database.db('access_tokens').insert({
        jti_hash: digest(jti),
        platform_id: ten.p.id,
        client_id: ten.c.id,
        user_id: ten.u.id,
        scope: 'openid',
        expires_at: new Date((now + 3600) * 1000),
        ...row,
      });
      const claims = seedAccessTokenClaims({
        iss: issuerOf(BASE, platform),
        sub: ten.u.id,
        clientId: ten.c.id,
        audience: ten.c.id,
        scope: 'openid',
        jti,
        iat: now,
        exp: now + 3600,
      });
      return t.services.tokenSigner.signAccessToken(platform, claims);
    };
    const live = await legacy({});
    expect((await userinfo(ten.p, live)).status).toBe(200);
    expect((await userinfo(ten.p, await legacy({ revoked_at: new Date() }))).status).toBe(401);
    // One of a family: the family's revocation ends it.
    const familyId = randomUUID();
    await t.database.db('refresh_token_families').insert({
      id: familyId,
      platform_id: ten.p.id,
      client_id: ten.c.id,
      user_id: ten.u.id,
      scope: 'openid offline_access',
      auth_time: new Date(),
    });
    const ofFamily = await legacy({ family_id: familyId });
    expect((await userinfo(ten.p, ofFamily)).status).toBe(200);
    // Straight to the database, as another instance would: this one hears of it by NOTIFY.
    await t.database.db('refresh_token_families').where({ id: familyId }).update({ revoked_at: new Date() });
    expect(
      await eventually(
        async () => (await userinfo(ten.p, ofFamily)).status,
        (s) => s === 401,
      ),
    ).toBe(401);
    // RFC 7009 revocation of one.
    await revoke(ten, live);
    expect((await userinfo(ten.p, live)).status).toBe(401);
  });
});
