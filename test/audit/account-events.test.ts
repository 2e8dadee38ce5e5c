import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { exchange, inputValue, pathOf, refresh, signInThrough, signUpThrough } from '../support/account-flows';
import { linkIn, waitForMail } from '../support/outbox';
import { createCredential } from '../support/soft-authenticator';
import { recoveryCodesOf, setupKeyOf, totpAt } from '../support/totp';
import { auditContext } from '../../src/http/request/audit-context';
import {
  AUDIT_APP_ENV,
  auditBrowser,
  eventOf,
  eventsOf,
  eventuallyEventOf,
  expectNoSecret,
  expectUserEvent,
  type AuditBrowser,
} from './support';

// The security events of the account's lifecycle: email, password, second factors,
// connected apps, sign out everywhere; each driven through the real pages and read back by the
// X-Request-Id of the request that caused it. Last, one audited change that fails leaves no trace.
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
const account = (p: { id: string }, suffix = '') => `/account${suffix}?platform_guid=${p.id}`;

/** A user signed in on the account page of a fresh platform. */
async function signedIn() {
  const p = await buildPlatform(t.services, 'Acme Audit');
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id, { email: newEmail() });
  const b = auditBrowser(t.app);
  await b.get(account(p, '/signin'));
  await b.submit(account(p, '/signin'), { email: u.email, password: TEST_PASSWORD });
  expect(b.pageTitle()).toBe('Your account');
  await b.get(`${account(p)}&section=security`); // the tab with the password, two-step and passkey forms
  return { p, c, u, b };
}

/** Account page → set up an authenticator app → confirm with a first code; the secret, the code and the recovery codes. */
async function enrolOnPage(b: AuditBrowser, p: { id: string }, u: { id: string }) {
  await b.submit(account(p, '/totp/setup'), { account: u.id });
  const secret = setupKeyOf(b.html);
  const code = totpAt(secret, now());
  const step = await b.submit(account(p, '/totp/confirm'), { account: u.id, code });
  expect(b.pageTitle()).toBe('Save your recovery codes');
  tick(30); // the confirming step is used up
  return { secret, code, codes: recoveryCodesOf(b.html), step };
}

describe('audit: email.verified', () => {
  it('opening the mailed link: the address verified, never the link token', async () => {
    const p = await buildPlatform(t.services, 'Acme Audit');
    const c = await buildClient(t.services, p.id);
    const email = newEmail();
    await signUpThrough(auditBrowser(t.app), p, c, email);
    const link = linkIn(await waitForMail(t.config.dataDir, email, /Verify your email/), '/verify-email');
    const b = auditBrowser(t.app);
    const step = await b.get(pathOf(link));
    expect(b.pageTitle()).toBe('Your email address is verified');
    const user = (await t.services.users.findByEmail(p.id, email))!;
    expectUserEvent(
      await eventOf(db(), step.requestId, 'email.verified'),
      {
        kind: 'email.verified',
        platformId: p.id,
        subject: user.id,
        requestId: step.requestId,
        details: { email },
      },
      [new URL(link).searchParams.get('token')],
    );
  });
});

describe('audit: password.reset_requested and password.reset', () => {
  it('"Forgot password?" for an account, then the link: both recorded, never the link token or the new password', async () => {
    const p = await buildPlatform(t.services, 'Acme Audit');
    const u = await buildUser(t.services, p.id, { email: newEmail() });
    const b = auditBrowser(t.app);
    await b.get(`/password/forgot?platform_guid=${p.id}`);
    const asked = await b.submit(`/password/forgot?platform_guid=${p.id}`, { email: u.email });
    expect(b.pageTitle()).toBe('Check your email');
    // Looked up and mailed once the answer has gone: the event follows it.
    expectUserEvent(
      await eventuallyEventOf(db(), asked.requestId, 'password.reset_requested'),
      {
        kind: 'password.reset_requested',
        platformId: p.id,
        subject: u.id,
        requestId: asked.requestId,
        details: {},
      },
      [],
    );

    const link = linkIn(await waitForMail(t.config.dataDir, u.email, /Reset your/), '/password/reset');
    const token = new URL(link).searchParams.get('token');
    await b.get(pathOf(link));
    const password = 'a fresh pass phrase 42';
    const step = await b.submit(`/password/reset?platform_guid=${p.id}`, {
      token: inputValue(b.html, 'token')!,
      password,
    });
    expect(b.pageTitle()).toBe('Your password has been changed');
    expectUserEvent(
      await eventOf(db(), step.requestId, 'password.reset'),
      {
        kind: 'password.reset',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { refresh_tokens_revoked: 0 },
      },
      [token, password, TEST_PASSWORD],
    );
  });

  it('a reset that proves an unverified address records email.verified with it, in the same request; an address verified before records none', async () => {
    const p = await buildPlatform(t.services, 'Acme Audit');
    const resetThroughLink = async (email: string) => {
      const b = auditBrowser(t.app);
      await b.get(`/password/forgot?platform_guid=${p.id}`);
      await b.submit(`/password/forgot?platform_guid=${p.id}`, { email });
      const link = linkIn(await waitForMail(t.config.dataDir, email, /Reset your/), '/password/reset');
      await b.get(pathOf(link));
      const step = await b.submit(`/password/reset?platform_guid=${p.id}`, {
        token: inputValue(b.html, 'token')!,
        password: 'a fresh pass phrase 42',
      });
      expect(b.pageTitle()).toBe('Your password has been changed');
      return { step, token: new URL(link).searchParams.get('token') };
    };
    const unverified = await buildUser(t.services, p.id, { email: newEmail() });
    expect(unverified.emailVerified).toBe(false);
    const { step, token } = await resetThroughLink(unverified.email);
    expect((await t.services.users.findByEmail(p.id, unverified.email))!.emailVerified).toBe(true);
    expectUserEvent(
      await eventOf(db(), step.requestId, 'email.verified'),
      {
        kind: 'email.verified',
        platformId: p.id,
        subject: unverified.id,
        requestId: step.requestId,
        details: { email: unverified.email },
      },
      [token, 'a fresh pass phrase 42'],
    );

    const verified = await buildUser(t.services, p.id, { email: newEmail(), emailVerified: true });
    const again = await resetThroughLink(verified.email);
    expect((await eventsOf(db(), again.step.requestId)).map((e) => e.kind)).toEqual(['password.reset']);
  });

  it('an address without an account: nothing sent, nothing recorded', async () => {
    const p = await buildPlatform(t.services, 'Acme Audit');
    const b = auditBrowser(t.app);
    await b.get(`/password/forgot?platform_guid=${p.id}`);
    const asked = await b.submit(`/password/forgot?platform_guid=${p.id}`, { email: newEmail() });
    expect(b.pageTitle()).toBe('Check your email');
    // The same request for a known address is recorded (above); give this one the same chance.
    const known = await buildUser(t.services, p.id, { email: newEmail() });
    const other = auditBrowser(t.app);
    await other.get(`/password/forgot?platform_guid=${p.id}`);
    const control = await other.submit(`/password/forgot?platform_guid=${p.id}`, { email: known.email });
    await eventuallyEventOf(db(), control.requestId, 'password.reset_requested');
    expect(await eventsOf(db(), asked.requestId)).toEqual([]);
  });
});

describe('audit: password.changed', () => {
  it('the account page form: the sessions ended, never the old or new password', async () => {
    const { p, c, u, b } = await signedIn();
    const tokens = await exchange(t.app, p, c, await signInThrough(auditBrowser(t.app), p, c, u.email));
    const next = 'another good pass phrase';
    const step = await b.submit(account(p, '/password'), {
      account: u.id,
      current_password: TEST_PASSWORD,
      new_password: next,
    });
    expect(b.html).toContain('Your password has been changed.');
    expectUserEvent(
      await eventOf(db(), step.requestId, 'password.changed'),
      {
        kind: 'password.changed',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { refresh_tokens_revoked: 1 },
      },
      [TEST_PASSWORD, next, tokens.refresh_token],
    );
  });
});

describe('audit: mfa.enrolled', () => {
  it('an authenticator app set up on the account page: factor totp, never the secret, the code or a recovery code', async () => {
    const { p, u, b } = await signedIn();
    const { secret, code, codes, step } = await enrolOnPage(b, p, u);
    expect(codes).toHaveLength(10);
    expectUserEvent(
      await eventOf(db(), step.requestId, 'mfa.enrolled'),
      {
        kind: 'mfa.enrolled',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { factor: 'totp' },
      },
      [secret, code, ...codes],
    );
  });

  it('new recovery codes (after the password as proof): factor recovery_codes; the proof is a sign-in for confirmation', async () => {
    const { p, u, b } = await signedIn();
    const first = await enrolOnPage(b, p, u);
    await b.get(`${account(p, '/recovery-codes')}&account=${u.id}`);
    const step = await b.submit(account(p, '/recovery-codes'), { account: u.id, proof: TEST_PASSWORD });
    const codes = recoveryCodesOf(b.html);
    expect(codes).toHaveLength(10);
    expect((await eventsOf(db(), step.requestId)).map((r) => r.kind)).toEqual(['sign_in.succeeded', 'mfa.enrolled']);
    const secrets = [TEST_PASSWORD, first.secret, ...codes, ...first.codes];
    expectUserEvent(
      await eventOf(db(), step.requestId, 'mfa.enrolled'),
      {
        kind: 'mfa.enrolled',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { factor: 'recovery_codes' },
      },
      secrets,
    );
    expectUserEvent(
      await eventOf(db(), step.requestId, 'sign_in.succeeded'),
      {
        kind: 'sign_in.succeeded',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { method: 'pwd', amr: ['pwd'], purpose: 'confirm' },
      },
      secrets,
    );
  });

  it('a passkey added on the account page: factor passkey, its id and name', async () => {
    const { p, u, b } = await signedIn();
    const options = await b.agent
      .post(account(p, '/passkeys/options'))
      .type('form')
      .send({ _csrf: inputValue(b.html, '_csrf')!, account: u.id });
    expect(options.status).toBe(200);
    const { json } = createCredential(options.body.options, BASE);
    const step = await b.submit(account(p, '/passkeys'), { account: u.id, name: 'Laptop', credential: json });
    expect(b.html).toContain('Passkey “Laptop” added.');
    const [passkey] = await t.services.passkeys.list(p.id, u.id);
    expectUserEvent(
      await eventOf(db(), step.requestId, 'mfa.enrolled'),
      {
        kind: 'mfa.enrolled',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { factor: 'passkey', passkey_id: passkey.id, name: 'Laptop' },
      },
      [],
    );
  });
});

describe('audit: mfa.removed', () => {
  it('the authenticator app removed after a current code: mfa.used to confirm, then mfa.removed (factor totp)', async () => {
    const { p, u, b } = await signedIn();
    const { secret, codes } = await enrolOnPage(b, p, u);
    await b.get(`${account(p, '/totp/remove')}&account=${u.id}`);
    const code = totpAt(secret, now());
    const step = await b.submit(account(p, '/totp/remove'), { account: u.id, proof: code });
    expect(b.html).toContain('Your authenticator app was removed.');
    expect((await eventsOf(db(), step.requestId)).map((r) => r.kind)).toEqual(['mfa.used', 'mfa.removed']);
    expectUserEvent(
      await eventOf(db(), step.requestId, 'mfa.removed'),
      {
        kind: 'mfa.removed',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { factor: 'totp' },
      },
      [secret, code, ...codes],
    );
    expectUserEvent(
      await eventOf(db(), step.requestId, 'mfa.used'),
      {
        kind: 'mfa.used',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { factor: 'totp', purpose: 'confirm' },
      },
      [secret, code],
    );
  });

  it('a passkey removed: factor passkey and its id; a second removal records nothing', async () => {
    const { p, u, b } = await signedIn();
    const options = await b.agent
      .post(account(p, '/passkeys/options'))
      .type('form')
      .send({ _csrf: inputValue(b.html, '_csrf')!, account: u.id });
    await b.submit(account(p, '/passkeys'), {
      account: u.id,
      name: 'Phone',
      credential: createCredential(options.body.options, BASE).json,
    });
    const [passkey] = await t.services.passkeys.list(p.id, u.id);
    const step = await b.submit(account(p, '/passkeys/remove'), { account: u.id, passkey: passkey.id });
    expect(b.html).toContain('Passkey “Phone” removed.');
    expectUserEvent(
      await eventOf(db(), step.requestId, 'mfa.removed'),
      {
        kind: 'mfa.removed',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { factor: 'passkey', passkey_id: passkey.id },
      },
      [],
    );
    const again = await b.agent
      .post(account(p, '/passkeys/remove'))
      .type('form')
      .send({ _csrf: inputValue(b.html, '_csrf')!, account: u.id, passkey: passkey.id });
    expect(again.status).toBe(303);
    expect(await eventsOf(db(), again.headers['x-request-id'] as string)).toEqual([]);
  });
});

describe('audit: consent.revoked', () => {
  it('"Remove access" for an app on the account page: the client, its refresh tokens revoked', async () => {
    const { p, c, u, b } = await signedIn();
    const tokens = await exchange(t.app, p, c, await signInThrough(auditBrowser(t.app), p, c, u.email));
    await b.get(`${account(p)}&section=apps`);
    const step = await b.submit(account(p, '/apps/revoke'), { account: u.id, client_id: c.id });
    expect(b.html).toContain('no longer has access to your account');
    expectUserEvent(
      await eventOf(db(), step.requestId, 'consent.revoked'),
      {
        kind: 'consent.revoked',
        platformId: p.id,
        subject: u.id,
        clientId: c.id,
        requestId: step.requestId,
        details: { refresh_tokens_revoked: 1 },
      },
      [tokens.refresh_token, tokens.access_token],
    );
  });
});

describe('audit: sign_out_everywhere', () => {
  it('the account page button: every refresh token revoked', async () => {
    const { p, c, u, b } = await signedIn();
    const tokens = await exchange(t.app, p, c, await signInThrough(auditBrowser(t.app), p, c, u.email));
    const step = await b.submit(account(p, '/signout-everywhere'), { account: u.id });
    expect(b.pageTitle()).toBe('You are signed out');
    expectUserEvent(
      await eventOf(db(), step.requestId, 'sign_out_everywhere'),
      {
        kind: 'sign_out_everywhere',
        platformId: p.id,
        subject: u.id,
        requestId: step.requestId,
        details: { refresh_tokens_revoked: 1 },
      },
      [tokens.refresh_token],
    );
  });
});

describe('audit: the event and its change commit together', () => {
  it('a sign-out everywhere whose event cannot be stored is rolled back whole: the tokens live on, no event', async () => {
    const { p, c, u } = await signedIn();
    const tokens = await exchange(t.app, p, c, await signInThrough(auditBrowser(t.app), p, c, u.email));
    const requestId = `rollback-${Math.random().toString(36).slice(2)}`;
    const req = { get: () => 'AuditTest/rollback', ip: '203.0.113.78', id: requestId } as never;
    // A platform id the audit_events column (uuid) refuses: the INSERT fails inside the transaction.
    const origin = { ctx: auditContext(req, { type: 'user' }), platformId: 'not-a-uuid' };
    await expect(t.services.account.security.signOutEverywhere(u, origin)).rejects.toThrow();
    expect(await eventsOf(db(), requestId)).toEqual([]);
    const refreshed = await refresh(t.app, p, c, tokens.refresh_token!);
    expect(refreshed.status).toBe(200); // the revocation went with the event

    // The same change with a storable event: both land.
    await t.services.account.security.signOutEverywhere(u, { ...origin, platformId: p.id });
    const [row] = await eventsOf(db(), requestId);
    expect(row).toMatchObject({
      kind: 'sign_out_everywhere',
      subject: u.id,
      platform_id: p.id,
      source: '203.0.113.78',
      user_agent: 'AuditTest/rollback',
    });
    expect((await refresh(t.app, p, c, refreshed.body.refresh_token)).status).toBe(400);
    expectNoSecret(row, [tokens.refresh_token, refreshed.body.refresh_token]);
  });
});
