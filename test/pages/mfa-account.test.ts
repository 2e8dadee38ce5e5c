import { buildTestApp } from '../helpers';
import { buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser, type Browser } from '../support/browser';
import { accountSignIn } from '../support/account-flows';
import { recoveryCodesOf, setupKeyOf, totpAt } from '../support/totp';
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

async function signedIn() {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const u = await buildUser(t.services, p.id, { email: newEmail() });
  const b = browser(t.app);
  await accountSignIn(b, p, u.email);
  expect(b.pageTitle()).toBe('Your account');
  await b.get(`/account?platform_guid=${p.id}&section=security`); // two-step verification is on the Security tab
  return { p, u, b };
}

/** Account page → "Set up authenticator app" → the setup page; returns the secret. */
async function startSetup(b: Browser, p: { id: string }, u: { id: string }) {
  await b.submit(`/account/totp/setup?platform_guid=${p.id}`, { account: u.id });
  expect(b.pageTitle()).toBe('Set up authenticator app');
  return setupKeyOf(b.html);
}

async function enrol(b: Browser, p: { id: string }, u: { id: string }) {
  const secret = await startSetup(b, p, u);
  await b.submit(`/account/totp/confirm?platform_guid=${p.id}`, { account: u.id, code: totpAt(secret, now()) });
  expect(b.pageTitle()).toBe('Save your recovery codes');
  return { secret, codes: recoveryCodesOf(b.html) };
}

describe('two-step verification on the account page', () => {
  it('sets up an authenticator app: QR code and setup key, confirmed with a first code, ten recovery codes shown once', async () => {
    const { p, u, b } = await signedIn();
    expect(b.html).toContain('Two-step verification');
    expect(b.html).toMatch(/<button[^>]*>Set up authenticator app<\/button>/);

    const secret = await startSetup(b, p, u);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/); // 20 random bytes, base32
    expect(b.html).toMatch(/<img class="mfa-qr" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+" alt="QR code[^"]*"/);
    expect(b.html).toMatch(/<label for="code">Code<\/label>/);
    expect(b.html).toMatch(/<button[^>]*>Verify<\/button>/);
    const qr = Buffer.from(/data:image\/svg\+xml;base64,([^"]+)"/.exec(b.html)![1], 'base64').toString('utf8');
    expect(qr).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);

    // The secret is stored sealed under MASTER_KEY, never in clear.
    const row = await t.database.db('user_totp').where({ user_id: u.id }).first();
    expect(row.sealed_secret).not.toContain(secret);
    expect(row.confirmed_at).toBeNull();

    const wrong = await b.submit(`/account/totp/confirm?platform_guid=${p.id}`, {
      account: u.id,
      code: '000000' === totpAt(secret, now()) ? '111111' : '000000',
    });
    expect(wrong.res.status).toBe(400);
    expect(b.html).toContain('That code did not match');
    expect(setupKeyOf(b.html)).toBe(secret); // the same pending secret, shown again

    await b.submit(`/account/totp/confirm?platform_guid=${p.id}`, { account: u.id, code: totpAt(secret, now()) });
    expect(b.pageTitle()).toBe('Save your recovery codes');
    expect(b.html).not.toContain('Earlier recovery codes'); // the first codes: nothing earlier stopped working
    const codes = recoveryCodesOf(b.html);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    // Stored hashed only.
    const stored = await t.database.db('user_recovery_codes').where({ user_id: u.id });
    expect(stored).toHaveLength(10);
    for (const s of stored) for (const c of codes) expect(s.code_hash).not.toContain(c.replace('-', ''));

    await b.get(`/account?platform_guid=${p.id}&section=security`);
    expect(b.html).toContain('Recovery codes left: 10 of 10');
    expect(b.html).toContain('Remove authenticator app');
    expect(b.html).not.toMatch(/<button[^>]*>Set up authenticator app<\/button>/);
    // The setup page is gone once confirmed.
    await b.get(`/account/totp?platform_guid=${p.id}&account=${u.id}`);
    expect(b.pageTitle()).toBe('Your account');
  });

  it('refuses a used step: the code that confirmed the app cannot prove it again', async () => {
    const { p, u, b } = await signedIn();
    const { secret } = await enrol(b, p, u);
    const used = totpAt(secret, now());
    await b.get(`/account/totp/remove?platform_guid=${p.id}&account=${u.id}`);
    expect(b.pageTitle()).toBe('Remove authenticator app');
    const replay = await b.submit(`/account/totp/remove?platform_guid=${p.id}`, { account: u.id, proof: used });
    expect(replay.res.status).toBe(400);
    expect(b.html).toContain('That code or password is not right.');
    // The next step's code (±1 step is accepted) removes it.
    tick(30);
    await b.submit(`/account/totp/remove?platform_guid=${p.id}`, { account: u.id, proof: totpAt(secret, now()) });
    expect(b.pageTitle()).toBe('Your account');
    expect(b.html).toContain('Your authenticator app was removed.');
    expect(await t.database.db('user_totp').where({ user_id: u.id }).first()).toBeUndefined();
    expect(await t.database.db('user_recovery_codes').where({ user_id: u.id })).toHaveLength(0);
  });

  it('regenerates recovery codes after the password: the old ones stop working', async () => {
    const { p, u, b } = await signedIn();
    const { codes } = await enrol(b, p, u);
    await b.get(`/account/recovery-codes?platform_guid=${p.id}&account=${u.id}`);
    expect(b.pageTitle()).toBe('Get new recovery codes');
    const bad = await b.submit(`/account/recovery-codes?platform_guid=${p.id}`, {
      account: u.id,
      proof: 'not the password',
    });
    expect(bad.res.status).toBe(400);
    await b.submit(`/account/recovery-codes?platform_guid=${p.id}`, { account: u.id, proof: TEST_PASSWORD });
    expect(b.pageTitle()).toBe('Save your recovery codes');
    expect(b.html).toContain('Earlier recovery codes no longer work.');
    const fresh = recoveryCodesOf(b.html);
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((c) => codes.includes(c))).toEqual([]);
    expect(await t.services.mfa.recoveryCodes.use(u.id, codes[0])).toBe(false);
    expect(await t.services.mfa.recoveryCodes.use(u.id, fresh[0].toUpperCase())).toBe(true); // case and dash ignored
    expect(await t.services.mfa.recoveryCodes.use(u.id, fresh[0])).toBe(false); // one use
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    expect(b.html).toContain('Recovery codes left: 9 of 10');
  });

  it('throttles guesses of the proof like sign-in: the sixth wrong code answers 429', async () => {
    const { p, u, b } = await signedIn();
    await enrol(b, p, u);
    await b.get(`/account/totp/remove?platform_guid=${p.id}&account=${u.id}`);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push(
        (await b.submit(`/account/totp/remove?platform_guid=${p.id}`, { account: u.id, proof: String(100000 + i) })).res
          .status,
      );
    expect(statuses.slice(0, 4)).toEqual([400, 400, 400, 400]);
    expect(statuses.slice(4)).toEqual([429, 429]);
    expect(b.html).toContain('Too many attempts');
    expect((await t.services.mfa.totp.status(u.id)).enrolled).toBe(true);
  });

  it('forms need the CSRF token and an account signed in on this browser', async () => {
    const { p, u, b } = await signedIn();
    const noCsrf = await b.agent.post(`/account/totp/setup?platform_guid=${p.id}`).type('form').send({ account: u.id });
    expect(noCsrf.status).toBe(403);
    const other = browser(t.app);
    await other.get(`/account/totp?platform_guid=${p.id}&account=${u.id}`);
    expect(other.pageTitle()).toBe('Sign in');
  });

  it('admin platform mfa sets the policy; off hides the section; admin user reset-mfa removes the app', async () => {
    const { p, u, b } = await signedIn();
    await expect(
      runCommand(t.services, ['platform', 'mfa', '--platform', p.id, '--policy', 'sometimes']),
    ).rejects.toThrow(/--policy must be one of off, optional, required/);
    expect(await runCommand(t.services, ['platform', 'mfa', '--platform', p.id, '--policy', 'off'])).toEqual({
      platform_guid: p.id,
      mfa: 'off',
    });
    expect(await t.services.mfa.policyOf(p.id)).toBe('off');
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    expect(b.html).not.toContain('Two-step verification');
    await runCommand(t.services, ['platform', 'mfa', '--platform', p.id, '--policy', 'required']);
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    expect(b.html).toContain('This service requires a second step');
    await enrol(b, p, u);
    expect(await runCommand(t.services, ['user', 'reset-mfa', '--platform', p.id, '--email', u.email])).toMatchObject({
      sub: u.id,
      totp_removed: true,
    });
    expect((await t.services.mfa.totp.status(u.id)).enrolled).toBe(false);
  });
});
