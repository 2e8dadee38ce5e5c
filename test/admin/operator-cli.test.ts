import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { runCommand, helpText } from '../../src/cli/commands';
import { totpAt } from '../support/totp';
import { consoleBrowser, h1Of, OPERATOR_PASSWORD, setupKeyOf, signInConsole } from './console-support';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const newEmail = () => `Op-${Math.random().toString(36).slice(2, 10)}@Example.com`;

describe('admin operator (CLI)', () => {
  it('creates an operator with a generated password, printed once, that signs in to the console', async () => {
    const email = newEmail();
    const out = await runCommand(t.services, ['operator', 'create', '--email', email]);
    expect(out).toMatchObject({
      email: email.toLowerCase(),
      platform_guid: null,
      totp_enrolled: false,
      last_sign_in_at: null,
      disabled_at: null,
    });
    expect(out.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const listed = (await runCommand(t.services, ['operator', 'list'])).operators as Array<Record<string, unknown>>;
    const row = listed.find((o) => o.email === email.toLowerCase())!;
    expect(row).toBeDefined();
    expect(JSON.stringify(listed)).not.toMatch(/password|secret|argon2/);

    // The generated password is the one the console checks.
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    const res = await b.post('/admin/sign-in', { email: email.toUpperCase(), password: out.password as string });
    expect({ status: res.status, location: res.headers.location }).toEqual({
      status: 303,
      location: '/admin/sign-in/authenticator',
    });

    const audit = (await t.services.audit.list({ kind: 'operator.created' }, 200)).events.find(
      (e) => e.details.operator_id === out.id,
    )!;
    expect(audit).toMatchObject({
      actorType: 'cli',
      platformId: null,
      details: { operator_id: out.id, email: email.toLowerCase() },
    });
    expect(JSON.stringify(audit)).not.toContain(out.password as string);
  });

  it('creates a platform operator with a given password; prints no password then', async () => {
    const p = await buildPlatform(t.services);
    const email = newEmail();
    const out = await runCommand(t.services, [
      'operator',
      'create',
      '--email',
      email,
      '--platform',
      p.id,
      '--password',
      'a chosen operator password',
    ]);
    expect(out).toMatchObject({ platform_guid: p.id });
    expect(out).not.toHaveProperty('password');
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    expect((await b.post('/admin/sign-in', { email, password: 'a chosen operator password' })).status).toBe(303);
  });

  it('refuses bad input plainly', async () => {
    const email = newEmail();
    await runCommand(t.services, ['operator', 'create', '--email', email, '--password', 'long enough password']);
    await expect(runCommand(t.services, ['operator', 'create', '--email', email.toUpperCase()])).rejects.toThrow(
      /exists/,
    );
    await expect(runCommand(t.services, ['operator', 'create', '--email', 'not-an-email'])).rejects.toThrow(
      /email must be an email address/,
    );
    await expect(
      runCommand(t.services, ['operator', 'create', '--email', newEmail(), '--password', 'short']),
    ).rejects.toThrow(/password must be 12 to 256 characters/);
    await expect(
      runCommand(t.services, ['operator', 'create', '--email', newEmail(), '--platform', 'nope']),
    ).rejects.toThrow(/must be a UUID/);
    await expect(
      runCommand(t.services, [
        'operator',
        'create',
        '--email',
        newEmail(),
        '--platform',
        '00000000-0000-4000-8000-000000000000',
      ]),
    ).rejects.toThrow(/unknown platform/);
    await expect(runCommand(t.services, ['operator', 'create'])).rejects.toThrow(/--email is required/);
    await expect(runCommand(t.services, ['operator', 'disable', '--email', 'nobody@example.com'])).rejects.toThrow(
      /unknown operator/,
    );
    expect(helpText(['operator'])).toMatch(/admin operator create --email E \[--platform G\] \[--password P\]/);
  });

  it('disables an operator: audited, and its password no longer signs in', async () => {
    const email = newEmail();
    await runCommand(t.services, ['operator', 'create', '--email', email, '--password', 'long enough password']);
    const out = await runCommand(t.services, ['operator', 'disable', '--email', email]);
    expect(out.disabled_at).toEqual(expect.any(String));
    expect(
      (await t.services.audit.list({ kind: 'operator.disabled' }, 200)).events.some(
        (e) => e.details.operator_id === out.id,
      ),
    ).toBe(true);
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    expect((await b.post('/admin/sign-in', { email, password: 'long enough password' })).status).toBe(401);
  });
});

describe('admin operator reset-mfa and enable (CLI)', () => {
  it('reset-mfa removes the app and ends the console sessions: the next sign-in sets up a second factor anew', async () => {
    const email = newEmail();
    await runCommand(t.services, ['operator', 'create', '--email', email, '--password', OPERATOR_PASSWORD]);
    const b = consoleBrowser(t.app);
    const oldSecret = await signInConsole(b, email.toLowerCase(), () => new Date());
    expect((await b.get('/admin/platforms')).status).toBe(200);
    const between = consoleBrowser(t.app); // a second sign-in, between password and code
    await between.get('/admin/sign-in');
    expect((await between.post('/admin/sign-in', { email, password: OPERATOR_PASSWORD })).headers.location).toBe(
      '/admin/sign-in/code',
    );

    const out = await runCommand(t.services, ['operator', 'reset-mfa', '--email', email.toUpperCase()]);
    expect(out).toMatchObject({
      email: email.toLowerCase(),
      totp_enrolled: false,
      totp_removed: true,
      passkeys_removed: 0,
      sessions_ended: 2,
      disabled_at: null,
    });
    // Both sessions are gone at once (not only at the operator's next sign-in).
    expect((await b.get('/admin/platforms')).headers.location).toBe('/admin/sign-in');
    expect((await between.post('/admin/sign-in/code', { code: totpAt(oldSecret, new Date()) })).headers.location).toBe(
      '/admin/sign-in',
    );

    // The next sign-in asks for a new app: another secret; the old app's code signs in nowhere.
    const again = consoleBrowser(t.app);
    await again.get('/admin/sign-in');
    const enrol = await again.follow(await again.post('/admin/sign-in', { email, password: OPERATOR_PASSWORD }));
    expect(h1Of(enrol.text)).toBe('Set up authenticator app');
    expect(setupKeyOf(enrol.text)).not.toBe(oldSecret);
    expect((await again.post('/admin/sign-in/authenticator', { code: totpAt(oldSecret, new Date()) })).status).toBe(
      400,
    );

    const event = (await t.services.audit.list({ kind: 'operator.mfa_reset' }, 200)).events.find(
      (e) => e.details.operator_id === out.id,
    )!;
    expect(event).toMatchObject({
      actorType: 'cli',
      details: { email: email.toLowerCase(), totp_removed: true, passkeys_removed: 0, sessions_ended: 2 },
    });
    expect(JSON.stringify(event)).not.toContain(oldSecret);
  });

  it('reset-mfa on an operator without a second factor changes nothing but is still audited; unknown emails are refused', async () => {
    const email = newEmail();
    await runCommand(t.services, ['operator', 'create', '--email', email, '--password', OPERATOR_PASSWORD]);
    expect(await runCommand(t.services, ['operator', 'reset-mfa', '--email', email])).toMatchObject({
      totp_removed: false,
      passkeys_removed: 0,
      sessions_ended: 0,
    });
    await expect(runCommand(t.services, ['operator', 'reset-mfa', '--email', 'nobody@example.com'])).rejects.toThrow(
      /unknown operator/,
    );
    await expect(runCommand(t.services, ['operator', 'reset-mfa'])).rejects.toThrow(/--email is required/);
    await expect(runCommand(t.services, ['operator', 'enable', '--email', 'nobody@example.com'])).rejects.toThrow(
      /unknown operator/,
    );
    expect(helpText(['operator'])).toMatch(/admin operator reset-mfa --email E/);
    expect(helpText(['operator'])).toMatch(/admin operator enable --email E/);
  });

  it('enables a disabled operator again: audited once, and the password signs in as before', async () => {
    const email = newEmail();
    const created = await runCommand(t.services, [
      'operator',
      'create',
      '--email',
      email,
      '--password',
      OPERATOR_PASSWORD,
    ]);
    await runCommand(t.services, ['operator', 'disable', '--email', email]);
    const out = await runCommand(t.services, ['operator', 'enable', '--email', email]);
    expect(out).toMatchObject({ id: created.id, disabled_at: null });
    await runCommand(t.services, ['operator', 'enable', '--email', email]); // already enabled: nothing to audit
    const events = (await t.services.audit.list({ kind: 'operator.enabled' }, 200)).events.filter(
      (e) => e.details.operator_id === created.id,
    );
    expect(events).toHaveLength(1);
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    expect((await b.post('/admin/sign-in', { email, password: OPERATOR_PASSWORD })).headers.location).toBe(
      '/admin/sign-in/authenticator',
    );
  });
});
