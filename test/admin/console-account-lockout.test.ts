import { cliActor } from '../../src/domain/admin';
import { buildTestApp } from '../helpers';
import { totpAt } from '../support/totp';
import { buildOperator, consoleBrowser, OPERATOR_PASSWORD, signInConsole } from './console-support';

// Sources come from X-Forwarded-For (TRUST_PROXY loopback), so each browser below is another address.
let clock = Date.now();
const now = () => new Date(clock);
const tick = (seconds: number) => {
  clock += seconds * 1000;
};

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ TRUST_PROXY: 'loopback' }, now);
});
afterAll(() => t.close());

let sources = 0;
/** A console browser at an address of its own. */
const browserAt = () => {
  const b = consoleBrowser(t.app);
  sources += 1;
  b.agent.set('X-Forwarded-For', `198.51.${Math.floor(sources / 250)}.${(sources % 250) + 1}`);
  return b;
};

const lockEvents = async (email: string) =>
  (await t.services.audit.list({ kind: 'operator.locked_out' }, 200)).events
    .filter((e) => e.details.email === email)
    .map((e) => e.details);

async function wrongPassword(email: string, attempt: number) {
  const b = browserAt();
  await b.get('/admin/sign-in');
  return b.post('/admin/sign-in', { email, password: `wrong password ${attempt}` });
}

describe('admin console: lockout per operator account', () => {
  it('locks the account after wrong passwords from several sources (no source reaching its own lock); audited as an account lock; short, then doubling', async () => {
    const op = await buildOperator(t.services);
    const bystander = await buildOperator(t.services);
    // Each wrong password from a source of its own: no source or email+source pair is near its lock.
    for (let i = 0; i < 9; i++) expect((await wrongPassword(op.email, i)).status).toBe(401);
    const tenth = await wrongPassword(op.email, 9);
    expect(tenth.status).toBe(429);
    expect(tenth.text).toMatch(/Too many attempts/);

    // The right password from a new source: refused unchecked, with Retry-After.
    const fresh = browserAt();
    await fresh.get('/admin/sign-in');
    const refused = await fresh.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Only this account: another operator signs in from that source.
    expect((await fresh.post('/admin/sign-in', { email: bystander.email, password: OPERATOR_PASSWORD })).status).toBe(
      303,
    );

    expect(await lockEvents(op.email)).toEqual([
      { email: op.email, factor: 'password', throttle: 'account', locked_seconds: 60 },
    ]);

    // A minute later the account takes the password again; the next lock lasts twice as long.
    tick(61);
    const again = browserAt();
    await again.get('/admin/sign-in');
    expect((await again.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD })).status).toBe(303);
    for (let i = 0; i < 10; i++) await wrongPassword(op.email, 10 + i);
    expect((await lockEvents(op.email)).map((d) => d.locked_seconds)).toEqual([120, 60]);
  });

  it('locks the account after wrong codes from several sources, past the password; the right code is refused then', async () => {
    const op = await buildOperator(t.services);
    const secret = await signInConsole(browserAt(), op.email, now);
    tick(30);
    const codePages = [];
    for (let i = 0; i < 5; i++) {
      const b = browserAt();
      await b.get('/admin/sign-in');
      expect((await b.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD })).headers.location).toBe(
        '/admin/sign-in/code',
      );
      await b.get('/admin/sign-in/code');
      codePages.push(b);
    }
    const wrong = totpAt(secret, now()) === '000000' ? '111111' : '000000';
    const statuses = [];
    for (const b of codePages)
      for (let i = 0; i < 2; i++) statuses.push((await b.post('/admin/sign-in/code', { code: wrong })).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 400, 400, 400, 400, 429]);
    const right = await codePages[0].post('/admin/sign-in/code', { code: totpAt(secret, now()) });
    expect(right.status).toBe(429);
    expect(await lockEvents(op.email)).toEqual([
      { email: op.email, factor: 'totp', throttle: 'account', locked_seconds: 60 },
    ]);
  });

  it('names the email-and-source lock apart from the account lock', async () => {
    const op = await buildOperator(t.services);
    const b = browserAt();
    await b.get('/admin/sign-in');
    for (let i = 0; i < 5; i++) await b.post('/admin/sign-in', { email: op.email, password: `wrong password ${i}` });
    expect(await lockEvents(op.email)).toEqual([
      { email: op.email, factor: 'password', throttle: 'account_source', locked_seconds: 60 },
    ]);
  });

  it('`operator unlock` clears the account lock over every source at once, audited', async () => {
    const op = await buildOperator(t.services);
    const guesser = browserAt();
    await guesser.get('/admin/sign-in');
    for (let i = 0; i < 5; i++)
      await guesser.post('/admin/sign-in', { email: op.email, password: `wrong password ${i}` });
    for (let i = 0; i < 5; i++) await wrongPassword(op.email, 5 + i);
    const locked = browserAt();
    await locked.get('/admin/sign-in');
    expect((await locked.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD })).status).toBe(429);

    const { cleared } = await t.services.operators.unlock(cliActor('test'), op.email);
    expect(cleared).toBeGreaterThanOrEqual(2); // the account's own count, and the guesser's email+source
    const events = (await t.services.audit.list({ kind: 'operator.unlocked' }, 50)).events.filter(
      (e) => e.details.email === op.email,
    );
    expect(events.map((e) => e.details)).toEqual([{ operator_id: op.id, email: op.email, cleared }]);
    expect((await locked.post('/admin/sign-in', { email: op.email, password: OPERATOR_PASSWORD })).status).toBe(303);
    // Nothing left to clear: no second event.
    expect((await t.services.operators.unlock(cliActor('test'), op.email)).cleared).toBe(0);
    expect(
      (await t.services.audit.list({ kind: 'operator.unlocked' }, 50)).events.filter(
        (e) => e.details.email === op.email,
      ),
    ).toHaveLength(1);
  });
});
