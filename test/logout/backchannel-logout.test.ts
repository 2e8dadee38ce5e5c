import { createHash } from 'node:crypto';
import * as jose from 'jose';
import { buildTestApp, TEST_MASTER_KEY } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { linkIn, waitForMail } from '../support/outbox';
import { authorizeQuery, exchange, inputValue, jwtPayload, pathOf, signInThrough } from '../support/account-flows';
import { ownDatabase } from '../mail/own-database';
import { cliActor } from '../../src/domain/admin';
import { createSidOf } from '../../src/services/session-id';
import {
  platformJwks,
  registerBackchannel,
  secretKey,
  startLogoutRp,
  verifyLogoutToken,
  type LogoutRp,
} from './backchannel-rp';

// OIDC Back-Channel Logout 1.0. Every sign-out reaches the apps its sign-in
// signed in to with a logout token, which a relying party verifies as it verifies ID tokens. The
// queue is this file's own (a database of its own): deliveries are driven here, round by round.
let own: Awaited<ReturnType<typeof ownDatabase>>;
let t: Awaited<ReturnType<typeof buildTestApp>>;
let rp: LogoutRp;

beforeAll(async () => {
  own = await ownDatabase();
  t = await buildTestApp({ DATABASE_URL: own.url }, undefined, { mailWorker: true }); // password reset mails
  rp = await startLogoutRp();
});
afterAll(async () => {
  await t?.close();
  await rp?.close();
  await own?.drop();
});

const ISSUER = 'http://issuer.test';
const sidOf = createSidOf(TEST_MASTER_KEY);
const email = () => `bcl-${Math.random().toString(36).slice(2, 10)}@example.com`;
const deliver = () => t.services.backchannelLogout.deliverDue({ batchSize: 100 });
const verifier = 'v'.repeat(50);
const pkce = {
  code_challenge: createHash('sha256').update(verifier).digest('base64url'),
  code_challenge_method: 'S256',
};

async function tenant(profile: 'seed' | 'standard' = 'seed') {
  const p =
    profile === 'seed'
      ? await buildPlatform(t.services)
      : (await t.services.platforms.createPlatform(`Standard ${email()}`, undefined, 'standard')).platform;
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id, { email: email() });
  return { p, c, u, uri: await registerBackchannel(t.services, rp, c) };
}

/** The sign-in session row a code left behind (session_clients): its sid and browser id. */
async function sessionOf(userId: string, clientId: string): Promise<{ sid: string; browser_session_id: string }> {
  const row = await t.database.db('session_clients').where({ user_id: userId, client_id: clientId }).first();
  expect(row).toBeDefined();
  expect(row.sid).toBe(sidOf(row.browser_session_id, userId));
  return row;
}

type Alg = 'HS512' | 'RS256' | 'ES256' | 'EdDSA';

/**
 * Verifies a logout token as the client's relying party verifies its ID tokens: HS512 under the
 * client secret (seed confidential clients; standard clients registered for HS512), else from the
 * platform's published JWKS; `iss` as the platform's profile has it.
 */
async function verifyAsClient(
  token: string,
  p: { id: string; signingProfile: string },
  client: { id: string; secret: string | null },
  alg: Alg = p.signingProfile === 'standard' ? 'RS256' : 'HS512',
) {
  const key = alg === 'HS512' ? secretKey(client.secret!) : await platformJwks(t.app, p.id);
  const issuer = p.signingProfile === 'standard' ? `${ISSUER}/platforms/${p.id}` : ISSUER;
  return verifyLogoutToken(token, key, { issuer, audience: client.id, algorithms: [alg] });
}

/** The sids of every sign-in of the user (one per browser) that reached an app. */
const sidsOf = async (userId: string) =>
  (await t.database.db('session_clients').where({ user_id: userId })).map((r: { sid: string }) => r.sid).sort();

/** The forgotten-password flow in a browser of its own: the mail's link, then the new password. */
async function resetPassword(p: { id: string }, u: { email: string }) {
  const b = browser(t.app);
  await b.get(`/password/forgot?platform_guid=${p.id}`);
  await b.submit(`/password/forgot?platform_guid=${p.id}`, { email: u.email });
  await b.get(pathOf(linkIn(await waitForMail(t.config.dataDir, u.email, /Reset your/), '/password/reset')));
  await b.submit(`/password/reset?platform_guid=${p.id}`, {
    token: inputValue(b.html, 'token')!,
    password: 'a brand new pass phrase',
  });
}

async function accountSignOut(b: ReturnType<typeof browser>, p: { id: string }, userId: string) {
  await b.get(`/account?platform_guid=${p.id}`);
  const done = await b.submit(`/account/signout?platform_guid=${p.id}`, { account: userId });
  expect(b.pageTitle()).toBe('You are signed out');
  return done;
}

describe('back-channel logout: what a relying party receives', () => {
  it("account page sign-out: one form POST of an HS512 logout token under the confidential client's secret (seed), with sid and sub", async () => {
    const { p, c, u, uri } = await tenant();
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const session = await sessionOf(u.id, c.id);
    await accountSignOut(b, p, u.id);
    expect(rp.to(uri)).toHaveLength(0); // nothing is sent inside the request: the worker sends it

    expect(await deliver()).toMatchObject({ delivered: 1 });
    const [post] = rp.to(uri);
    expect(post.contentType).toBe('application/x-www-form-urlencoded');
    expect(Object.keys(post.params)).toEqual(['logout_token']);
    const { header, claims } = await verifyLogoutToken(post.logoutToken, secretKey(c.secret!), {
      issuer: ISSUER,
      audience: c.id,
      algorithms: ['HS512'],
    });
    expect(header).toEqual({ alg: 'HS512', typ: 'logout+jwt' }); // keyed by the secret: no kid
    expect(claims).toMatchObject({ sub: u.id, sid: session.sid });
    expect(claims.sid).toBe(jwtPayload(tokens.id_token).sid); // the sid the app learned from its ID token
    expect(Object.keys(claims).sort()).toEqual(['aud', 'events', 'exp', 'iat', 'iss', 'jti', 'sid', 'sub']);

    // Delivered once: the row is done and the session forgotten.
    expect(await deliver()).toMatchObject({ claimed: 0 });
    expect(rp.to(uri)).toHaveLength(1);
    expect(await t.services.backchannelLogout.listForClient(c.id)).toEqual([
      expect.objectContaining({ status: 'delivered', attempts: 1, sid: session.sid, lastError: null }),
    ]);
    expect(await t.database.db('session_clients').where({ user_id: u.id })).toHaveLength(0);
  });

  it('seed public client: signed with the platform key, kid in the header', async () => {
    const { p, u } = await tenant();
    const pub = await buildClient(t.services, p.id, { type: 'public' });
    const uri = await registerBackchannel(t.services, rp, pub);
    const b = browser(t.app);
    await signInThrough(b, p, pub, u.email, undefined, pkce);
    const session = await sessionOf(u.id, pub.id);
    await accountSignOut(b, p, u.id);
    await deliver();
    const [post] = rp.to(uri);
    const key = await t.services.signingKeys.activeKey(p.id);
    const { header, claims } = await verifyLogoutToken(post.logoutToken, key.secret, {
      issuer: ISSUER,
      audience: pub.id,
      algorithms: ['HS512'],
    });
    expect(header).toEqual({ alg: 'HS512', typ: 'logout+jwt', kid: key.kid });
    expect(claims).toMatchObject({ sub: u.id, sid: session.sid });
  });

  it("RP-initiated logout with id_token_hint: every app of that sign-in (the asking one too) gets a token with the same sid; another browser's apps get none", async () => {
    const { p, c, u, uri } = await tenant();
    const pub = await buildClient(t.services, p.id, { type: 'public' });
    const pubUri = await registerBackchannel(t.services, rp, pub);
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    await signInThrough(b, p, pub, u.email, undefined, pkce);
    const session = await sessionOf(u.id, c.id);
    const other = browser(t.app);
    await signInThrough(other, p, c, u.email); // the same user and app in another browser stays signed in

    const res = await b.get(
      `/oauth/logout?${new URLSearchParams({ platform_guid: p.id, id_token_hint: tokens.id_token })}`,
    );
    expect(res.res.status).toBe(200);
    expect(await deliver()).toMatchObject({ delivered: 2, retrying: 0, failed: 0 });
    expect(rp.to(uri)).toHaveLength(1);
    expect(rp.to(pubUri)).toHaveLength(1);
    const confidential = await verifyLogoutToken(rp.to(uri)[0].logoutToken, secretKey(c.secret!), {
      issuer: ISSUER,
      audience: c.id,
      algorithms: ['HS512'],
    });
    const key = await t.services.signingKeys.activeKey(p.id);
    const publicOne = await verifyLogoutToken(rp.to(pubUri)[0].logoutToken, key.secret, {
      issuer: ISSUER,
      audience: pub.id,
      algorithms: ['HS512'],
    });
    expect(confidential.claims.sid).toBe(session.sid);
    expect(publicOne.claims.sid).toBe(session.sid);
    expect(confidential.claims.jti).not.toBe(publicOne.claims.jti);
    // The other browser's sign-in is still known (its own sid), ready for its own sign-out.
    const left = await t.database.db('session_clients').where({ user_id: u.id });
    expect(left.map((r: { sid: string }) => r.sid)).toEqual([expect.not.stringMatching(session.sid)]);
  });

  it('the chooser\'s "Sign out" reaches the account\'s apps of this browser', async () => {
    const { p, c, u, uri } = await tenant();
    const b = browser(t.app);
    await signInThrough(b, p, c, u.email);
    const session = await sessionOf(u.id, c.id);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'select_account' })}`);
    expect(b.pageTitle()).toBe('Choose an account');
    await b.submit('/chooser', { signout: u.id });
    expect(await deliver()).toMatchObject({ delivered: 1 });
    const { claims } = await verifyLogoutToken(rp.to(uri)[0].logoutToken, secretKey(c.secret!), {
      issuer: ISSUER,
      audience: c.id,
      algorithms: ['HS512'],
    });
    expect(claims).toMatchObject({ sub: u.id, sid: session.sid });
  });

  it.each(['seed', 'standard'] as const)(
    "password reset (%s): every browser's sign-in gets a token, each with its own sid, signed like the client's ID tokens",
    async (profile) => {
      const { p, c, u, uri } = await tenant(profile);
      const one = browser(t.app);
      const two = browser(t.app);
      await signInThrough(one, p, c, u.email);
      await signInThrough(two, p, c, u.email);
      const sids = await sidsOf(u.id);
      expect(sids).toHaveLength(2);

      await resetPassword(p, u);
      expect(rp.to(uri)).toHaveLength(0);

      expect(await deliver()).toMatchObject({ delivered: 2 });
      const got = await Promise.all(rp.to(uri).map((r) => verifyAsClient(r.logoutToken, p, c)));
      expect(got.map((g) => g.claims.sid).sort()).toEqual(sids);
      expect(got.every((g) => g.claims.sub === u.id)).toBe(true);
    },
  );

  it.each(['seed', 'standard'] as const)(
    "password change on the account page (%s): every sign-in of the user, this browser's too, gets a token",
    async (profile) => {
      const { p, c, u, uri } = await tenant(profile);
      const b = browser(t.app);
      const other = browser(t.app);
      await signInThrough(b, p, c, u.email);
      await signInThrough(other, p, c, u.email);
      const sids = await sidsOf(u.id);
      expect(sids).toHaveLength(2);

      await b.get(`/account?platform_guid=${p.id}&section=security`);
      await b.submit(`/account/password?platform_guid=${p.id}`, {
        account: u.id,
        current_password: TEST_PASSWORD,
        new_password: 'a brand new pass phrase',
      });
      expect(b.html).toContain('Your password has been changed');
      expect(rp.to(uri)).toHaveLength(0);

      expect(await deliver()).toMatchObject({ delivered: 2 });
      const got = await Promise.all(rp.to(uri).map((r) => verifyAsClient(r.logoutToken, p, c)));
      expect(got.map((g) => g.claims.sid).sort()).toEqual(sids);
      expect(got.every((g) => g.claims.sub === u.id)).toBe(true);
    },
  );

  it('sign out everywhere on the account page, and the admin sign-out, disable and delete, reach the app', async () => {
    const { p, c, uri } = await tenant();
    const cases: [string, (userId: string) => Promise<unknown>][] = [
      ['sign out everywhere', async () => undefined], // done through the page below
      ['admin sign-out', (sub) => t.services.admin.users.signOut(cliActor(), p.id, sub)],
      ['admin disable', (sub) => t.services.admin.users.disable(cliActor(), p.id, sub)],
      ['admin delete', (sub) => t.services.admin.users.remove(cliActor(), p.id, sub)],
    ];
    for (const [what, act] of cases) {
      const u = await buildUser(t.services, p.id, { email: email() });
      const b = browser(t.app);
      await signInThrough(b, p, c, u.email);
      const session = await sessionOf(u.id, c.id);
      if (what === 'sign out everywhere') {
        await b.get(`/account?platform_guid=${p.id}&section=security`);
        await b.submit(`/account/signout-everywhere?platform_guid=${p.id}`, { account: u.id });
      } else await act(u.id);
      const before = rp.to(uri).length;
      expect({ what, round: await deliver() }).toMatchObject({ what, round: { delivered: 1 } });
      const post = rp.to(uri)[before];
      const { claims } = await verifyLogoutToken(post.logoutToken, secretKey(c.secret!), {
        issuer: ISSUER,
        audience: c.id,
        algorithms: ['HS512'],
      });
      expect({ what, sub: claims.sub, sid: claims.sid }).toEqual({ what, sub: u.id, sid: session.sid });
    }
  });

  it("standard platform: tokens signed like the client's ID tokens, verified from the JWKS (RS256, ES256, EdDSA) or the secret (HS512), iss per platform", async () => {
    const { p, c, u, uri } = await tenant('standard');
    const clients: Array<{ client: typeof c; uri: string; alg: Alg }> = [{ client: c, uri, alg: 'RS256' }];
    for (const alg of ['ES256', 'EdDSA', 'HS512'] as const) {
      const client = await buildClient(t.services, p.id, { idTokenSignedResponseAlg: alg } as object);
      await t.database.db('clients').where({ id: client.id }).update({ id_token_signed_response_alg: alg });
      clients.push({ client, uri: await registerBackchannel(t.services, rp, client), alg });
    }
    const b = browser(t.app);
    for (const { client } of clients) await signInThrough(b, p, client, u.email);
    const session = await sessionOf(u.id, c.id);
    await accountSignOut(b, p, u.id);
    expect(await deliver()).toMatchObject({ delivered: 4 });

    for (const { client, uri: to, alg } of clients) {
      const [post] = rp.to(to);
      const { header, claims } = await verifyAsClient(post.logoutToken, p, client, alg);
      expect({ alg: header.alg, kid: typeof header.kid }).toEqual({
        alg,
        kid: alg === 'HS512' ? 'undefined' : 'string',
      });
      expect(claims).toMatchObject({ sub: u.id, sid: session.sid });
      // The seed profile's keys do not verify it.
      await expect(
        jose.jwtVerify(post.logoutToken, (await t.services.signingKeys.activeKey(p.id)).secret),
      ).rejects.toThrow();
    }
  });
  it('standard platform, RP-initiated logout with an RS256 id_token_hint: the asking app and the other app of the sign-in get tokens verified from the JWKS', async () => {
    const { p, c, u, uri } = await tenant('standard');
    const pub = await buildClient(t.services, p.id, { type: 'public' });
    const pubUri = await registerBackchannel(t.services, rp, pub);
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    expect(jose.decodeProtectedHeader(tokens.id_token).alg).toBe('RS256'); // the hint is the standard ID token
    await signInThrough(b, p, pub, u.email, undefined, pkce);
    const session = await sessionOf(u.id, c.id);

    const res = await b.get(
      `/oauth/logout?${new URLSearchParams({ platform_guid: p.id, id_token_hint: tokens.id_token })}`,
    );
    expect(res.res.status).toBe(200);
    expect(await deliver()).toMatchObject({ delivered: 2, retrying: 0, failed: 0 });
    for (const [client, to] of [
      [c, uri],
      [pub, pubUri],
    ] as const) {
      expect(rp.to(to)).toHaveLength(1);
      const { header, claims } = await verifyAsClient(rp.to(to)[0].logoutToken, p, client);
      expect(header).toEqual({ alg: 'RS256', typ: 'logout+jwt', kid: expect.any(String) });
      expect(claims).toMatchObject({ sub: u.id, sid: session.sid });
    }
    expect(await t.database.db('session_clients').where({ user_id: u.id })).toHaveLength(0);
  });
});

describe('back-channel logout: who gets a token', () => {
  it('apps without a backchannel_logout_uri get nothing; only the apps of the ended sign-in do', async () => {
    const { p, c, u, uri } = await tenant();
    const silent = await buildClient(t.services, p.id);
    const b = browser(t.app);
    await signInThrough(b, p, c, u.email);
    await signInThrough(b, p, silent, u.email);
    await accountSignOut(b, p, u.id);
    const rows = await t.database.db('backchannel_logouts').where({ user_id: u.id });
    expect(rows.map((r: { client_id: string }) => r.client_id)).toEqual([c.id]);
    await deliver();
    expect(rp.to(uri)).toHaveLength(1);
  });

  it('an app holding a refresh token of an unknown sign-in gets a sub-only token, unless it requires a sid (backchannel_logout_session_required)', async () => {
    const { p, c, u, uri } = await tenant();
    const strict = await buildClient(t.services, p.id);
    const strictUri = await registerBackchannel(t.services, rp, strict, true);
    const b = browser(t.app);
    await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    await exchange(t.app, p, strict, await signInThrough(b, p, strict, u.email));
    // Sign-ins from before sign-in sessions were recorded: no session row, no browser id on the token.
    await t.database.db('session_clients').where({ user_id: u.id }).del();
    await t.database.db('refresh_token_families').where({ user_id: u.id }).update({ browser_session_id: null });

    await t.services.admin.users.signOut(cliActor(), p.id, u.id);
    expect(await deliver()).toMatchObject({ delivered: 1 });
    expect(rp.to(strictUri)).toHaveLength(0);
    const { claims } = await verifyLogoutToken(rp.to(uri)[0].logoutToken, secretKey(c.secret!), {
      issuer: ISSUER,
      audience: c.id,
      algorithms: ['HS512'],
    });
    expect(claims.sub).toBe(u.id);
    expect(claims).not.toHaveProperty('sid');
  });

  it("an app signed in through a browser but with no session row (older sign-in) gets that browser's sid from its refresh token", async () => {
    const { p, c, u, uri } = await tenant();
    const strict = await buildClient(t.services, p.id);
    const strictUri = await registerBackchannel(t.services, rp, strict, true);
    const b = browser(t.app);
    await exchange(t.app, p, strict, await signInThrough(b, p, strict, u.email));
    await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const session = await sessionOf(u.id, strict.id);
    await t.database.db('session_clients').where({ user_id: u.id }).del();

    await accountSignOut(b, p, u.id);
    expect(await deliver()).toMatchObject({ delivered: 2 });
    for (const [client, to] of [
      [strict, strictUri],
      [c, uri],
    ] as const) {
      const { claims } = await verifyLogoutToken(rp.to(to)[0].logoutToken, secretKey(client.secret!), {
        issuer: ISSUER,
        audience: client.id,
        algorithms: ['HS512'],
      });
      expect(claims).toMatchObject({ sub: u.id, sid: session.sid });
    }
  });

  it('a sign-out that fails leaves no delivery behind (same transaction)', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    await signInThrough(b, p, c, u.email);
    const session = await sessionOf(u.id, c.id);
    await expect(
      t.database.db.transaction(async (trx) => {
        await t.services.backchannelLogout.enqueueForSession(trx, p.id, u.id, session.browser_session_id);
        throw new Error('the sign-out failed after the enqueue');
      }),
    ).rejects.toThrow('the sign-out failed');
    expect(await t.database.db('backchannel_logouts').where({ user_id: u.id })).toHaveLength(0);
    expect(await t.database.db('session_clients').where({ user_id: u.id })).toHaveLength(1);
  });
});
