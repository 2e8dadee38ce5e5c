import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { authorizeQuery, basic, exchange, inputValue, signInThrough } from '../support/account-flows';
import { createCredential, getAssertion } from '../support/soft-authenticator';
import { recoveryCodesOf, setupKeyOf, totpAt } from '../support/totp';
import {
  AUDIT_APP_ENV,
  auditBrowser,
  CLIENT_IP,
  eventOf,
  eventsOf,
  expectUserEvent,
  USER_AGENT,
  type AuditBrowser,
} from './support';

// The security events of signing in, each driven through the real pages and token
// endpoint and read back from audit_events by the X-Request-Id of the request that caused it.
const BASE = 'http://localhost:4567'; // passkeys need a host name
let clock = Date.now();
const now = () => new Date(clock);
const tick = (seconds: number) => {
  clock += seconds * 1000;
};

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ ...AUDIT_APP_ENV, BASE_URL: BASE }, now);
});
afterAll(() => t.close());

const db = () => t.database.db;
const newEmail = () => `audit-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function tenant() {
  const p = await buildPlatform(t.services, 'Acme Audit');
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id, { email: newEmail() });
  return { p, c, u };
}

/** Authorize → (chooser: another account) → the sign-in page. */
async function toSignIn(b: AuditBrowser, p: { id: string }, c: Awaited<ReturnType<typeof buildClient>>) {
  await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
  if (b.pageTitle() === 'Choose an account') await b.submit('/chooser', { another: '1' });
  expect(b.pageTitle()).toBe('Sign in');
}

async function accountSignInPage(b: AuditBrowser, p: { id: string }) {
  await b.get(`/account/signin?platform_guid=${p.id}`);
  expect(b.pageTitle()).toBe('Sign in');
}

/** An authenticator app enrolled through the services (the account-events suite covers the pages). */
async function enrolTotp(u: { id: string; email: string }) {
  const enrolment = (await t.services.mfa.totp.beginEnrolment(u, 'Acme Audit'))!;
  const confirmed = await t.services.mfa.confirmTotp(u.id, totpAt(enrolment.secret, now()));
  if (!confirmed.ok) throw new Error('enrolment failed');
  tick(30); // the confirming step is used up
  return { secret: enrolment.secret, codes: confirmed.recoveryCodes };
}

/** A passkey added on the account page (fetch options, then the form), as public/passkeys.js does. */
async function addPasskey(p: { id: string }, u: { id: string; email: string }) {
  const owner = auditBrowser(t.app);
  await accountSignInPage(owner, p);
  await owner.submit(`/account/signin?platform_guid=${p.id}`, { email: u.email, password: TEST_PASSWORD });
  await owner.get(`/account?platform_guid=${p.id}&section=security`); // the passkeys' tab
  const options = await owner.agent
    .post(`/account/passkeys/options?platform_guid=${p.id}`)
    .type('form')
    .send({ _csrf: inputValue(owner.html, '_csrf')!, account: u.id });
  expect(options.status).toBe(200);
  const { credential, json } = createCredential(options.body.options, BASE);
  await owner.submit(`/account/passkeys?platform_guid=${p.id}`, { account: u.id, name: 'Laptop', credential: json });
  expect(owner.html).toContain('Passkey “Laptop” added.');
  return credential;
}

describe('audit: sign_in.succeeded', () => {
  it('a password sign-in on the authorization page: method pwd, amr, the client, never the password', async () => {
    const { p, c, u } = await tenant();
    const b = auditBrowser(t.app);
    await toSignIn(b, p, c);
    const step = await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    const row = await eventOf(db(), step.requestId, 'sign_in.succeeded');
    expectUserEvent(
      row,
      {
        kind: 'sign_in.succeeded',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { method: 'pwd', amr: ['pwd'] },
      },
      [TEST_PASSWORD],
    );
  });

  it('a passkey alone on the sign-in page: method passkey, its amr and id', async () => {
    const { p, c, u } = await tenant();
    const credential = await addPasskey(p, u);
    const b = auditBrowser(t.app);
    await toSignIn(b, p, c);
    const options = await b.agent
      .post(/data-options="([^"]+)"/.exec(b.html)![1].replace(/&amp;/g, '&'))
      .type('form')
      .send({ _csrf: inputValue(b.html, '_csrf')!, restart: inputValue(b.html, 'restart')!.replace(/&amp;/g, '&') });
    const assertion = getAssertion(credential, options.body.options, BASE);
    const step = await b.submit('/passkey', { credential: assertion });
    const row = await eventOf(db(), step.requestId, 'sign_in.succeeded');
    const [passkey] = await t.services.passkeys.list(p.id, u.id);
    expectUserEvent(
      row,
      {
        kind: 'sign_in.succeeded',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { method: 'passkey', passkey_id: passkey.id, amr: ['hwk', 'user'] },
      },
      [assertion],
    );
  });
});

describe('audit: sign_in.failed', () => {
  it("another account's passkey on a sign-in pinned by login_hint: failed (other_account), not a sign-in", async () => {
    const { p, c, u } = await tenant();
    const pinned = await buildUser(t.services, p.id, { email: newEmail() });
    const credential = await addPasskey(p, u);
    const b = auditBrowser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { login_hint: pinned.email })}`);
    expect(b.pageTitle()).toBe('Sign in');
    const options = await b.agent
      .post(/data-options="([^"]+)"/.exec(b.html)![1].replace(/&amp;/g, '&'))
      .type('form')
      .send({ _csrf: inputValue(b.html, '_csrf')!, restart: inputValue(b.html, 'restart')!.replace(/&amp;/g, '&') });
    const step = await b.submit('/passkey', { credential: getAssertion(credential, options.body.options, BASE) });
    expect(step.res.status).toBe(400);
    expect(b.html).toContain(`This sign-in is for ${pinned.email}.`);
    expect((await eventsOf(db(), step.requestId)).map((r) => r.kind)).toEqual(['sign_in.failed']);
    expectUserEvent(
      await eventOf(db(), step.requestId, 'sign_in.failed'),
      {
        kind: 'sign_in.failed',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { method: 'passkey', reason: 'other_account' },
      },
      [],
    );
  });

  it('a wrong password names the account (subject and actor) and the email, never the password tried', async () => {
    const { p, u } = await tenant();
    const b = auditBrowser(t.app);
    await accountSignInPage(b, p);
    const step = await b.submit(`/account/signin?platform_guid=${p.id}`, {
      email: u.email,
      password: 'Tr0ub4dor&3 guess',
    });
    expect(step.res.status).toBe(400);
    const row = await eventOf(db(), step.requestId, 'sign_in.failed');
    expectUserEvent(
      row,
      {
        kind: 'sign_in.failed',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { method: 'pwd', reason: 'wrong_password', email: u.email },
      },
      ['Tr0ub4dor&3 guess', TEST_PASSWORD],
    );
  });

  it('an unknown email has no subject and no actor id', async () => {
    const { p, c } = await tenant();
    const email = newEmail();
    const b = auditBrowser(t.app);
    await toSignIn(b, p, c);
    const step = await b.submit('/signin', { email, password: 'some password 123' });
    const row = await eventOf(db(), step.requestId, 'sign_in.failed');
    expectUserEvent(
      row,
      {
        kind: 'sign_in.failed',
        platformId: p.id,
        subject: null,
        clientId: c.id,
        requestId: step.requestId,
        details: { method: 'pwd', reason: 'unknown_email', email },
      },
      ['some password 123'],
    );
  });

  it('a wrong second-factor code: method totp, second factor, never the code', async () => {
    const { p, c, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const b = auditBrowser(t.app);
    await toSignIn(b, p, c);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(b.pageTitle()).toBe('Two-step verification');
    const stale = totpAt(secret, new Date(clock - 300_000));
    const step = await b.submit('/second-factor', { code: stale });
    expect(step.res.status).toBe(400);
    const row = await eventOf(db(), step.requestId, 'sign_in.failed');
    expectUserEvent(
      row,
      {
        kind: 'sign_in.failed',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { method: 'totp', second_factor: true, reason: 'invalid' },
      },
      [stale, secret],
    );
  });
});

describe('audit: sign_in.locked_out', () => {
  it('the failure that starts the lock records it with the failure; attempts while locked are failures with reason locked', async () => {
    const { p, u } = await tenant();
    const b = auditBrowser(t.app);
    await accountSignInPage(b, p);
    let step;
    for (let i = 0; i < 5; i++)
      step = await b.submit(`/account/signin?platform_guid=${p.id}`, {
        email: u.email,
        password: `wrong password ${i}`,
      });
    expect(step!.res.status).toBe(429);
    const kinds = (await eventsOf(db(), step!.requestId)).map((r) => r.kind);
    expect(kinds).toEqual(['sign_in.failed', 'sign_in.locked_out']);
    const row = await eventOf(db(), step!.requestId, 'sign_in.locked_out');
    expectUserEvent(
      row,
      {
        kind: 'sign_in.locked_out',
        platformId: p.id,
        subject: u.id,
        requestId: step!.requestId,
        details: { method: 'pwd', throttle: 'account_source', locked_seconds: 60, email: u.email },
      },
      ['wrong password 4', TEST_PASSWORD],
    );

    const locked = await b.submit(`/account/signin?platform_guid=${p.id}`, { email: u.email, password: TEST_PASSWORD });
    expect(locked.res.status).toBe(429);
    expectUserEvent(
      await eventOf(db(), locked.requestId, 'sign_in.failed'),
      {
        kind: 'sign_in.failed',
        platformId: p.id,
        subject: null,
        requestId: locked.requestId,
        details: { method: 'pwd', reason: 'locked', email: u.email },
      },
      [TEST_PASSWORD],
    );
    expect((await eventsOf(db(), locked.requestId)).map((r) => r.kind)).toEqual(['sign_in.failed']); // no second lockout
  });
});

describe('audit: sign_up', () => {
  it('a new account from the sign-up form: the new user is subject and actor, never the password', async () => {
    const { p, c } = await tenant();
    const email = newEmail();
    const password = 'a brand new pass phrase';
    const b = auditBrowser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { action: 'register' })}`);
    const step = await b.submit('/signup', {
      email,
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password,
    });
    const user = (await t.services.users.findByEmail(p.id, email))!;
    const row = await eventOf(db(), step.requestId, 'sign_up');
    expectUserEvent(
      row,
      {
        kind: 'sign_up',
        platformId: p.id,
        subject: user.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { method: 'pwd' },
      },
      [password],
    );
  });
});

describe('audit: mfa.used', () => {
  it('a TOTP code after the password: factor totp, never the code or the secret', async () => {
    const { p, c, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const b = auditBrowser(t.app);
    await toSignIn(b, p, c);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    const code = totpAt(secret, now());
    const step = await b.submit('/second-factor', { code });
    const row = await eventOf(db(), step.requestId, 'mfa.used');
    expectUserEvent(
      row,
      {
        kind: 'mfa.used',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { factor: 'totp' },
      },
      [code, secret],
    );
  });

  it('a recovery code: factor recovery_code, never the code', async () => {
    const { p, c, u } = await tenant();
    const { codes } = await enrolTotp(u);
    const b = auditBrowser(t.app);
    await toSignIn(b, p, c);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    const step = await b.submit('/second-factor', { method: 'recovery_code', code: codes[0] });
    expect(step.location ?? b.pageTitle()).not.toBe('Two-step verification');
    const row = await eventOf(db(), step.requestId, 'mfa.used');
    expectUserEvent(
      row,
      {
        kind: 'mfa.used',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { factor: 'recovery_code' },
      },
      codes,
    );
  });
});

describe('audit: mfa.used on the account page', () => {
  it("the account page's own sign-in: a code after the password, no client", async () => {
    const { p, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const b = auditBrowser(t.app);
    await accountSignInPage(b, p);
    await b.submit(`/account/signin?platform_guid=${p.id}`, { email: u.email, password: TEST_PASSWORD });
    expect(b.pageTitle()).toBe('Two-step verification');
    const code = totpAt(secret, now());
    const step = await b.submit(`/account/second-factor?platform_guid=${p.id}`, { code });
    expect(b.pageTitle()).toBe('Your account');
    expectUserEvent(
      await eventOf(db(), step.requestId, 'mfa.used'),
      {
        kind: 'mfa.used',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { factor: 'totp' },
      },
      [code, secret, TEST_PASSWORD],
    );
  });
});

describe('audit: mfa.enrolled during sign-in', () => {
  it('policy required: the authenticator app set up in the flow, with the client; never the secret, code or recovery codes', async () => {
    const { p, c, u } = await tenant();
    await t.services.mfa.setPolicy(p.id, 'required');
    const b = auditBrowser(t.app);
    await toSignIn(b, p, c);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(b.pageTitle()).toBe('Set up authenticator app');
    const secret = setupKeyOf(b.html);
    const code = totpAt(secret, now());
    const step = await b.submit('/totp-setup', { code });
    expect(b.pageTitle()).toBe('Save your recovery codes');
    const codes = recoveryCodesOf(b.html);
    expectUserEvent(
      await eventOf(db(), step.requestId, 'mfa.enrolled'),
      {
        kind: 'mfa.enrolled',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { factor: 'totp' },
      },
      [secret, code, ...codes],
    );
  });
});

describe('audit: consent.granted', () => {
  it('Allow on the consent page: the client and the scopes granted', async () => {
    const { p, c, u } = await tenant();
    const b = auditBrowser(t.app);
    await toSignIn(b, p, c);
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(b.pageTitle()).toContain('wants to access');
    const step = await b.submit('/consent', { decision: 'allow' });
    expect(step.location).toMatch(/^https:\/\/app\.example\/callback\?code=/);
    const code = new URL(step.location!).searchParams.get('code');
    const row = await eventOf(db(), step.requestId, 'consent.granted');
    expectUserEvent(
      row,
      {
        kind: 'consent.granted',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { scopes: ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'] },
      },
      [code],
    );
  });
});

describe('audit: refresh_token.reuse_detected', () => {
  it('a rotated token presented after the grace window: the family, the client, the user; never a token', async () => {
    const { p, c, u } = await tenant();
    const b = auditBrowser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const rotated = await request(t.app)
      .post('/oauth/token')
      .set('Authorization', basic(c))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, platform_guid: p.id });
    expect(rotated.status).toBe(200);
    tick(11); // past REFRESH_REUSE_GRACE_SECONDS
    const replay = await request(t.app)
      .post('/oauth/token')
      .set('Authorization', basic(c))
      .set('User-Agent', USER_AGENT)
      .set('X-Forwarded-For', CLIENT_IP)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, platform_guid: p.id });
    expectOAuthError(replay, 400, 'invalid_grant');
    const requestId = replay.headers['x-request-id'] as string;
    const row = await eventOf(db(), requestId, 'refresh_token.reuse_detected');
    const family = await db()('refresh_token_families').where({ user_id: u.id, client_id: c.id }).first();
    expect(family.revoked_at).not.toBeNull();
    expectUserEvent(
      row,
      {
        kind: 'refresh_token.reuse_detected',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId,
        details: { family_id: family.id, rotated_at: expect.any(String) },
      },
      [tokens.refresh_token, rotated.body.refresh_token, tokens.access_token, rotated.body.access_token, c.secret],
    );
    // A second replay finds the family revoked: refused, nothing more to record.
    const again = await request(t.app)
      .post('/oauth/token')
      .set('Authorization', basic(c))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, platform_guid: p.id });
    expectOAuthError(again, 400, 'invalid_grant');
    expect(await eventsOf(db(), again.headers['x-request-id'] as string)).toEqual([]);
  });
});

describe('audit: logout', () => {
  it('RP-initiated logout with id_token_hint: the app that asked, the refresh tokens revoked', async () => {
    const { p, c, u } = await tenant();
    const b = auditBrowser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const step = await b.get(
      `/oauth/logout?${new URLSearchParams({ platform_guid: p.id, id_token_hint: tokens.id_token })}`,
    );
    expect(b.pageTitle()).toBe('You are signed out');
    const row = await eventOf(db(), step.requestId, 'logout');
    expectUserEvent(
      row,
      {
        kind: 'logout',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { via: 'rp_initiated', refresh_tokens_revoked: 1 },
      },
      [tokens.id_token, tokens.refresh_token],
    );
  });

  it('"Sign out" on the account page', async () => {
    const { p, u } = await tenant();
    const b = auditBrowser(t.app);
    await accountSignInPage(b, p);
    await b.submit(`/account/signin?platform_guid=${p.id}`, { email: u.email, password: TEST_PASSWORD });
    const step = await b.submit(`/account/signout?platform_guid=${p.id}`, { account: u.id });
    expect(b.pageTitle()).toBe('You are signed out');
    expectUserEvent(
      await eventOf(db(), step.requestId, 'logout'),
      {
        kind: 'logout',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { via: 'account_page', refresh_tokens_revoked: 0 },
      },
      [TEST_PASSWORD],
    );
  });

  it('"Sign out" of an account on the chooser', async () => {
    const { p, c, u } = await tenant();
    const b = auditBrowser(t.app);
    await signInThrough(b, p, c, u.email);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect(b.pageTitle()).toBe('Choose an account');
    const step = await b.submit('/chooser', { signout: u.id });
    expectUserEvent(
      await eventOf(db(), step.requestId, 'logout'),
      {
        kind: 'logout',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { via: 'chooser', refresh_tokens_revoked: 0 },
      },
      [TEST_PASSWORD],
    );
  });
});
