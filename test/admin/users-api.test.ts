import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { basic, exchange, refresh, signInThrough, userinfo, authorizeQuery } from '../support/account-flows';
import { createCredential, getAssertion } from '../support/soft-authenticator';
import { runCommand } from '../../src/cli/commands';
import * as mfa from '../../src/repositories/mfa.repository';
import { adminClient, adminToken } from './admin-api-client';

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let t: TestApp;
let global: ReturnType<typeof adminClient>;
beforeAll(async () => {
  t = await buildTestApp();
  global = adminClient(t.app, await adminToken(t.services));
});
afterAll(() => t.close());

const message = (html: string) => /role="alert"[^>]*>\s*<p>([^<]+)/.exec(html)?.[1];
const usersOf = (p: { id: string }) => `/platforms/${p.id}/users`;

async function setup() {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}

/** Signs in through the hosted pages and exchanges the code: live access and refresh tokens. */
async function signedIn(p: { id: string }, c: Awaited<ReturnType<typeof buildClient>>, email: string) {
  const b = browser(t.app);
  const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, email));
  return { b, tokens };
}

async function lastEvents(platformId: string, n = 5) {
  return (await t.services.audit.list({ platformId }, n)).events;
}

describe('admin API: users', () => {
  it('creates with the sign-up rules, shows the claims (never the hash), searches by part of the email, pages, updates; all audited', async () => {
    const p = await buildPlatform(t.services);
    const created = await global.post(usersOf(p), {
      email: 'Grace.Hopper@Navy.example',
      password: 'a sound passphrase 42',
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '+1 415 555 0123',
      email_verified: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      email: 'Grace.Hopper@Navy.example',
      email_verified: true,
      given_name: 'Grace',
      preferred_username: 'grace.hopper',
      phone_number: '+14155550123',
      disabled_at: null,
      mfa: { totp: false, recovery_codes: 0, passkeys: 0 },
    });
    expect(JSON.stringify(created.body)).not.toMatch(/argon|password/i);
    const sub = created.body.sub;
    expect((await global.get(`${usersOf(p)}/${sub}`)).body.email).toBe('Grace.Hopper@Navy.example');
    await buildUser(t.services, p.id, { email: 'ada@lovelace.example' });
    await buildUser(t.services, p.id, { email: 'charles@babbage.example' });

    const byDomain = await global.get(`${usersOf(p)}?email=NAVY.example`);
    expect(byDomain.body.items.map((u: { sub: string }) => u.sub)).toEqual([sub]);
    expect((await global.get(`${usersOf(p)}?email=grace`)).body.items).toHaveLength(1);
    expect((await global.get(`${usersOf(p)}?email=%25`)).body.items).toHaveLength(0); // LIKE wildcards are literal
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await global.get(`${usersOf(p)}?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.items.map((u: { email: string }) => u.email));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['Grace.Hopper@Navy.example', 'ada@lovelace.example', 'charles@babbage.example']);

    const updated = await global.patch(`${usersOf(p)}/${sub}`, {
      given_name: 'Amazing Grace',
      nickname: 'Amazing',
      address: { street_address: '1 Navy Way', locality: 'Arlington', country: 'us' },
      email: 'grace@navy.example',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      given_name: 'Amazing Grace',
      nickname: 'Amazing',
      email: 'grace@navy.example',
      email_verified: false,
      family_name: 'Hopper',
      address: { street_address: '1 Navy Way', locality: 'Arlington', country: 'US' },
    });
    expect(updated.body.address.formatted).toContain('1 Navy Way');
    const cleared = await global.patch(`${usersOf(p)}/${sub}`, {
      nickname: null,
      address: null,
      phone_number: null,
      email_verified: true,
    });
    expect(cleared.body).toMatchObject({ nickname: null, address: null, phone_number: null, email_verified: true });

    const events = await lastEvents(p.id, 10);
    expect(events.map((e) => e.kind)).toEqual(['user.updated', 'user.updated', 'user.created']);
    expect(events[1]).toMatchObject({
      actorType: 'admin_token',
      subject: sub,
      details: {
        given_name: { from: 'Grace', to: 'Amazing Grace' },
        nickname: { from: null, to: 'Amazing' },
        email: { from: 'Grace.Hopper@Navy.example', to: 'grace@navy.example' },
        email_verified: { from: true, to: false },
      },
    });
    expect(events[0].details).toMatchObject({
      nickname: { from: 'Amazing', to: null },
      email_verified: { from: false, to: true },
    });
    expect(events[2].details).toEqual({ email: 'Grace.Hopper@Navy.example', email_verified: true });
    expect(JSON.stringify(events)).not.toContain('a sound passphrase');
  });

  it('pages by the millisecond of creation, then id: users created within one millisecond are each listed once, in order', async () => {
    const p = await buildPlatform(t.services);
    const users = [];
    for (let i = 0; i < 6; i++) users.push(await buildUser(t.services, p.id));
    // Four users in one millisecond (microseconds apart, not in id order), one just before it, one just after.
    const at = ['00.123900', '00.123100', '00.124000', '00.123500', '00.122999', '00.123300'];
    for (const [i, u] of users.entries())
      await t.database
        .db('users')
        .where({ id: u.id })
        .update({ created_at: `2026-01-01T00:00:${at[i]}Z` });
    const sameMs = users.filter((_, i) => at[i].startsWith('00.123')).map((u) => u.id);
    const expected = [users[4].id, ...sameMs.sort(), users[2].id];

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await global.get(`${usersOf(p)}?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((u: { sub: string }) => u.sub));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(expected);
  });
  it('answers bad input with 400 naming the field, a taken email with 409, unknown users with 404', async () => {
    const { p, u } = await setup();
    const other = await buildUser(t.services, p.id);
    const bad = await global.post(usersOf(p), {
      email: 'not-an-email',
      password: 'short',
      given_name: ' ',
      family_name: 'X',
      birthdate: '2030-01-01',
    });
    expectOAuthError(bad, 400, 'invalid_request');
    for (const field of [
      'email: Enter a valid email address',
      'given_name: Enter your first name',
      'birthdate: Date of birth cannot be in the future',
      'password: Use at least',
    ]) {
      expect(bad.body.error_description).toContain(field);
    }
    expectOAuthError(await global.post(usersOf(p), { email: 'x@example.com' }), 400, 'invalid_request');
    const dup = await global.post(usersOf(p), {
      email: u.email.toUpperCase(),
      password: TEST_PASSWORD,
      given_name: 'A',
      family_name: 'B',
      birthdate: '1990-01-01',
    });
    expectOAuthError(dup, 409, 'invalid_request');
    expect(dup.body.error_description).toMatch(/^email: /);

    const path = `${usersOf(p)}/${u.id}`;
    const taken = await global.patch(path, { email: ` ${other.email.toUpperCase()} ` });
    expectOAuthError(taken, 409, 'invalid_request');
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ preferred_username: 'has space' }, /^preferred_username: A username cannot contain spaces/],
      [{ phone_number: '12' }, /^phone_number: Enter a valid phone number/],
      [{ address: { country: 'XX' } }, /^address\.country: Choose a country/],
      [{ birthdate: '1990-02-30' }, /^birthdate: Enter a real date of birth/],
      [{ email: 'nope' }, /^email: Enter a valid email address/],
      [{ given_name: '' }, /^given_name: Enter your first name/],
      [{ colour: 'red' }, /colour/],
      [{}, /at least one field/],
      [{ email_verified: 'yes' }, /^email_verified: /],
    ];
    for (const [body, expected] of cases) {
      const res = await global.patch(path, body);
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(expected);
    }
    expectOAuthError(await global.get(`${usersOf(p)}/not-a-uuid`), 400, 'invalid_request');
    expectOAuthError(await global.get(`${usersOf(p)}?limit=0`), 400, 'invalid_request');
    expectOAuthError(await global.get(`${usersOf(p)}/00000000-0000-4000-8000-000000000000`), 404, 'not_found');
    expectOAuthError(
      await global.post(`/platforms/00000000-0000-4000-8000-000000000000/users/${u.id}/disable`),
      404,
      'not_found',
    );
    expect((await lastEvents(p.id)).filter((e) => e.kind === 'user.updated')).toEqual([]);
  });

  it("a platform token sees and changes its own platform's users only: another platform's user is 404", async () => {
    const { p, u } = await setup();
    const theirs = await setup();
    const scoped = adminClient(t.app, await adminToken(t.services, p.id, 'platform token'));
    expect((await scoped.get(`${usersOf(p)}/${u.id}`)).status).toBe(200);
    expectOAuthError(await scoped.get(`${usersOf(theirs.p)}/${theirs.u.id}`), 404, 'not_found');
    expectOAuthError(await scoped.get(usersOf(theirs.p)), 404, 'not_found');
    expectOAuthError(await scoped.post(`${usersOf(theirs.p)}/${theirs.u.id}/disable`), 404, 'not_found');
    expectOAuthError(await scoped.delete(`${usersOf(theirs.p)}/${theirs.u.id}`), 404, 'not_found');
    // The other platform's user under this platform's path is unknown too.
    expectOAuthError(await scoped.get(`${usersOf(p)}/${theirs.u.id}`), 404, 'not_found');
    expect((await global.get(`${usersOf(theirs.p)}/${theirs.u.id}`)).body.disabled_at).toBeNull();
  });

  it('disable stops the password sign-in, refresh, userinfo and the browser session; enable lets the user sign in again', async () => {
    const { p, c, u } = await setup();
    const { b, tokens } = await signedIn(p, c, u.email);
    expect((await userinfo(t.app, p, tokens.access_token)).status).toBe(200);
    const introspect = async () =>
      (
        await request(t.app)
          .post('/oauth/introspect')
          .auth(c.id, c.secret!)
          .type('form')
          .send({ token: tokens.access_token, platform_guid: p.id })
      ).body.active;
    expect(await introspect()).toBe(true);
    const pendingCode = await buildCode(t.services, { platformId: p.id, client: c, user: u }); // issued, not yet exchanged
    const silent = () => b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect((await silent()).location).toContain('code='); // signed in: straight back to the app

    const disabled = await global.post(`${usersOf(p)}/${u.id}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body.disabled_at).not.toBeNull();
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({
      kind: 'user.disabled',
      subject: u.id,
      details: { email: u.email, refresh_tokens_revoked: 1 },
    });

    expect((await userinfo(t.app, p, tokens.access_token)).status).toBe(401);
    expect(await introspect()).toBe(false);
    const late = await request(t.app).post('/oauth/token').set('Authorization', basic(c)).type('form').send({
      grant_type: 'authorization_code',
      code: pendingCode,
      redirect_uri: c.redirectUris[0],
      platform_guid: p.id,
    });
    expect(late.body.error).toBe('invalid_grant');
    expect((await refresh(t.app, p, c, tokens.refresh_token!)).body.error).toBe('invalid_grant');
    // The browser that was signed in is asked to sign in again, and the right password fails like a wrong one.
    expect((await silent()).location).toContain('error=login_required');
    const fresh = browser(t.app);
    await fresh.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const refused = await fresh.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect([refused.res.status, message(refused.res.text)]).toEqual([400, 'Incorrect email or password.']);
    const failed = (await lastEvents(p.id, 3)).find((e) => e.kind === 'sign_in.failed');
    expect(failed?.details).toMatchObject({ reason: 'disabled' });
    // Disabling twice changes nothing and records nothing.
    await global.post(`${usersOf(p)}/${u.id}/disable`);
    expect((await lastEvents(p.id, 10)).filter((e) => e.kind === 'user.disabled')).toHaveLength(1);

    const enabled = await global.post(`${usersOf(p)}/${u.id}/enable`);
    expect(enabled.body.disabled_at).toBeNull();
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({ kind: 'user.enabled', subject: u.id });
    const again = await signedIn(p, c, u.email);
    expect((await userinfo(t.app, p, again.tokens.access_token)).status).toBe(200);
  });

  it('a disabled user cannot sign in with a passkey either (the generic failure, audited as disabled)', async () => {
    const BASE = 'http://localhost:4567'; // passkeys need a secure context: localhost
    const pk = await buildTestApp({ BASE_URL: BASE });
    try {
      const s = pk.services;
      const p = await buildPlatform(s);
      const u = await buildUser(s, p.id);
      const reg = await s.passkeys.registrationOptions(p, u);
      const { credential, json } = createCredential(reg, BASE, { uv: true });
      expect(
        await s.passkeys.register(p, u, { name: 'Key', credential: json, expectedChallenge: reg.challenge }),
      ).toMatchObject({ ok: true });
      const attempt = async () => {
        const options = await s.passkeys.authenticationOptions(p);
        return s.passkeys.authenticate(
          p,
          { credential: getAssertion(credential, options, BASE), expectedChallenge: options.challenge },
          { ctx: { actorType: 'user' }, platformId: p.id },
        );
      };
      expect(await attempt()).toMatchObject({ ok: true });
      await global.post(`${usersOf(p)}/${u.id}/disable`);
      expect(await attempt()).toEqual({ ok: false, message: 'security:passkeys.errors.failed' }); // a catalog key: the page translates it
      expect((await lastEvents(p.id, 1))[0]).toMatchObject({
        kind: 'sign_in.failed',
        subject: u.id,
        details: { method: 'passkey', reason: 'disabled' },
      });
      await global.post(`${usersOf(p)}/${u.id}/enable`);
      expect(await attempt()).toMatchObject({ ok: true });
    } finally {
      await pk.close();
    }
  });

  it('lists and revokes sessions and consents; sign-out ends every refresh family', async () => {
    const { p, c, u } = await setup();
    const c2 = await buildClient(t.services, p.id, { name: 'Second app' });
    const one = await signedIn(p, c, u.email);
    const two = await signedIn(p, c2, u.email);

    const sessions = await global.get(`${usersOf(p)}/${u.id}/sessions`);
    expect(sessions.body.items.map((s: { client_name: string }) => s.client_name).sort()).toEqual([
      'Second app',
      'Test app',
    ]);
    const first = sessions.body.items.find((s: { client_id: string }) => s.client_id === c.id);
    expect(first.scope).toContain('offline_access');
    const revoked = await global.delete(`${usersOf(p)}/${u.id}/sessions/${first.session_id}`);
    expect(revoked.body).toMatchObject({ sub: u.id, done: 'session_revoked' });
    expect((await refresh(t.app, p, c, one.tokens.refresh_token!)).body.error).toBe('invalid_grant');
    expect((await userinfo(t.app, p, one.tokens.access_token)).status).toBe(401);
    expectOAuthError(await global.delete(`${usersOf(p)}/${u.id}/sessions/${first.session_id}`), 404, 'not_found');
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({
      kind: 'user.session_revoked',
      clientId: c.id,
      details: { session_id: first.session_id },
    });

    const consents = await global.get(`${usersOf(p)}/${u.id}/consents`);
    expect(consents.body.items.map((x: { client_name: string }) => x.client_name).sort()).toEqual([
      'Second app',
      'Test app',
    ]);
    const withdrawn = await global.delete(`${usersOf(p)}/${u.id}/consents/${c2.id}`);
    expect(withdrawn.body).toMatchObject({ done: 'consent_revoked', refresh_tokens_revoked: 1 });
    expect((await refresh(t.app, p, c2, two.tokens.refresh_token!)).body.error).toBe('invalid_grant');
    expect(
      (await global.get(`${usersOf(p)}/${u.id}/consents`)).body.items.map((x: { client_id: string }) => x.client_id),
    ).toEqual([c.id]);
    expectOAuthError(await global.delete(`${usersOf(p)}/${u.id}/consents/${c2.id}`), 404, 'not_found');
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({ kind: 'user.consent_revoked', clientId: c2.id });

    const three = await signedIn(p, c, u.email);
    const out = await global.post(`${usersOf(p)}/${u.id}/sign-out`);
    expect(out.body).toMatchObject({ done: 'signed_out', refresh_tokens_revoked: 1 });
    expect((await refresh(t.app, p, c, three.tokens.refresh_token!)).body.error).toBe('invalid_grant');
    expect((await global.get(`${usersOf(p)}/${u.id}/sessions`)).body.items).toEqual([]);
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({
      kind: 'user.signed_out',
      details: { refresh_tokens_revoked: 1 },
    });
  });

  it('unlock lets a locked email sign in again', async () => {
    const { p, u } = await setup();
    for (let i = 0; i < 5; i++) await t.services.throttle.attemptSignIn(p.id, u.email, `wrong ${i}`, '198.51.100.9');
    expect(await t.services.throttle.attemptSignIn(p.id, u.email, TEST_PASSWORD, '198.51.100.9')).toMatchObject({
      ok: false,
    });
    const res = await global.post(`${usersOf(p)}/${u.id}/unlock`);
    expect(res.body).toMatchObject({ done: 'unlocked', throttles_cleared: 1 });
    expect(await t.services.throttle.attemptSignIn(p.id, u.email, TEST_PASSWORD, '198.51.100.9')).toMatchObject({
      ok: true,
    });
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({
      kind: 'user.unlocked',
      subject: u.id,
      details: { throttles_cleared: 1 },
    });
  });

  it('reset-mfa removes the authenticator app and recovery codes; password-reset queues the mail', async () => {
    const { p, u } = await setup();
    const db = t.services.deps.db;
    await mfa.upsertPendingTotp(db, u.id, 'sealed', new Date());
    await mfa.confirmTotp(db, u.id, 1, new Date());
    await mfa.replaceRecoveryCodes(
      db,
      u.id,
      [{ id: '00000000-0000-4000-8000-00000000000a', codeHash: 'h1' }],
      new Date(),
    );
    expect((await global.get(`${usersOf(p)}/${u.id}`)).body.mfa).toEqual({
      totp: true,
      recovery_codes: 1,
      passkeys: 0,
    });
    const reset = await global.post(`${usersOf(p)}/${u.id}/reset-mfa`);
    expect(reset.body).toEqual({ sub: u.id, done: 'mfa_reset', totp_removed: true, passkeys_removed: 0 });
    expect((await global.get(`${usersOf(p)}/${u.id}`)).body.mfa).toEqual({
      totp: false,
      recovery_codes: 0,
      passkeys: 0,
    });
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({
      kind: 'user.mfa_reset',
      details: { totp_removed: true, passkeys_removed: 0 },
    });

    const sent = await global.post(`${usersOf(p)}/${u.id}/password-reset`);
    expect(sent.body).toEqual({ sub: u.id, done: 'password_reset_sent' });
    const mails = await db('mail_outbox').where({ platform_id: p.id, recipient: u.email });
    expect(mails.map((m: { kind: string }) => m.kind)).toEqual(['reset_password']);
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({ kind: 'user.password_reset_sent', subject: u.id });
    expect(JSON.stringify(sent.body)).not.toMatch(/token=/);
  });

  it('delete removes the user and every row they own in one go; the audit trail keeps the email', async () => {
    const { p, c, u } = await setup();
    await signedIn(p, c, u.email); // code, family, refresh and access tokens, consent
    const db = t.services.deps.db;
    await mfa.upsertPendingTotp(db, u.id, 'sealed', new Date());
    await mfa.replaceRecoveryCodes(
      db,
      u.id,
      [{ id: '00000000-0000-4000-8000-00000000000b', codeHash: 'h2' }],
      new Date(),
    );
    await global.post(`${usersOf(p)}/${u.id}/password-reset`); // an account token and a mail
    await t.services.throttle.attemptSignIn(p.id, u.email, 'wrong', '198.51.100.10'); // a throttle key of the email
    const keys = async () => (await t.services.throttle.listThrottles({ platformId: p.id, email: u.email })).length;
    expect(await keys()).toBe(1);

    const res = await global.delete(`${usersOf(p)}/${u.id}`);
    expect(res.body).toEqual({ sub: u.id, email: u.email, deleted: true });
    for (const table of [
      'authorization_codes',
      'refresh_token_families',
      'consents',
      'user_totp',
      'user_recovery_codes',
      'webauthn_credentials',
      'account_tokens',
      'user_pictures',
    ]) {
      expect([table, (await db(table).where({ user_id: u.id })).length]).toEqual([table, 0]);
    }
    expect(await db('users').where({ id: u.id })).toEqual([]);
    expect(await db('mail_outbox').where({ platform_id: p.id, recipient: u.email })).toEqual([]);
    expect(await keys()).toBe(0);
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({
      kind: 'user.deleted',
      subject: u.id,
      details: { email: u.email },
    });
    expectOAuthError(await global.get(`${usersOf(p)}/${u.id}`), 404, 'not_found');
  });
});

describe('admin CLI: user', () => {
  const run = (...argv: string[]) => runCommand(t.services, argv);

  it('every verb answers with the API shape and the same validation messages', async () => {
    const { p, c, u } = await setup();
    const created = await run(
      'user',
      'create',
      '--platform',
      p.id,
      '--email',
      'cli@example.com',
      '--password',
      TEST_PASSWORD,
      '--given-name',
      'Cli',
      '--family-name',
      'User',
      '--birthdate',
      '1990-01-01',
    );
    expect(created).toMatchObject({
      sub: expect.any(String),
      email: 'cli@example.com',
      preferred_username: 'cli.user',
    });
    const listed = await run('user', 'search', '--platform', p.id, '--email', 'cli@');
    expect((listed.items as Array<{ sub: string }>).map((x) => x.sub)).toEqual([created.sub]);
    expect(((await run('user', 'list', '--platform', p.id, '--limit', '1')).items as unknown[]).length).toBe(1);
    expect(await run('user', 'show', '--platform', p.id, '--email', 'CLI@example.com')).toMatchObject({
      sub: created.sub,
      mfa: { totp: false },
    });
    expect(await run('user', 'show', '--platform', p.id, '--sub', u.id)).toMatchObject({ email: u.email });

    const updated = await run(
      'user',
      'update',
      '--platform',
      p.id,
      '--sub',
      String(created.sub),
      '--given-name',
      'Clio',
      '--phone',
      '+14155550123',
      '--email-verified',
      'true',
      '--country',
      'fr',
    );
    expect(updated).toMatchObject({
      given_name: 'Clio',
      phone_number: '+14155550123',
      email_verified: true,
      address: { country: 'FR' },
    });
    const api = await global.patch(`${usersOf(p)}/${u.id}`, { phone_number: '12' });
    await expect(run('user', 'update', '--platform', p.id, '--sub', u.id, '--phone', '12')).rejects.toThrow(
      api.body.error_description,
    );
    await expect(run('user', 'update', '--platform', p.id, '--sub', u.id)).rejects.toThrow(/at least one field/);
    await expect(
      run('user', 'update', '--platform', p.id, '--sub', u.id, '--new-email', 'cli@example.com'),
    ).rejects.toThrow(/already exists/);
    await expect(run('user', 'show', '--platform', p.id, '--email', 'nobody@example.com')).rejects.toThrow(/no user/);

    await signedIn(p, c, u.email);
    const sessions = (await run('user', 'sessions', '--platform', p.id, '--sub', u.id)).items as Array<{
      session_id: string;
    }>;
    expect(sessions).toHaveLength(1);
    expect(
      await run('user', 'revoke-session', '--platform', p.id, '--sub', u.id, '--session', sessions[0].session_id),
    ).toMatchObject({ done: 'session_revoked' });
    const consents = (await run('user', 'consents', '--platform', p.id, '--email', u.email)).items as Array<{
      client_id: string;
    }>;
    expect(consents.map((x) => x.client_id)).toEqual([c.id]);
    expect(await run('user', 'revoke-consent', '--platform', p.id, '--sub', u.id, '--client', c.id)).toMatchObject({
      done: 'consent_revoked',
    });
    expect(await run('user', 'sign-out', '--platform', p.id, '--sub', u.id)).toMatchObject({ done: 'signed_out' });
    expect(await run('user', 'unlock', '--platform', p.id, '--email', u.email)).toMatchObject({
      done: 'unlocked',
      throttles_cleared: 0,
    });
    expect(await run('user', 'password-reset', '--platform', p.id, '--sub', u.id)).toEqual({
      sub: u.id,
      done: 'password_reset_sent',
    });
    expect(await run('user', 'disable', '--platform', p.id, '--sub', u.id)).toMatchObject({
      disabled_at: expect.any(String),
    });
    expect(await run('user', 'enable', '--platform', p.id, '--sub', u.id)).toMatchObject({ disabled_at: null });
    expect(await run('user', 'reset-mfa', '--platform', p.id, '--email', u.email)).toMatchObject({
      platform_guid: p.id,
      sub: u.id,
      email: u.email,
      totp_removed: false,
      passkeys_removed: 0,
    });
    expect(await run('user', 'delete', '--platform', p.id, '--sub', String(created.sub))).toEqual({
      sub: created.sub,
      email: 'cli@example.com',
      deleted: true,
    });

    const kinds = (await lastEvents(p.id, 20)).filter((e) => e.kind.startsWith('user.')).map((e) => e.kind);
    expect(kinds).toEqual([
      'user.deleted',
      'user.mfa_reset',
      'user.enabled',
      'user.disabled',
      'user.password_reset_sent',
      'user.unlocked',
      'user.signed_out',
      'user.consent_revoked',
      'user.session_revoked',
      'user.updated',
      'user.created',
    ]);
    expect((await lastEvents(p.id, 1))[0]).toMatchObject({ actorType: 'cli' });
  });
});
