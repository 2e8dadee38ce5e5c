import request from 'supertest';
import { jwtVerify } from 'jose';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser, type Browser } from '../support/browser';
import { accountSignIn, authorizeQuery, exchange, refresh } from '../support/account-flows';
import { recoveryCodesOf, setupKeyOf, totpAt } from '../support/totp';
import { ACR_MFA, ACR_PWD } from '../../src/domain/mfa';
import { runCommand } from '../../src/cli/commands';

// One clock for the provider and the test's authenticator app: a new TOTP step is 30 s away.
let clock = Date.now();
const now = () => new Date(clock);
const tick = (seconds: number) => {
  clock += seconds * 1000;
};

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({}, now);
});
afterAll(() => t.close());

const newEmail = () => `mfa-${Math.random().toString(36).slice(2, 10)}@example.com`;
type Client = Awaited<ReturnType<typeof buildClient>>;

async function tenant(policy?: 'off' | 'optional' | 'required') {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id, { email: newEmail() });
  if (policy) await t.services.mfa.setPolicy(p.id, policy);
  return { p, c, u };
}

/** Enrols an authenticator app through the services (the account page's own test covers the pages); returns the secret and codes. */
async function enrolTotp(u: { id: string; email: string }) {
  const enrolment = (await t.services.mfa.totp.beginEnrolment(u, 'Acme Travel'))!;
  const confirmed = await t.services.mfa.confirmTotp(u.id, totpAt(enrolment.secret, now()));
  if (!confirmed.ok) throw new Error('enrolment failed');
  tick(30); // the confirming step is used up
  return { secret: enrolment.secret, codes: confirmed.recoveryCodes };
}

/** Authorize → (chooser: another account) → password; the page or callback after the password. */
async function passwordStep(
  b: Browser,
  p: { id: string },
  c: Client,
  email: string,
  extra: Record<string, string> = {},
) {
  let step = await b.get(`/oauth/authorize?${authorizeQuery(p, c, extra)}`);
  if (step.location) return step;
  if (b.pageTitle() === 'Choose an account') step = await b.submit('/chooser', { another: '1' });
  if (b.pageTitle() !== 'Sign in') return step;
  return b.submit('/signin', { email, password: TEST_PASSWORD });
}

async function allowIfAsked(b: Browser, step: { location?: string }) {
  if (!step.location && b.pageTitle()?.includes('wants to access')) return b.submit('/consent', { decision: 'allow' });
  return step;
}

const idClaims = async (c: Client, idToken: string) =>
  (await jwtVerify(idToken, new TextEncoder().encode(c.secret!), { algorithms: ['HS512'] })).payload;

describe('sign-in with a second factor', () => {
  it('asks a user with an authenticator app for a code after the password; the ID token says pwd, otp, mfa', async () => {
    const { p, c, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const b = browser(t.app);
    const afterPassword = await passwordStep(b, p, c, u.email);
    expect(afterPassword.location).toBeUndefined();
    expect(b.pageTitle()).toBe('Two-step verification');
    expect(b.html).toMatch(/<label for="code">Code<\/label>/);
    expect(b.html).toMatch(/<button[^>]*>Verify<\/button>/);
    expect(b.html).toMatch(/<a href="[^"]*second-factor\/recovery_code" class="link">Use a recovery code<\/a>/);

    const wrong = await b.submit('/second-factor', { code: totpAt(secret, new Date(clock - 120_000)) });
    expect(wrong.res.status).toBe(400);
    expect(b.html).toContain('That code is not right.');
    const done = await allowIfAsked(b, await b.submit('/second-factor', { code: totpAt(secret, now()) }));
    expect(done.location).toMatch(/^https:\/\/app\.example\/callback\?code=/);

    const tokens = await exchange(t.app, p, c, done.location!);
    const claims = await idClaims(c, tokens.id_token);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.acr).toBe(ACR_MFA);
    expect(claims.sub).toBe(u.id);
    // A refreshed ID token says the same.
    const refreshed = await refresh(t.app, p, c, tokens.refresh_token!);
    expect(refreshed.status).toBe(200);
    const again = await idClaims(c, refreshed.body.id_token);
    expect(again.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(again.acr).toBe(ACR_MFA);
  });

  it('a password-only sign-in says amr pwd and acr pwd', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    const done = await allowIfAsked(b, await passwordStep(b, p, c, u.email));
    const claims = await idClaims(c, (await exchange(t.app, p, c, done.location!)).id_token);
    expect(claims.amr).toEqual(['pwd']);
    expect(claims.acr).toBe(ACR_PWD);
  });

  it('refuses a replayed code: a step used once cannot sign in again', async () => {
    const { p, c, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const code = totpAt(secret, now());
    const first = browser(t.app);
    await passwordStep(first, p, c, u.email);
    expect((await allowIfAsked(first, await first.submit('/second-factor', { code }))).location).toBeDefined();

    const second = browser(t.app);
    await passwordStep(second, p, c, u.email);
    const replay = await second.submit('/second-factor', { code });
    expect(replay.res.status).toBe(400);
    expect(second.pageTitle()).toBe('Two-step verification');
    tick(30);
    expect(
      (await allowIfAsked(second, await second.submit('/second-factor', { code: totpAt(secret, now()) }))).location,
    ).toBeDefined();
  });

  it('a recovery code signs in once', async () => {
    const { p, c, u } = await tenant();
    const { codes } = await enrolTotp(u);
    const b = browser(t.app);
    await passwordStep(b, p, c, u.email);
    await b.get(/href="([^"]*second-factor\/recovery_code)"/.exec(b.html)![1]);
    expect(b.html).toMatch(/<label for="code">Recovery code<\/label>/);
    expect(b.html).toContain('Use your authenticator app');
    const done = await allowIfAsked(b, await b.submit('/second-factor', { method: 'recovery_code', code: codes[3] }));
    const claims = await idClaims(c, (await exchange(t.app, p, c, done.location!)).id_token);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(await t.services.mfa.recoveryCodes.remaining(u.id)).toBe(9);

    const again = browser(t.app);
    await passwordStep(again, p, c, u.email);
    const reused = await again.submit('/second-factor', { method: 'recovery_code', code: codes[3] });
    expect(reused.res.status).toBe(400);
    expect(again.html).toContain('That recovery code is not valid, or it was already used.');
  });

  it('throttles wrong codes per account and source like passwords (429 with Retry-After), even the right one while locked', async () => {
    const { p, c, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const b = browser(t.app);
    await passwordStep(b, p, c, u.email);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await b.submit('/second-factor', { code: String(200000 + i) })).res.status);
    expect(statuses).toEqual([400, 400, 400, 400, 429]);
    const locked = await b.submit('/second-factor', { code: totpAt(secret, now()) });
    expect(locked.res.status).toBe(429);
    expect(Number(locked.res.headers['retry-after'])).toBeGreaterThan(0);
    expect(b.html).toContain('Too many attempts');
    // Operators see and clear it like a sign-in lock.
    const listed = await runCommand(t.services, [
      'throttle',
      'list',
      '--platform',
      p.id,
      '--email',
      u.email,
      '--locked',
    ]);
    expect(listed.throttles).toEqual([expect.objectContaining({ kind: 'second_factor_account', locks: 1 })]);
    await runCommand(t.services, ['throttle', 'clear', '--platform', p.id, '--email', u.email]);
    tick(30);
    expect((await allowIfAsked(b, await b.submit('/second-factor', { code: totpAt(secret, now()) }))).location).toMatch(
      /code=/,
    );
  });

  it('policy required: a user without a second factor sets up an authenticator app before the flow finishes', async () => {
    const { p, c, u } = await tenant('required');
    const b = browser(t.app);
    await passwordStep(b, p, c, u.email);
    expect(b.pageTitle()).toBe('Set up authenticator app');
    const secret = setupKeyOf(b.html);
    const wrong = await b.submit('/totp-setup', { code: '12345' });
    expect(wrong.res.status).toBe(400);
    expect(setupKeyOf(b.html)).toBe(secret);
    const codes = await b.submit('/totp-setup', { code: totpAt(secret, now()) });
    expect(codes.res.status).toBe(200);
    expect(b.pageTitle()).toBe('Save your recovery codes');
    expect(recoveryCodesOf(b.html)).toHaveLength(10);
    expect(b.html).not.toContain('Earlier recovery codes'); // the first set
    const done = await allowIfAsked(b, await b.submit('/continue', {}));
    expect(done.location).toMatch(/code=/);
    const claims = await idClaims(c, (await exchange(t.app, p, c, done.location!)).id_token);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect((await t.services.mfa.totp.status(u.id)).enrolled).toBe(true);
  });

  it('policy off never asks, even a user with an authenticator app', async () => {
    const { p, c, u } = await tenant();
    await enrolTotp(u);
    await t.services.mfa.setPolicy(p.id, 'off');
    const b = browser(t.app);
    const done = await allowIfAsked(b, await passwordStep(b, p, c, u.email));
    expect(done.location).toMatch(/code=/);
  });

  it('a second factor pending when the policy turns off: the password is asked again, never a dead end', async () => {
    const { p, c, u } = await tenant('required');
    const b = browser(t.app);
    await passwordStep(b, p, c, u.email);
    expect(b.pageTitle()).toBe('Set up authenticator app');
    await t.services.mfa.setPolicy(p.id, 'off');
    await b.get(/action="(\/interaction\/[^/"]+)\/totp-setup"/.exec(b.html)![1]);
    expect(b.pageTitle()).toBe('Sign in');
    const done = await allowIfAsked(b, await b.submit('/signin', { email: u.email, password: TEST_PASSWORD }));
    expect(done.location).toMatch(/code=/);
  });

  it('step-up: acr_values=urn:latchkey:acr:mfa on a password-only session; prompt=none answers interaction_required', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    expect((await allowIfAsked(b, await passwordStep(b, p, c, u.email))).location).toMatch(/code=/);

    // prompt=none cannot step up: interaction_required.
    const none = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none', acr_values: ACR_MFA })}`);
    const err = new URL(none.location!);
    expect(err.searchParams.get('error')).toBe('interaction_required');
    // Without acr_values prompt=none still signs in silently, at acr pwd.
    const silent = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(silent.location!).searchParams.get('code')).toBeTruthy();

    // Asked interactively: a user without a second factor sets one up, then the session is multi-factor.
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { acr_values: ACR_MFA })}`);
    expect(b.pageTitle()).toBe('Choose an account');
    await b.submit('/chooser', { account: u.id });
    expect(b.pageTitle()).toBe('Set up authenticator app');
    const secret = setupKeyOf(b.html);
    await b.submit('/totp-setup', { code: totpAt(secret, now()) });
    const done = await allowIfAsked(b, await b.submit('/continue', {}));
    const claims = await idClaims(c, (await exchange(t.app, p, c, done.location!)).id_token);
    expect(claims.acr).toBe(ACR_MFA);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);

    // Now prompt=none with acr_values mfa succeeds silently.
    const after = await b.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none', acr_values: ACR_MFA })}`);
    const code = new URL(after.location!).searchParams.get('code');
    expect(code).toBeTruthy();
  });

  it('step-up of a signed-in user who has an authenticator app: the second-factor page, then acr mfa', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    expect((await allowIfAsked(b, await passwordStep(b, p, c, u.email))).location).toMatch(/code=/); // password only
    const { secret } = await enrolTotp(u); // enrolled afterwards (e.g. on another device)
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { acr_values: ACR_MFA, login_hint: u.email })}`); // the hint skips the chooser
    expect(b.pageTitle()).toBe('Two-step verification');
    const done = await allowIfAsked(b, await b.submit('/second-factor', { code: totpAt(secret, now()) }));
    expect((await idClaims(c, (await exchange(t.app, p, c, done.location!)).id_token)).acr).toBe(ACR_MFA);
  });

  it('max_age re-authentication asks the same factors again', async () => {
    const { p, c, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const b = browser(t.app);
    await passwordStep(b, p, c, u.email);
    expect((await allowIfAsked(b, await b.submit('/second-factor', { code: totpAt(secret, now()) }))).location).toMatch(
      /code=/,
    );
    tick(120);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { max_age: '60' })}`);
    await b.submit('/chooser', { account: u.id });
    expect(b.pageTitle()).toBe('Sign in');
    await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(b.pageTitle()).toBe('Two-step verification');
    const done = await allowIfAsked(b, await b.submit('/second-factor', { code: totpAt(secret, now()) }));
    const claims = await idClaims(c, (await exchange(t.app, p, c, done.location!)).id_token);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.auth_time).toBe(Math.floor(clock / 1000));
  });

  it('the account page sign-in asks the second factor too', async () => {
    const { p, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    expect(b.pageTitle()).toBe('Two-step verification');
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.pageTitle()).toBe('Sign in'); // not signed in before the code
    await accountSignIn(b, p, u.email);
    const wrong = await b.submit(`/account/second-factor?platform_guid=${p.id}`, {
      method: 'totp',
      code: '000000' === totpAt(secret, now()) ? '111111' : '000000',
    });
    expect(wrong.res.status).toBe(400);
    await b.submit(`/account/second-factor?platform_guid=${p.id}`, { method: 'totp', code: totpAt(secret, now()) });
    expect(b.pageTitle()).toBe('Your account');
  });

  it("the account page's tab asked for before the sign-in (section=security) is where the second factor ends", async () => {
    const { p, u } = await tenant();
    const { secret } = await enrolTotp(u);
    const b = browser(t.app);
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    await b.submit(`/account/signin?platform_guid=${p.id}&section=security`, {
      email: u.email,
      password: TEST_PASSWORD,
    });
    expect(b.pageTitle()).toBe('Two-step verification');
    await b.submit(`/account/second-factor?platform_guid=${p.id}`, { method: 'totp', code: totpAt(secret, now()) });
    expect(b.pageTitle()).toBe('Your account');
    expect(b.html).toMatch(/class="account-tab" aria-current="page">Security</);
  });

  it('discovery lists acr_values_supported and the amr/acr claims', async () => {
    const { p } = await tenant();
    const res = await request(t.app).get(`/.well-known/openid-configuration?platform_guid=${p.id}`);
    expect(res.body.acr_values_supported).toEqual([ACR_PWD, ACR_MFA]);
    expect(res.body.claims_supported).toEqual(expect.arrayContaining(['amr', 'acr']));
  });
});
