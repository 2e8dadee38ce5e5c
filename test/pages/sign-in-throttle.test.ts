import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { runCommand } from '../../src/cli/commands';
import {
  afterAttempt,
  createAttemptThrottle,
  lockedSeconds,
  SIGN_IN_ACCOUNT_SOURCE,
} from '../../src/services/attempt-throttle.service';

// A movable clock: locks are minutes long, tests move time instead of waiting.
let clock = Date.now();
const now = () => new Date(clock);
type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
let t: TestApp;
let other: TestApp; // a second instance on the same database
beforeAll(async () => {
  t = await buildTestApp({ TRUST_PROXY: 'loopback' }, now);
  other = await buildTestApp({ TRUST_PROXY: 'loopback' }, now);
});
afterAll(async () => {
  await t.close();
  await other.close();
});

async function setup() {
  const p = await buildPlatform(t.services);
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id);
  return { p, c, u };
}

const authorizeUrl = (
  p: { id: string },
  c: { id: string; redirectUris: string[] },
  extra: Record<string, string> = {},
) =>
  `/oauth/authorize?${new URLSearchParams({ platform_guid: p.id, response_type: 'code', client_id: c.id, redirect_uri: c.redirectUris[0], scope: 'openid email', state: 's', ...extra })}`;
const message = (html: string) => /role="alert"[^>]*>\s*<p>([^<]+)/.exec(html)?.[1];

/** A browser at the sign-in page, seen from `ip`. */
async function signInPage(p: { id: string }, c: { id: string; redirectUris: string[] }, ip: string) {
  const b = browser(t.app);
  b.agent.set('X-Forwarded-For', ip);
  await b.get(authorizeUrl(p, c));
  expect(b.pageTitle()).toBe('Sign in');
  return b;
}

describe('sign-in throttling', () => {
  it('locks one account from one source after 5 failures, without checking the password, for minutes only', async () => {
    const { p, c, u } = await setup();
    const b = await signInPage(p, c, '198.51.100.7');
    for (let i = 0; i < 4; i++) {
      const res = await b.submit('/signin', { email: u.email, password: `wrong ${i}` });
      expect([res.res.status, message(res.res.text)]).toEqual([400, 'Incorrect email or password.']);
    }
    const fifth = await b.submit('/signin', { email: u.email, password: 'wrong 4' });
    expect(fifth.res.status).toBe(429);
    expect(message(fifth.res.text)).toBe('Too many attempts. Try again in 1 minute.');
    expect(fifth.res.headers['retry-after']).toBe('60');
    expect(b.pageTitle()).toBe('Sign in'); // the form is shown again

    // Locked: even the right password is refused, and it is not checked at all.
    clock += 30_000;
    const right = await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect([right.res.status, message(right.res.text)]).toEqual([429, 'Too many attempts. Try again in 1 minute.']);
    expect(right.res.headers['retry-after']).toBe('30');

    // The user elsewhere is not locked out by the attacker's guesses.
    const elsewhere = await signInPage(p, c, '203.0.113.9');
    const ok = await elsewhere.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(elsewhere.pageTitle()).toMatch(/wants to access your account/);
    expect(ok.res.status).toBe(200);

    // A minute later the source may try again.
    clock += 31_000;
    const later = await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    expect(later.res.status).toBe(200);
    expect(b.pageTitle()).toMatch(/wants to access your account/);
  });

  it('gives an unknown email the same message and the same lock as a wrong password', async () => {
    const { p, c } = await setup();
    const b = await signInPage(p, c, '198.51.100.8');
    const statuses: number[] = [];
    const messages = new Set<string | undefined>();
    for (let i = 0; i < 5; i++) {
      const res = await b.submit('/signin', { email: 'nobody@example.com', password: `guess ${i}` });
      statuses.push(res.res.status);
      messages.add(message(res.res.text));
    }
    expect(statuses).toEqual([400, 400, 400, 400, 429]);
    expect([...messages]).toEqual(['Incorrect email or password.', 'Too many attempts. Try again in 1 minute.']);
  });

  it('grows the lock with each consecutive lock, up to 15 minutes', () => {
    const p = SIGN_IN_ACCOUNT_SOURCE;
    let row = {
      key: 'k',
      failures: 0,
      windowStartedAt: new Date(0),
      locks: 0,
      lockedUntil: null as Date | null,
      expiresAt: new Date(0),
    };
    let at = Date.UTC(2030, 0, 1);
    const locks: number[] = [];
    for (let round = 0; round < 7; round++) {
      for (let i = 0; i < p.threshold; i++) row = afterAttempt(row, new Date(at), p);
      const seconds = lockedSeconds(row, new Date(at));
      locks.push(seconds / 60);
      at += seconds * 1000 + 1000; // try again just after the lock ends
    }
    expect(locks).toEqual([1, 2, 4, 8, 15, 15, 15]);
    // An hour after the last lock, the escalation is forgotten.
    at += 3_600_000;
    for (let i = 0; i < p.threshold; i++) row = afterAttempt(row, new Date(at), p);
    expect(lockedSeconds(row, new Date(at))).toBe(60);
    // Failures older than the 15-minute window do not add up.
    let fresh: typeof row = { ...row, failures: 0, locks: 0, lockedUntil: null };
    for (let i = 0; i < 10; i++) fresh = afterAttempt(fresh, new Date(at + i * 16 * 60_000), p);
    expect(fresh.lockedUntil).toBeNull();
  });

  it('checks no password at all while locked', async () => {
    const { p, u } = await setup();
    const verify = jest.fn(async () => ({ ok: false as const, userId: null }));
    const throttle = createAttemptThrottle(t.services.deps, verify);
    for (let i = 0; i < 5; i++) await throttle.attemptSignIn(p.id, u.email, 'wrong', '198.51.100.14');
    expect(verify).toHaveBeenCalledTimes(5);
    expect(await throttle.attemptSignIn(p.id, u.email, TEST_PASSWORD, '198.51.100.14')).toEqual({
      ok: false,
      lockedSeconds: 60,
    });
    expect(await throttle.attemptSignIn(p.id, u.email.toUpperCase(), TEST_PASSWORD, '198.51.100.14')).toEqual({
      ok: false,
      lockedSeconds: 60,
    });
    expect(verify).toHaveBeenCalledTimes(5);
  });

  it('resets the count on a successful sign-in', async () => {
    const { p, u } = await setup();
    const attempt = (password: string) => t.services.throttle.attemptSignIn(p.id, u.email, password, '198.51.100.10');
    for (let i = 0; i < 4; i++) expect(await attempt('wrong')).toEqual({ ok: false, lockedSeconds: 0 });
    expect((await attempt(TEST_PASSWORD)).ok).toBe(true);
    for (let i = 0; i < 4; i++) expect(await attempt('wrong')).toEqual({ ok: false, lockedSeconds: 0 });
    expect(await attempt('wrong')).toEqual({ ok: false, lockedSeconds: 60 });
  });

  it('counts jointly across instances and under concurrency', async () => {
    const { p, u } = await setup();
    const source = '198.51.100.11';
    // 4 failures at once, split over both instances: below the threshold, so every one must be
    // counted (no lost update) whatever the interleaving.
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        (i % 2 ? other : t).services.throttle.attemptSignIn(p.id, u.email, `wrong ${i}`, source),
      ),
    );
    expect(results.every((r) => !r.ok)).toBe(true);
    const key = () =>
      t.database.db('attempt_throttles').where('key', 'like', `signin:account:${p.id}:%:${source}`).first();
    expect({ locks: (await key()).locks, failures: (await key()).failures }).toEqual({ locks: 0, failures: 4 });
    // the fifth, on the other instance, reaches the threshold and locks the pair
    expect(await other.services.throttle.attemptSignIn(p.id, u.email, 'wrong 5', source)).toEqual({
      ok: false,
      lockedSeconds: 60,
    });
    expect(await t.services.throttle.attemptSignIn(p.id, u.email, TEST_PASSWORD, source)).toEqual({
      ok: false,
      lockedSeconds: 60,
    });
  });

  it('locks a source that guesses across many accounts after 20 failures, only that source', async () => {
    const { p, u } = await setup();
    const source = '198.51.100.12';
    const outcomes = [];
    for (let i = 0; i < 20; i++)
      outcomes.push(await t.services.throttle.attemptSignIn(p.id, `victim-${i}@example.com`, 'Summer2026!', source));
    expect(outcomes.slice(0, 19).every((o) => !o.ok && o.lockedSeconds === 0)).toBe(true);
    expect(outcomes[19]).toEqual({ ok: false, lockedSeconds: 60 });
    expect(await t.services.throttle.attemptSignIn(p.id, u.email, TEST_PASSWORD, source)).toEqual({
      ok: false,
      lockedSeconds: 60,
    });
    expect((await t.services.throttle.attemptSignIn(p.id, u.email, TEST_PASSWORD, '198.51.100.13')).ok).toBe(true);
    // Another platform's users are not affected by this platform's lock.
    const q = await buildPlatform(t.services);
    const v = await buildUser(t.services, q.id);
    expect((await t.services.throttle.attemptSignIn(q.id, v.email, TEST_PASSWORD, source)).ok).toBe(true);
  });
});

describe('sign-up throttling', () => {
  const fields = { given_name: 'Nia', family_name: 'Okafor', birthdate: '2000-01-31', password: 'a long pass phrase' };

  async function signUpPage(ip: string) {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const b = browser(t.app);
    b.agent.set('X-Forwarded-For', ip);
    await b.get(authorizeUrl(p, c, { action: 'register' }));
    return { p, c, b };
  }

  it('never locks out a person correcting form mistakes: validation errors are not counted', async () => {
    const { p, b } = await signUpPage('198.51.100.22');
    const mistakes: Array<Record<string, string>> = [
      { password: 'short' },
      { birthdate: '2020-01-01' },
      { phone_number: '12' },
      { given_name: '' },
      { email: 'not-an-email' },
    ];
    for (let i = 0; i < 15; i++) {
      const res = await b.submit('/signup', { ...fields, email: 'nia@example.com', ...mistakes[i % mistakes.length] });
      expect(res.res.status).toBe(400);
    }
    const done = await b.submit('/signup', { ...fields, email: 'nia@example.com' });
    expect(done.res.status).not.toBe(429);
    expect(await t.database.db('users').where({ platform_id: p.id })).toHaveLength(1);
  });

  it('counts probes of existing emails: the 11th from one source within the hour gets 429 and the form', async () => {
    const { p, c, b } = await signUpPage('198.51.100.20');
    const taken = await Promise.all(Array.from({ length: 11 }, () => buildUser(t.services, p.id)));
    for (let i = 0; i < 10; i++) {
      const res = await b.submit('/signup', { ...fields, email: taken[i].email });
      expect([res.res.status, b.pageTitle()]).toEqual([400, 'Create your account']);
      expect(res.res.text).toContain('An account with this email already exists');
    }
    const refused = await b.submit('/signup', { ...fields, email: 'n10@example.com' });
    expect(refused.res.status).toBe(429);
    expect(message(refused.res.text)).toBe('Too many attempts. Try again in 10 minutes.');
    expect(b.pageTitle()).toBe('Create your account');
    expect(await t.database.db('users').where({ platform_id: p.id })).toHaveLength(11);

    // Another source signs up normally.
    const elsewhere = browser(t.app);
    elsewhere.agent.set('X-Forwarded-For', '198.51.100.21');
    await elsewhere.get(authorizeUrl(p, c, { action: 'register' }));
    await elsewhere.submit('/signup', { ...fields, email: 'n11@example.com' });
    expect(await t.database.db('users').where({ platform_id: p.id })).toHaveLength(12);
  });

  it('counts created accounts: ten from one source lock the eleventh', async () => {
    const p = await buildPlatform(t.services);
    const source = '198.51.100.23';
    const signUp = (i: number) =>
      t.services.throttle.attemptSignUp(p.id, source, () =>
        t.services.users.createUser(p.id, {
          email: `c${i}@example.com`,
          password: fields.password,
          givenName: 'C',
          familyName: 'D',
          birthdate: fields.birthdate,
        }),
      );
    for (let i = 0; i < 10; i++) expect((await signUp(i)).ok).toBe(true);
    expect(await signUp(10)).toEqual({ ok: false, errors: [], lockedSeconds: 600 });
  });
});

describe('operators: admin throttle list and clear', () => {
  it('lists locks per kind with the email only hashed, and clears them by email or source', async () => {
    const { p, u } = await setup();
    const source = '203.0.113.77';
    for (let i = 0; i < 5; i++) await t.services.throttle.attemptSignIn(p.id, u.email, `wrong ${i}`, source);
    const locked = await runCommand(t.services, ['throttle', 'list', '--platform', p.id, '--locked']);
    expect(locked.throttles).toEqual([
      expect.objectContaining({
        kind: 'sign_in_account',
        platform_guid: p.id,
        source,
        locked_seconds: 60,
        locks: 1,
        email_sha256: expect.any(String),
      }),
    ]);
    expect(JSON.stringify(locked)).not.toContain(u.email);
    const all = await runCommand(t.services, ['throttle', 'list', '--platform', p.id]);
    expect((all.throttles as Array<{ kind: string }>).map((x) => x.kind).sort()).toEqual([
      'sign_in_account',
      'sign_in_source',
    ]);
    expect(
      (await runCommand(t.services, ['throttle', 'list', '--platform', p.id, '--email', 'someone-else@example.com']))
        .throttles,
    ).toEqual([]);

    expect(
      await runCommand(t.services, ['throttle', 'clear', '--platform', p.id, '--email', u.email.toUpperCase()]),
    ).toEqual({ platform_guid: p.id, cleared: 1 });
    expect((await t.services.throttle.attemptSignIn(p.id, u.email, TEST_PASSWORD, source)).ok).toBe(true);
    expect(await runCommand(t.services, ['throttle', 'clear', '--platform', p.id, '--source', source])).toEqual({
      platform_guid: p.id,
      cleared: 1,
    });
    expect((await runCommand(t.services, ['throttle', 'list', '--platform', p.id])).throttles).toEqual([]);
  });

  it('refuses a clear without a filter and unknown options', async () => {
    const p = await buildPlatform(t.services);
    await expect(runCommand(t.services, ['throttle', 'clear', '--platform', p.id])).rejects.toThrow(
      /--email, --source or --all/,
    );
    await expect(runCommand(t.services, ['throttle', 'list', '--nope'])).rejects.toThrow(/unknown option --nope/);
  });
});
