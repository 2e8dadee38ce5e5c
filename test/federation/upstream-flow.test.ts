import { startClockedProvider, newBrowser, pathOf, type ClockedProvider } from '../support/standard-op';
import { buildUser, TEST_PASSWORD } from '../factories';
import { exchange, jwtPayload } from '../support/account-flows';
import { waitForMail } from '../support/outbox';
import { setupKeyOf, totpAt } from '../support/totp';
import {
  APP_REDIRECT,
  PROVIDER_NAME,
  SLUG,
  auditKinds,
  callbackOf,
  continueWith,
  federation,
  identitiesOf,
  startAuthorization,
  throughUpstream,
  upstreamLeg,
  upstreamUser,
  valueOf,
} from './support';

/**
 * Signing in to an app through an upstream identity provider, end to end over HTTP:
 * another Latchkey platform is the upstream, the downstream platform's hosted pages are driven with
 * a cookie-keeping browser, and the app gets its code and ID token.
 */

let p: ClockedProvider;
const s = () => p.t.services;

beforeAll(async () => {
  p = await startClockedProvider();
});
afterAll(async () => {
  await p.close();
});

const codeOf = (location: string | undefined) => {
  if (!location?.startsWith(APP_REDIRECT)) throw new Error(`not back at the app: ${location}`);
  return new URL(location).searchParams.get('code');
};
const signedInAt = async (b: ReturnType<typeof newBrowser>, platformId: string) =>
  (await b.agent.get(`/account?platform_guid=${platformId}`)).headers.location;

describe('a new user signs up through the upstream', () => {
  it('sign-up page pre-filled from the upstream, the age rule still enforced, the identity linked, a code and ID token for the app', async () => {
    const f = await federation(p);
    const upUser = await upstreamUser(p, f, { givenName: 'Grace', familyName: 'Hopper' });
    const down = newBrowser(p);
    const up = newBrowser(p);
    await startAuthorization(down, f);
    expect(down.html).toContain(`Continue with ${PROVIDER_NAME}`);
    const authorizationUrl = await continueWith(down);
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(callbackOf(p, f.down.id));
    expect(authorizationUrl.searchParams.get('prompt')).toBeNull();
    const back = await down.get(pathOf(await upstreamLeg(p, up, authorizationUrl.toString(), upUser)));
    expect(back.res.status).toBe(200);
    expect(down.pageTitle()).toBe('Create your account');
    expect(valueOf(down.html, 'email')).toBe(upUser.email);
    expect(down.html).toMatch(/id="email"[^>]*readonly/);
    expect(valueOf(down.html, 'given_name')).toBe('Grace');
    expect(valueOf(down.html, 'family_name')).toBe('Hopper');
    expect(down.html).toContain(`Optional: lets you sign in without ${PROVIDER_NAME}`);

    // Under 16: refused, nothing created.
    const young = await down.submit('/signup', {
      email: 'someone-else@example.com',
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '2020-01-01',
      phone_number: '',
      password: '',
    });
    expect(young.res.status).toBe(400);
    expect(down.html).toContain('id="birthdate-error"');
    expect(valueOf(down.html, 'email')).toBe(upUser.email);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);

    await down.submit('/signup', {
      email: 'someone-else@example.com',
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: '',
    });
    expect(down.pageTitle()).toContain('wants to access');
    const done = await down.submit('/consent', { decision: 'allow' });
    expect(codeOf(done.location)).toBeTruthy();

    const local = await s().users.findByEmail(f.down.id, upUser.email);
    expect(local).toMatchObject({
      givenName: 'Grace',
      familyName: 'Hopper',
      birthdate: '1990-05-17',
      emailVerified: false,
    });
    expect((await p.t.database.db('users').where({ id: local!.id }).first()).password_hash).toBeNull();
    const [identity] = await identitiesOf(p, f.down.id);
    expect(identity).toMatchObject({
      user_id: local!.id,
      provider_id: f.providerId,
      subject: upUser.id,
      email: upUser.email,
      sealed_tokens: null,
    });

    const tokens = await exchange(p.t.app, f.down, f.app, done.location!);
    expect(jwtPayload(tokens.id_token)).toMatchObject({ sub: local!.id, amr: ['fed'] });
    // Not trusted for email: the usual verification mail.
    await waitForMail(p.t.config.dataDir, upUser.email, /Verify your email address/);
    const audit = await auditKinds(p, f.down.id);
    expect(audit).toEqual(
      expect.arrayContaining([
        { kind: 'sign_up', details: { method: 'upstream', provider: SLUG } },
        expect.objectContaining({ kind: 'identity.linked', details: expect.objectContaining({ provider: SLUG }) }),
      ]),
    );
  });

  it('a trusted provider’s verified email is carried over, and a chosen password works on its own', async () => {
    const f = await federation(p, { trustEmail: true });
    const upUser = await upstreamUser(p, f, { emailVerified: true });
    const down = newBrowser(p);
    await startAuthorization(down, f, { action: 'register' });
    await throughUpstream(p, down, newBrowser(p), upUser);
    expect(down.pageTitle()).toBe('Create your account');
    await down.submit('/signup', {
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: 'another fine password 42',
    });
    expect(codeOf((await down.submit('/consent', { decision: 'allow' })).location)).toBeTruthy();
    const local = await s().users.findByEmail(f.down.id, upUser.email);
    expect(local?.emailVerified).toBe(true);
    expect(await s().authorize.verifyCredentials(f.down.id, upUser.email, 'another fine password 42')).toBeDefined();
  });
});

describe('email_verified: the upstream verified it AND the provider is trusted for email', () => {
  async function signUpThrough(
    f: Awaited<ReturnType<typeof federation>>,
    upUser: Awaited<ReturnType<typeof upstreamUser>>,
  ) {
    const down = newBrowser(p);
    await startAuthorization(down, f);
    await throughUpstream(p, down, newBrowser(p), upUser);
    expect(down.pageTitle()).toBe('Create your account');
    await down.submit('/signup', {
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: '',
    });
    expect(down.pageTitle()).toContain('wants to access');
    return (await s().users.findByEmail(f.down.id, upUser.email))!;
  }

  it.each([
    ['an untrusted provider’s verified email is not carried over', { trustEmail: false }, { emailVerified: true }],
    ['a trusted provider whose upstream did not verify the email', { trustEmail: true }, { emailVerified: false }],
  ])('%s: unverified, and the verification mail goes out', async (_case, provider, upstream) => {
    const f = await federation(p, provider);
    const upUser = await upstreamUser(p, f, upstream);
    const local = await signUpThrough(f, upUser);
    expect(local.emailVerified).toBe(false);
    await waitForMail(p.t.config.dataDir, upUser.email, /Verify your email address/);
  });
});

describe('the upstream’s tokens', () => {
  it('are kept only when the provider says so, and then sealed', async () => {
    const f = await federation(p, { storeTokens: true });
    const upUser = await upstreamUser(p, f);
    const down = newBrowser(p);
    await startAuthorization(down, f);
    await throughUpstream(p, down, newBrowser(p), upUser);
    await down.submit('/signup', {
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: '',
    });
    const [identity] = await identitiesOf(p, f.down.id);
    expect(identity.sealed_tokens).toEqual(expect.any(String));
    const tokens = JSON.parse(s().deps.sealer.unseal(identity.sealed_tokens).toString('utf8'));
    expect(tokens.accessToken).toEqual(expect.any(String));
    // No token in clear. (Not "no eyJ": random ciphertext holds those three letters about once a hundred runs.)
    expect(identity.sealed_tokens).not.toContain(tokens.accessToken);
    if (tokens.idToken) expect(identity.sealed_tokens).not.toContain(tokens.idToken);
  });
});

describe('a returning user', () => {
  it('signs in without the sign-up page; the upstream sign-in is audited', async () => {
    const f = await federation(p);
    const upUser = await upstreamUser(p, f);
    const first = newBrowser(p);
    const up = newBrowser(p);
    await startAuthorization(first, f);
    await throughUpstream(p, first, up, upUser);
    await first.submit('/signup', {
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: '',
    });
    await first.submit('/consent', { decision: 'allow' });

    const again = newBrowser(p);
    await startAuthorization(again, f);
    const back = await throughUpstream(p, again, up, upUser); // the upstream remembers its own sign-in
    expect(codeOf(back.location)).toBeTruthy();
    // Reached by a redirect of the upstream's form, whose CSP form-action would block a redirect on to
    // the app's origin: a page moves on to it instead (a refresh, and a link).
    expect(back.res.status).toBe(200);
    expect(back.res.headers['cache-control']).toBe('no-store');
    expect(again.pageTitle()).toBe('Continuing to Test app…');
    expect(again.html).toContain(`href="${back.location!.replace(/&/g, '&amp;')}"`);
    const local = await s().users.findByEmail(f.down.id, upUser.email);
    const tokens = await exchange(p.t.app, f.down, f.app, back.location!);
    expect(jwtPayload(tokens.id_token).sub).toBe(local!.id);
    const audit = await auditKinds(p, f.down.id);
    expect(audit).toContainEqual({
      kind: 'sign_in.succeeded',
      details: { method: 'upstream', provider: SLUG, amr: ['fed'] },
    });
  });
});

describe('the account chooser', () => {
  it('lists an account signed in through the upstream; picking it goes on without the upstream; a second account joins it', async () => {
    const f = await federation(p);
    const upUser = await upstreamUser(p, f);
    const down = newBrowser(p);
    await startAuthorization(down, f);
    await throughUpstream(p, down, newBrowser(p), upUser);
    await down.submit('/signup', {
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: '',
    });
    await down.submit('/consent', { decision: 'allow' });
    const local = await s().users.findByEmail(f.down.id, upUser.email);

    // A second account by password in the same browser: the chooser then offers both.
    const other = await buildUser(s(), f.down.id);
    await startAuthorization(down, f, { prompt: 'select_account' });
    expect(down.pageTitle()).toBe('Choose an account');
    expect(down.html).toContain(upUser.email);
    await down.submit('/chooser', { another: '1' });
    await down.submit('/signin', { email: other.email, password: TEST_PASSWORD });
    await down.submit('/consent', { decision: 'allow' });

    await startAuthorization(down, f);
    expect(down.pageTitle()).toBe('Choose an account');
    expect(down.html).toContain(upUser.email);
    expect(down.html).toContain(other.email);
    const picked = await down.submit('/chooser', { account: local!.id });
    const tokens = await exchange(p.t.app, f.down, f.app, picked.location!);
    expect(jwtPayload(tokens.id_token)).toMatchObject({ sub: local!.id, amr: ['fed'] });
  });
});

describe('an existing account with the same email: linked only after proof', () => {
  async function atLinkPage() {
    const f = await federation(p);
    const upUser = await upstreamUser(p, f);
    const local = await buildUser(s(), f.down.id, { email: upUser.email.toUpperCase() });
    const down = newBrowser(p);
    await startAuthorization(down, f);
    const back = await throughUpstream(p, down, newBrowser(p), upUser);
    expect(back.res.status).toBe(200);
    expect(down.pageTitle()).toBe(`Link your ${PROVIDER_NAME} account`);
    return { f, upUser, local, down };
  }

  it('a wrong password links nothing and signs nobody in; the right one links and signs in', async () => {
    const { f, local, down } = await atLinkPage();
    const wrong = await down.submit('/link-account/password', { password: 'not the password' });
    expect(wrong.res.status).toBe(400);
    expect(down.pageTitle()).toBe(`Link your ${PROVIDER_NAME} account`);
    expect(down.html).toContain('That password is not right.');
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);
    expect(await signedInAt(down, f.down.id)).toContain('/account/signin');

    await down.submit('/link-account/password', { password: TEST_PASSWORD });
    expect(codeOf((await down.submit('/consent', { decision: 'allow' })).location)).toBeTruthy();
    const [identity] = await identitiesOf(p, f.down.id);
    expect(identity.user_id).toBe(local.id);
    expect(await auditKinds(p, f.down.id)).toContainEqual(expect.objectContaining({ kind: 'identity.linked' }));
  });

  it('leaving the link page links nothing', async () => {
    const { f, down } = await atLinkPage();
    await down.get(down.html.match(/href="(\/interaction\/[^"]+\/signin)"/)![1]);
    expect(down.pageTitle()).toBe('Sign in');
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);
  });

  it('"Email me a link": the mailed link, opened in this browser, links and signs in, once', async () => {
    const { f, local, down } = await atLinkPage();
    const mailed = await down.submit('/link-account/email', {});
    expect(mailed.res.status).toBe(200);
    expect(down.html).toContain(`We sent a link to ${local.email}`);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);
    const mail = await waitForMail(p.t.config.dataDir, local.email, new RegExp(`Link your ${PROVIDER_NAME} account`));
    const link = mail.text.match(/https?:\/\/\S+\/link-account\/email\?token=\S+/)![0];

    // Another browser cannot use it.
    const other = newBrowser(p);
    const elsewhere = await other.get(pathOf(link));
    expect(elsewhere.res.status).toBe(400);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);

    // A wrong token in this browser does nothing.
    // (The first character is changed to one it is not, so the token always differs.)
    const tampered = await down.get(
      pathOf(link.replace(/token=(.)/, (_m, c: string) => `token=${c === 'A' ? 'B' : 'A'}`)),
    );
    expect(tampered.res.status).toBe(400);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);

    await down.get(pathOf(link));
    expect(down.pageTitle()).toContain('wants to access');
    expect(codeOf((await down.submit('/consent', { decision: 'allow' })).location)).toBeTruthy();
    expect((await identitiesOf(p, f.down.id))[0].user_id).toBe(local.id);
  });
});

describe('a pinned sign-in', () => {
  it('login_hint: an upstream account with another email is refused with nothing linked or created', async () => {
    const f = await federation(p);
    const pinned = await buildUser(s(), f.down.id);
    const upUser = await upstreamUser(p, f);
    const down = newBrowser(p);
    await startAuthorization(down, f, { login_hint: pinned.email });
    const authorizationUrl = await continueWith(down);
    expect(authorizationUrl.searchParams.get('login_hint')).toBe(pinned.email);
    authorizationUrl.searchParams.delete('login_hint'); // the person signs in to another account at the upstream
    const back = await down.get(pathOf(await upstreamLeg(p, newBrowser(p), authorizationUrl.toString(), upUser)));
    expect(back.res.status).toBe(400);
    expect(down.pageTitle()).toBe('Sign in');
    expect(down.html).toContain(`This sign-in is for ${pinned.email}.`);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);
    expect(await s().users.findByEmail(f.down.id, upUser.email)).toBeUndefined();
    expect(await auditKinds(p, f.down.id)).toContainEqual({
      kind: 'sign_in.failed',
      details: { method: 'upstream', provider: SLUG, reason: 'other_account' },
    });
  });

  it('re-authentication of a signed-in account (prompt=login): another upstream account is refused', async () => {
    const f = await federation(p);
    const local = await buildUser(s(), f.down.id);
    const upUser = await upstreamUser(p, f);
    const down = newBrowser(p);
    await startAuthorization(down, f);
    await down.submit('/signin', { email: local.email, password: TEST_PASSWORD });
    await down.submit('/consent', { decision: 'allow' });
    await startAuthorization(down, f, { prompt: 'login' });
    await down.submit('/chooser', { account: local.id });
    expect(down.pageTitle()).toBe('Sign in');
    const authorizationUrl = await continueWith(down);
    expect(authorizationUrl.searchParams.get('prompt')).toBe('login');
    expect(authorizationUrl.searchParams.get('login_hint')).toBe(local.email);
    authorizationUrl.searchParams.delete('login_hint'); // another account at the upstream
    const back = await down.get(pathOf(await upstreamLeg(p, newBrowser(p), authorizationUrl.toString(), upUser)));
    expect(back.res.status).toBe(400);
    expect(down.html).toContain(`This sign-in is for ${local.email}.`);
    expect(await identitiesOf(p, f.down.id)).toHaveLength(0);
    expect(await s().users.findByEmail(f.down.id, upUser.email)).toBeUndefined();
  });

  it('prompt=login and max_age go to the upstream as prompt=login and max_age', async () => {
    const f = await federation(p);
    const down = newBrowser(p);
    await startAuthorization(down, f, { prompt: 'login', max_age: '300' });
    const authorizationUrl = await continueWith(down);
    expect(authorizationUrl.searchParams.get('prompt')).toBe('login');
    expect(authorizationUrl.searchParams.get('max_age')).toBe('300');
  });
});

async function requiredMfa(f: { down: { id: string } }) {
  await p.t.database.db('platforms').where({ id: f.down.id }).update({ mfa_policy: 'required' });
}

/** The upstream user's authenticator app, confirmed; the clock then moves past the code's step. */
async function upstreamTotp(upUser: Awaited<ReturnType<typeof upstreamUser>>) {
  const enrolment = (await s().mfa.totp.beginEnrolment(upUser, 'Upstream'))!;
  expect(await s().mfa.totp.confirmEnrolment(upUser.id, totpAt(enrolment.secret, p.now()))).toBe(true);
  p.tick(31);
  return enrolment;
}

describe('the platform’s MFA policy', () => {
  it('required: the local second factor is still asked after the upstream', async () => {
    const f = await federation(p);
    await requiredMfa(f);
    const upUser = await upstreamUser(p, f);
    const down = newBrowser(p);
    await startAuthorization(down, f);
    await throughUpstream(p, down, newBrowser(p), upUser);
    await down.submit('/signup', {
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: '',
    });
    expect(down.pageTitle()).toBe('Set up authenticator app');
  });

  it('required, provider trusted for MFA and the upstream’s amr shows two factors: no local factor', async () => {
    const f = await federation(p, { trustMfa: true });
    await requiredMfa(f);
    const upUser = await upstreamUser(p, f);
    const enrolment = await upstreamTotp(upUser);
    const down = newBrowser(p);
    await startAuthorization(down, f);
    await throughUpstream(p, down, newBrowser(p), upUser, { totpSecret: enrolment.secret });
    expect(down.pageTitle()).toBe('Create your account');
    await down.submit('/signup', {
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: '',
    });
    expect(down.pageTitle()).toContain('wants to access');
    const done = await down.submit('/consent', { decision: 'allow' });
    const tokens = await exchange(p.t.app, f.down, f.app, done.location!);
    expect(jwtPayload(tokens.id_token).amr).toEqual(['fed', 'mfa']);
  });
});

describe('the platform’s MFA policy: trusting the upstream’s MFA takes both the provider’s trust and two factors upstream', () => {
  /** Signs up through the upstream and answers the downstream browser at the page after sign-up. */
  async function signedUp(
    f: Awaited<ReturnType<typeof federation>>,
    upUser: Awaited<ReturnType<typeof upstreamUser>>,
    totpSecret?: string,
  ) {
    const down = newBrowser(p);
    await startAuthorization(down, f);
    await throughUpstream(p, down, newBrowser(p), upUser, totpSecret ? { totpSecret } : {});
    expect(down.pageTitle()).toBe('Create your account');
    await down.submit('/signup', {
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: '',
    });
    return down;
  }

  /** The local authenticator app set up on the page, then consent: the app's ID token claims. */
  async function setUpLocalFactor(down: ReturnType<typeof newBrowser>, f: Awaited<ReturnType<typeof federation>>) {
    expect(down.pageTitle()).toBe('Set up authenticator app');
    await down.submit('/totp-setup', { code: totpAt(setupKeyOf(down.html), p.now()) });
    expect(down.pageTitle()).toBe('Save your recovery codes');
    let done = await down.submit('/continue', {});
    if (!done.location) done = await down.submit('/consent', { decision: 'allow' });
    return jwtPayload((await exchange(p.t.app, f.down, f.app, done.location!)).id_token);
  }

  it('not trusted for MFA: an upstream sign-in with two factors still asks the local second factor', async () => {
    const f = await federation(p, { trustMfa: false });
    await requiredMfa(f);
    const upUser = await upstreamUser(p, f);
    const enrolment = await upstreamTotp(upUser);
    const down = await signedUp(f, upUser, enrolment.secret);
    const claims = await setUpLocalFactor(down, f);
    // the upstream counted once (fed), the local code second: two factors of this platform's own
    expect(claims.amr).toEqual(['fed', 'otp', 'mfa']);
  });

  it('trusted for MFA, but the upstream sign-in was password only: the local second factor is still asked', async () => {
    const f = await federation(p, { trustMfa: true });
    await requiredMfa(f);
    const upUser = await upstreamUser(p, f);
    const down = await signedUp(f, upUser);
    const claims = await setUpLocalFactor(down, f);
    expect(claims.amr).toEqual(['fed', 'otp', 'mfa']);
  });
});

describe('failures end on a page naming the provider', () => {
  it('the upstream’s error (the person denied there)', async () => {
    const f = await federation(p);
    const upUser = await upstreamUser(p, f);
    const down = newBrowser(p);
    await startAuthorization(down, f);
    const back = await throughUpstream(p, down, newBrowser(p), upUser, { deny: true });
    expect(back.res.status).toBe(400);
    expect(down.pageTitle()).toBe(`Couldn&#39;t sign in with ${PROVIDER_NAME}`);
    expect(down.html).toMatch(/href="\/interaction\/[^"]+\/signin"/);
    expect(await auditKinds(p, f.down.id)).toContainEqual({
      kind: 'sign_in.failed',
      details: { method: 'upstream', provider: SLUG, reason: 'upstream_error' },
    });
  });

  it('an unknown state', async () => {
    const f = await federation(p);
    const down = newBrowser(p);
    const res = await down.get(`/platforms/${f.down.id}/upstream/callback?state=nope&code=abc`);
    expect(res.res.status).toBe(400);
    expect(down.pageTitle()).toBe('Couldn&#39;t sign in');
    expect(down.html).toContain('expired or was started in another browser');
  });

  it('a sign-in started on another platform arriving at this platform’s callback: state_mismatch, nothing created', async () => {
    const a = await federation(p);
    const b = await federation(p);
    const upUser = await upstreamUser(p, b);
    const down = newBrowser(p);
    await startAuthorization(down, b);
    const callback = new URL(await upstreamLeg(p, newBrowser(p), (await continueWith(down)).toString(), upUser));
    expect(callback.pathname).toBe(`/platforms/${b.down.id}/upstream/callback`);
    const res = await down.get(`/platforms/${a.down.id}/upstream/callback${callback.search}`);
    expect(res.res.status).toBe(400);
    expect(down.pageTitle()).toBe('Couldn&#39;t sign in');
    expect(await auditKinds(p, a.down.id)).toContainEqual({
      kind: 'sign_in.failed',
      details: { method: 'upstream', provider: SLUG, reason: 'state_mismatch' },
    });
    expect(await identitiesOf(p, a.down.id)).toHaveLength(0);
    expect(await identitiesOf(p, b.down.id)).toHaveLength(0);
    expect(await s().users.findByEmail(a.down.id, upUser.email)).toBeUndefined();
  });

  it('an unknown platform or a malformed one: a page, never a 5xx', async () => {
    const down = newBrowser(p);
    expect((await down.get('/platforms/not-a-guid/upstream/callback?state=x')).res.status).toBe(404);
    expect((await down.get('/platforms/00000000-0000-4000-8000-000000000000/upstream/callback')).res.status).toBe(404);
  });
});
