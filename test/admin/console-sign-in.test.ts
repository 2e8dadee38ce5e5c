import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { totpAt } from '../support/totp';
import { buildOperator, consoleBrowser, h1Of, OPERATOR_PASSWORD, setupKeyOf, signInConsole } from './console-support';

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

const auditKinds = async (operatorEmail: string) =>
  (await t.services.audit.list({}, 200)).events
    .filter((e) => e.actorName === operatorEmail || e.details.email === operatorEmail)
    .map((e) => e.kind);

describe('admin console sign-in', () => {
  it('refuses a wrong password or an unknown email with one generic message, and audits the failure', async () => {
    const op = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    const wrong = await b.post('/admin/sign-in', { email: op.email, password: 'not the password at all' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Wrong email or password');
    const unknown = await b.post('/admin/sign-in', { email: 'nobody-here@example.com', password: OPERATOR_PASSWORD });
    expect(unknown.status).toBe(401);
    expect(unknown.text).toContain('Wrong email or password');
    expect(await auditKinds(op.email)).toContain('operator.sign_in_failed');
    // Still not signed in: the console sends the browser to sign-in.
    const page = await b.get('/admin/platforms');
    expect({ status: page.status, location: page.headers.location }).toEqual({
      status: 303,
      location: '/admin/sign-in',
    });
  });

  it('locks an email and source after five wrong passwords: the right one is not even checked then', async () => {
    const op = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    for (let i = 0; i < 5; i++) await b.post('/admin/sign-in', { email: op.email, password: `wrong password ${i}` });
    const locked = await b.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD });
    expect(locked.status).toBe(429);
    expect(locked.text).toMatch(/Too many attempts/);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('takes an operator without an authenticator app to its enrolment before anything else; the first code signs in', async () => {
    const op = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    await b.get('/admin/sign-in');
    const afterPassword = await b.follow(
      await b.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD }),
    );
    expect(h1Of(afterPassword.text)).toBe('Set up authenticator app');
    expect(afterPassword.text).toContain('Setup key');
    const secret = setupKeyOf(afterPassword.text)!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    // The password alone shows nothing of the console, and the code page is not a way around the enrolment.
    expect((await b.get('/admin/platforms')).headers.location).toBe('/admin/sign-in');
    expect((await b.get('/admin/sign-in/code')).headers.location).toBe('/admin/sign-in/authenticator');

    const wrongCode = await b.post('/admin/sign-in/authenticator', {
      code: '000000' === totpAt(secret, now()) ? '111111' : '000000',
    });
    expect(wrongCode.status).toBe(400);
    expect(wrongCode.text).toContain('That code is not right');

    const done = await b.post('/admin/sign-in/authenticator', { code: totpAt(secret, now()) });
    expect({ status: done.status, location: done.headers.location }).toEqual({ status: 303, location: '/admin' });
    const page = await b.follow(done);
    expect(page.status).toBe(200);
    expect(h1Of(page.text)).toBe('Platforms');
    expect(await auditKinds(op.email)).toContain('operator.signed_in');
    expect((await t.services.operators.findActive(op.id))!.hasTotp).toBe(true);
  });

  it('issues a new authenticator secret at each sign-in before the first code: a second start shows another, and the first no longer confirms', async () => {
    const op = await buildOperator(t.services);
    const first = consoleBrowser(t.app);
    await first.get('/admin/sign-in');
    const firstKey = setupKeyOf(
      (await first.follow(await first.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD }))).text,
    )!;
    // A reload in the same sign-in shows the same secret: the app may already hold it.
    expect(setupKeyOf((await first.get('/admin/sign-in/authenticator')).text)).toBe(firstKey);

    const second = consoleBrowser(t.app);
    await second.get('/admin/sign-in');
    const secondPage = await second.follow(
      await second.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD }),
    );
    const secondKey = setupKeyOf(secondPage.text)!;
    expect(secondKey).toMatch(/^[A-Z2-7]{32}$/);
    expect(secondKey).not.toBe(firstKey);

    const stale = await second.post('/admin/sign-in/authenticator', { code: totpAt(firstKey, now()) });
    expect(stale.status).toBe(400);
    expect(stale.text).toContain('That code is not right');
    expect(setupKeyOf(stale.text)).toBe(secondKey);
    const done = await second.post('/admin/sign-in/authenticator', { code: totpAt(secondKey, now()) });
    expect(done.headers.location).toBe('/admin');

    // The first sign-in's secret confirms nothing either: refused, and sent to the code of the operator's (other) app.
    tick(30);
    const late = await first.post('/admin/sign-in/authenticator', { code: totpAt(firstKey, now()) });
    expect({ status: late.status, location: late.headers.location }).toEqual({
      status: 303,
      location: '/admin/sign-in/code',
    });
    expect((await first.get('/admin/platforms')).headers.location).toBe('/admin/sign-in');
  });

  it('asks an enrolled operator for a code and refuses a code whose step was already used', async () => {
    const op = await buildOperator(t.services);
    const secret = await signInConsole(consoleBrowser(t.app), op.email, now);
    tick(30);
    const first = consoleBrowser(t.app);
    await first.get('/admin/sign-in');
    const codePage = await first.follow(
      await first.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD }),
    );
    expect(h1Of(codePage.text)).toBe('Two-step verification');
    const code = totpAt(secret, now());
    expect((await first.post('/admin/sign-in/code', { code })).headers.location).toBe('/admin');

    // Another browser with the same code (same step): refused, although the password was right.
    const second = consoleBrowser(t.app);
    await second.get('/admin/sign-in');
    await second.follow(await second.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD }));
    const replay = await second.post('/admin/sign-in/code', { code });
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already used');
    expect((await second.get('/admin/platforms')).headers.location).toBe('/admin/sign-in');
    tick(30);
    expect((await second.post('/admin/sign-in/code', { code: totpAt(secret, now()) })).headers.location).toBe('/admin');
  });

  it('refuses every form without its CSRF token (403)', async () => {
    const op = await buildOperator(t.services);
    const anonymous = consoleBrowser(t.app);
    await anonymous.get('/admin/sign-in');
    const noToken = await anonymous.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD }, false);
    expect(noToken.status).toBe(403);
    expect(noToken.headers['set-cookie'] ?? []).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^latchkey\.admin=/)]),
    );

    const b = consoleBrowser(t.app);
    tick(30);
    await signInConsole(b, op.email, now);
    const forged = await b.post('/admin/platforms', { name: 'Forged' }, false);
    expect(forged.status).toBe(403);
    const wrong = await b.agent
      .post('/admin/platforms')
      .type('form')
      .send({ _csrf: 'x'.repeat(32), name: 'Forged' });
    expect(wrong.status).toBe(403);
    const signOut = await b.agent.post('/admin/sign-out').type('form').send({});
    expect(signOut.status).toBe(403);
  });

  it('sets its own cookie (path /admin, HttpOnly, SameSite=Strict) and no-store on every console page', async () => {
    const op = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    const signInPage = await b.get('/admin/sign-in');
    expect(signInPage.headers['cache-control']).toBe('no-store');
    expect(signInPage.headers['set-cookie'] ?? []).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^latchkey\.admin=/)]),
    ); // no row for a page view
    const afterPassword = await b.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD });
    const cookie = (afterPassword.headers['set-cookie'] as unknown as string[]).find((c) =>
      c.startsWith('latchkey.admin='),
    )!;
    expect(cookie).toMatch(/; Path=\/admin(;|$)/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).not.toMatch(/latchkey\.sid/);
    tick(30);
    await signInConsole(b, op.email, now);
    for (const path of ['/admin/platforms', '/admin/audit', '/admin/sign-in/code', '/admin/nothing-here']) {
      const res = await b.get(path);
      expect({ path, cacheControl: res.headers['cache-control'] }).toEqual({ path, cacheControl: 'no-store' });
    }
    // The hosted pages' session cookie is not the console's: an account page does not know this browser.
    expect((await b.get('/admin/nothing-here')).status).toBe(404);
  });

  it('ends the session after 30 idle minutes, after 8 hours however busy, at sign-out, and when the operator is disabled', async () => {
    const op = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    const secret = await signInConsole(b, op.email, now);
    tick(29 * 60);
    expect((await b.get('/admin/platforms')).status).toBe(200);
    tick(31 * 60);
    const idle = await b.get('/admin/platforms');
    expect(idle.headers.location).toBe('/admin/sign-in?expired=1');
    expect((await b.get('/admin/sign-in?expired=1')).text).toContain('Your session has ended');

    await signInConsole(b, op.email, now, secret);
    for (let i = 0; i < 17; i++) {
      tick(29 * 60);
      const res = await b.get('/admin/platforms');
      if (i < 16) expect(res.status).toBe(200);
      else expect(res.headers.location).toBe('/admin/sign-in?expired=1'); // 17 × 29 min > 8 h
    }

    tick(30);
    await signInConsole(b, op.email, now, secret);
    await b.get('/admin/platforms');
    const out = await b.post('/admin/sign-out', {});
    expect(out.headers.location).toBe('/admin/sign-in');
    expect((await b.get('/admin/platforms')).headers.location).toBe('/admin/sign-in');

    tick(30);
    await signInConsole(b, op.email, now, secret);
    await t.services.operators.disable({ actorType: 'cli', platformId: null }, op.email);
    expect((await b.get('/admin/platforms')).headers.location).toBe('/admin/sign-in?expired=1');
    const again = consoleBrowser(t.app);
    await again.get('/admin/sign-in');
    expect((await again.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD })).status).toBe(401);
  });

  it('shows a platform-scoped operator its own platform only; any other is "not found"', async () => {
    const mine = await buildPlatform(t.services, 'Mine');
    const other = await buildPlatform(t.services, 'Other');
    const op = await buildOperator(t.services, { platformId: mine.id });
    const b = consoleBrowser(t.app);
    await signInConsole(b, op.email, now);
    const list = await b.get('/admin/platforms');
    expect(list.text).toContain(mine.id);
    expect(list.text).not.toContain(other.id);
    expect(list.text).not.toContain('Create platform');
    expect((await b.get(`/admin/platforms/${mine.id}/rate-limits`)).status).toBe(200);
    for (const path of [
      `/admin/platforms/${other.id}/rate-limits`,
      `/admin/platforms/${other.id}/mail`,
      `/admin/platforms/${other.id}`,
      '/admin/platforms/not-a-uuid/mail',
    ]) {
      const res = await b.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(h1Of(res.text)).toBe('Not found');
    }
    const post = await b.post(`/admin/platforms/${other.id}/rate-limits/token`, { per_minute: '5', action: 'set' });
    expect(post.status).toBe(404);
    expect(
      (await t.services.admin.platforms.get({ actorType: 'cli', platformId: null }, other.id)).rateLimitOverrides,
    ).toEqual({});
    const create = await b.post('/admin/platforms', { name: 'Sneaky' });
    expect(create.status).toBe(403);
    // The audit log: only its platform's events, whatever the query asks for.
    await t.services.admin.platforms.setRateLimit({ actorType: 'cli', platformId: null }, other.id, 'token', 4242);
    await t.services.admin.platforms.setRateLimit({ actorType: 'cli', platformId: null }, mine.id, 'token', 4343);
    for (const path of [`/admin/audit?platform=${other.id}`, '/admin/audit']) {
      const audit = await b.get(path);
      expect(audit.status).toBe(200);
      expect(audit.text).toContain('4343');
      expect(audit.text).not.toContain('4242');
    }
  });

  it('the password page is not a way in for an unknown step: the code pages send a fresh browser to sign-in', async () => {
    const b = consoleBrowser(t.app);
    for (const path of ['/admin/sign-in/code', '/admin/sign-in/authenticator'])
      expect((await b.get(path)).headers.location).toBe('/admin/sign-in');
    const res = await request(t.app).get('/admin');
    expect(res.headers.location).toBe('/admin/sign-in');
  });
});
