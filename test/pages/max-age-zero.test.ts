import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { authorizeQuery, exchange, jwtPayload } from '../support/account-flows';

// A slow request: every read of the provider's clock is a second later than the one before, so a
// second boundary always passes between the sign-in and the decision that follows it.
let clock = Date.now();
let slow = false;
const now = () => {
  if (slow) clock += 1000;
  return new Date(clock);
};

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({}, now);
});
afterAll(() => t.close());

describe('max_age=0 (behaves as prompt=login)', () => {
  it('a sign-in made during the request satisfies it, however long the request took', async () => {
    const p = await buildPlatform(t.services, 'Acme Travel');
    const c = await buildClient(t.services, p.id);
    const u = await buildUser(t.services, p.id, {
      email: `max-age-${Math.random().toString(36).slice(2, 10)}@example.com`,
    });
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c, { max_age: '0', login_hint: u.email })}`);
    expect(b.pageTitle()).toBe('Sign in');
    slow = true;
    let step = await b.submit('/signin', { email: u.email, password: TEST_PASSWORD });
    slow = false;
    if (!step.location && b.pageTitle()?.includes('wants to access'))
      step = await b.submit('/consent', { decision: 'allow' });
    expect(b.pageTitle()).not.toBe('Sign in');
    expect(step.location).toMatch(/code=/);
    const tokens = await exchange(t.app, p, c, step.location!);
    expect(typeof jwtPayload(tokens.id_token).auth_time).toBe('number');
  });
});
