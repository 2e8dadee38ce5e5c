import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { runCommand, helpText } from '../../src/cli/commands';
import { consoleBrowser } from './console-support';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(() => t.close());

const newEmail = () => `Op-${Math.random().toString(36).slice(2, 10)}@Example.com`;

describe('admin operator (CLI)', () => {
  it('creates an operator with a generated password, printed once, that signs in to the console', async () => {
    const email = newEmail();
    const out = await runCommand(t.services, ['operator', 'create', '--email', email]);
    expect(out).toMatchObject({ email: email.toLowerCase(), platform_guid: null, totp_enrolled: false, last_sign_in_at: null, disabled_at: null });
    expect(out.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const listed = (await runCommand(t.services, ['operator', 'list'])).operators as Array<Record<string, unknown>>;
    const row = listed.find((o) => o.email === email.toLowerCase())!;
    expect(row).toBeDefined();
    expect(JSON.stringify(listed)).not.toMatch(/password|secret|argon2/);

    // The generated password is the one the console checks.
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    const res = await b.post('/admin/sign-in', { email: email.toUpperCase(), password: out.password as string });
    expect({ status: res.status, location: res.headers.location }).toEqual({ status: 303, location: '/admin/sign-in/authenticator' });

    const audit = (await t.services.audit.list({ kind: 'operator.created' }, 200)).events.find((e) => e.details.operator_id === out.id)!;
    expect(audit).toMatchObject({ actorType: 'cli', platformId: null, details: { operator_id: out.id, email: email.toLowerCase() } });
    expect(JSON.stringify(audit)).not.toContain(out.password as string);
  });

  it('creates a platform operator with a given password; prints no password then', async () => {
    const p = await buildPlatform(t.services);
    const email = newEmail();
    const out = await runCommand(t.services, ['operator', 'create', '--email', email, '--platform', p.id, '--password', 'a chosen operator password']);
    expect(out).toMatchObject({ platform_guid: p.id });
    expect(out).not.toHaveProperty('password');
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    expect((await b.post('/admin/sign-in', { email, password: 'a chosen operator password' })).status).toBe(303);
  });

  it('refuses bad input plainly', async () => {
    const email = newEmail();
    await runCommand(t.services, ['operator', 'create', '--email', email, '--password', 'long enough password']);
    await expect(runCommand(t.services, ['operator', 'create', '--email', email.toUpperCase()])).rejects.toThrow(/exists/);
    await expect(runCommand(t.services, ['operator', 'create', '--email', 'not-an-email'])).rejects.toThrow(/email must be an email address/);
    await expect(runCommand(t.services, ['operator', 'create', '--email', newEmail(), '--password', 'short'])).rejects.toThrow(/password must be 12 to 256 characters/);
    await expect(runCommand(t.services, ['operator', 'create', '--email', newEmail(), '--platform', 'nope'])).rejects.toThrow(/must be a UUID/);
    await expect(runCommand(t.services, ['operator', 'create', '--email', newEmail(), '--platform', '00000000-0000-4000-8000-000000000000'])).rejects.toThrow(/unknown platform/);
    await expect(runCommand(t.services, ['operator', 'create'])).rejects.toThrow(/--email is required/);
    await expect(runCommand(t.services, ['operator', 'disable', '--email', 'nobody@example.com'])).rejects.toThrow(/unknown operator/);
    expect(helpText(['operator'])).toMatch(/admin operator create --email E \[--platform G\] \[--password P\]/);
  });

  it('disables an operator: audited, and its password no longer signs in', async () => {
    const email = newEmail();
    await runCommand(t.services, ['operator', 'create', '--email', email, '--password', 'long enough password']);
    const out = await runCommand(t.services, ['operator', 'disable', '--email', email]);
    expect(out.disabled_at).toEqual(expect.any(String));
    expect((await t.services.audit.list({ kind: 'operator.disabled' }, 200)).events.some((e) => e.details.operator_id === out.id)).toBe(true);
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    expect((await b.post('/admin/sign-in', { email, password: 'long enough password' })).status).toBe(401);
  });
});
