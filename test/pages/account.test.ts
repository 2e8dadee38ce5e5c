import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import {
  accountSignIn,
  authorizeQuery,
  exchange,
  refresh,
  signInThrough,
  userinfo,
  jwtPayload,
} from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const newEmail = () => `account-${Math.random().toString(36).slice(2, 10)}@example.com`;
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

async function tenant() {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id, { email: newEmail() });
  return { p, c, u };
}

const profile = (over: Record<string, string> = {}) => ({
  given_name: 'Ada',
  middle_name: '',
  family_name: 'Lovelace',
  nickname: '',
  preferred_username: 'ada.lovelace',
  phone_number: '',
  street_address: '',
  locality: '',
  region: '',
  postal_code: '',
  country: '',
  ...over,
});

describe('account page', () => {
  it('asks a browser with no signed-in account to sign in, then shows the account', async () => {
    const { p, u } = await tenant();
    const b = browser(t.app);
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.pageTitle()).toBe('Sign in');
    expect(b.html).toContain('Forgot password?');
    const wrong = await b.submit(`/account/signin?platform_guid=${p.id}`, {
      email: u.email,
      password: 'not the password',
    });
    expect(wrong.res.status).toBe(400);
    await b.submit(`/account/signin?platform_guid=${p.id}`, { email: u.email, password: TEST_PASSWORD });
    expect(b.pageTitle()).toBe('Your account');
    expect(b.html).toContain(u.email);
    expect(b.html).toContain('Acme Travel');
  });

  it('keeps the tab a signed-out browser asked for (section=security) across the sign-in, and across the choice of account', async () => {
    const { p, c, u } = await tenant();
    const currentTab = (html: string) =>
      /<a href="[^"]*" class="account-tab" aria-current="page">([^<]*)<\/a>/.exec(html)?.[1];
    const b = browser(t.app);
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    expect(b.pageTitle()).toBe('Sign in');
    await b.submit(`/account/signin?platform_guid=${p.id}&section=security`, {
      email: u.email,
      password: TEST_PASSWORD,
    });
    expect(b.pageTitle()).toBe('Your account');
    expect(currentTab(b.html)).toBe('Security');
    // Asked for once: the next plain visit is the profile again.
    await b.get(`/account?platform_guid=${p.id}`);
    expect(currentTab(b.html)).toBe('Profile');

    // Two accounts signed in: the chooser comes first, then the tab asked for.
    const v = await buildUser(t.services, p.id, { email: newEmail() });
    const fresh = browser(t.app);
    await signInThrough(fresh, p, c, u.email);
    await signInThrough(fresh, p, c, v.email);
    await fresh.get(`/account?platform_guid=${p.id}&section=apps`);
    expect(fresh.pageTitle()).toBe('Choose an account');
    await fresh.submit(`/account/choose?platform_guid=${p.id}&section=apps`, { account: v.id });
    expect(currentTab(fresh.html)).toBe('Apps');
    expect(fresh.html).toContain(v.email);
  });

  it('uses the account signed in through an app, and lets the user pick when several are', async () => {
    const { p, c, u } = await tenant();
    const v = await buildUser(t.services, p.id, { email: newEmail(), givenName: 'Grace' });
    const b = browser(t.app);
    await signInThrough(b, p, c, u.email);
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.pageTitle()).toBe('Your account');
    await signInThrough(b, p, c, v.email);
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.pageTitle()).toBe('Choose an account');
    await b.submit(`/account/choose?platform_guid=${p.id}`, { account: v.id });
    expect(b.pageTitle()).toBe('Your account');
    expect(b.html).toContain(v.email);
  });

  it('edits the profile claims: phone in E.164, address with an ISO country, updated_at moves', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const before = (await userinfo(t.app, p, tokens.access_token)).body;
    await b.get(`/account?platform_guid=${p.id}`);

    const bad = await b.submit(`/account/profile?platform_guid=${p.id}`, {
      account: u.id,
      ...profile({ phone_number: '12', country: 'XX', preferred_username: 'two words' }),
    });
    expect(bad.res.status).toBe(400);
    expect(b.html).toMatch(/valid phone number/);
    expect(b.html).toMatch(/ISO 3166-1/);
    expect(b.html).toMatch(/cannot contain spaces/);

    await new Promise((r) => setTimeout(r, 1100)); // updated_at has whole seconds
    await b.submit(`/account/profile?platform_guid=${p.id}`, {
      account: u.id,
      ...profile({
        middle_name: 'King',
        nickname: 'Countess',
        preferred_username: 'ada',
        phone_number: '+44 20 7946 0958',
        street_address: '12 St James Square',
        locality: 'London',
        postal_code: 'SW1Y 4JH',
        country: 'gb',
      }),
    });
    expect(b.html).toContain('Your profile has been saved.');
    const after = (await userinfo(t.app, p, tokens.access_token)).body;
    expect(after).toMatchObject({
      name: 'Ada King Lovelace',
      middle_name: 'King',
      nickname: 'Countess',
      preferred_username: 'ada',
      phone_number: '+442079460958',
      address: {
        street_address: '12 St James Square',
        locality: 'London',
        postal_code: 'SW1Y 4JH',
        country: 'GB',
        formatted: '12 St James Square\nLondon SW1Y 4JH\nUnited Kingdom',
      },
    });
    expect(after.updated_at).toBeGreaterThan(before.updated_at);

    // Saving the same values changes nothing, not even updated_at.
    await b.submit(`/account/profile?platform_guid=${p.id}`, {
      account: u.id,
      ...profile({
        middle_name: 'King',
        nickname: 'Countess',
        preferred_username: 'ada',
        phone_number: '+442079460958',
        street_address: '12 St James Square',
        locality: 'London',
        postal_code: 'SW1Y 4JH',
        country: 'GB',
      }),
    });
    expect(b.html).toContain('your profile is unchanged');
    expect((await userinfo(t.app, p, tokens.access_token)).body.updated_at).toBe(after.updated_at);
  });

  it("a phone number over 64 characters is a field error on the profile and on the account sign-up, in the page's language; the fields say their limit", async () => {
    const { p, u } = await tenant();
    await t.services.account.profile.updateProfile(u, profile({ phone_number: '+44 20 7946 0958' }));
    const long = '+44 20 7946 0958 (home; call after six in the evening, thank you)'; // the same number, inside a note
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.html).toMatch(/<input id="phone_number" name="phone_number"[^>]* maxlength="64"/);
    const bad = await b.submit(`/account/profile?platform_guid=${p.id}`, {
      account: u.id,
      ...profile({ phone_number: long }),
    });
    expect(bad.res.status).toBe(400);
    expect(/<p class="field-error" id="phone_number-error">([^<]*)<\/p>/.exec(b.html)?.[1]).toBe(
      'Enter a phone number of at most 64 characters.',
    );
    expect(b.html).not.toContain('Nothing to save');

    const german = browser(t.app);
    german.agent.set('Accept-Language', 'de');
    await german.get(`/account/signup?platform_guid=${p.id}`);
    expect(german.html).toMatch(/<input id="phone_number" name="phone_number"[^>]* maxlength="64"/);
    const refused = await german.submit(`/account/signup?platform_guid=${p.id}`, {
      email: newEmail(),
      given_name: 'Nia',
      family_name: 'Okafor',
      birthdate: '2000-01-31',
      phone_number: long,
      password: 'a long pass phrase',
    });
    expect(refused.res.status).toBe(400);
    expect(/<p class="field-error" id="phone_number-error">([^<]*)<\/p>/.exec(german.html)?.[1]).toBe(
      'Geben Sie eine Telefonnummer mit höchstens 64 Zeichen ein.',
    );
  });

  it('shows the username (a default from the name), saves a new one that apps receive, and refuses bad ones with a field error', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    expect((await userinfo(t.app, p, tokens.access_token)).body.preferred_username).toBe('ada.lovelace');
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.html).toMatch(/<label for="preferred_username">Username<\/label>/);
    expect(b.html).toMatch(/id="preferred_username" name="preferred_username"[^>]* required[^>]* value="ada.lovelace"/);

    for (const [value, message] of [
      ['', /Enter a username/],
      ['ada@example.com', /letters, digits/],
      ['x'.repeat(65), /at most 64/],
      ['  ', /Enter a username/],
    ] as const) {
      const bad = await b.submit(`/account/profile?platform_guid=${p.id}`, {
        account: u.id,
        ...profile({ preferred_username: value }),
      });
      expect(bad.res.status).toBe(400);
      expect(/<p class="field-error" id="preferred_username-error">([^<]*)<\/p>/.exec(b.html)?.[1]).toMatch(message);
      expect(b.html).toMatch(
        /id="preferred_username"[^>]* aria-invalid="true" aria-describedby="preferred_username-error"/,
      );
    }
    expect((await t.services.users.findById(p.id, u.id))!.preferredUsername).toBe('ada.lovelace');

    await b.submit(`/account/profile?platform_guid=${p.id}`, {
      account: u.id,
      ...profile({ preferred_username: '  Countess_Ada ' }),
    });
    expect(b.html).toContain('Your profile has been saved.');
    expect((await userinfo(t.app, p, tokens.access_token)).body.preferred_username).toBe('Countess_Ada');
    const fresh = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    expect(jwtPayload(fresh.id_token).preferred_username).toBe('Countess_Ada');
  });

  it('keeps a username stored before the character rules while it is unchanged', async () => {
    const { p, u } = await tenant();
    await t.database.db('users').where({ id: u.id }).update({ preferred_username: 'ada@home' });
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    await b.submit(`/account/profile?platform_guid=${p.id}`, {
      account: u.id,
      ...profile({ preferred_username: 'ada@home', nickname: 'Countess' }),
    });
    expect(b.html).toContain('Your profile has been saved.');
    expect((await t.services.users.findById(p.id, u.id))!).toMatchObject({
      preferredUsername: 'ada@home',
      nickname: 'Countess',
    });
    const changed = await b.submit(`/account/profile?platform_guid=${p.id}`, {
      account: u.id,
      ...profile({ preferred_username: 'ada@work' }),
    });
    expect(changed.res.status).toBe(400);
  });

  it('uploads a picture (type and size limited) served by the provider, or takes an https URL', async () => {
    const { p, c, u } = await tenant();
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(b.html)![1];
    const upload = (buf: Buffer, name: string, type: string) =>
      b.agent
        .post(`/account/picture?platform_guid=${p.id}`)
        .field('_csrf', csrf)
        .field('account', u.id)
        .attach('picture', buf, { filename: name, contentType: type });

    const svg = await upload(
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      'x.svg',
      'image/svg+xml',
    );
    expect(svg.status).toBe(400);
    expect(svg.text).toMatch(/PNG, JPEG, GIF or WebP/);
    const big = await upload(Buffer.concat([PNG, Buffer.alloc(1024 * 1024)]), 'big.png', 'image/png');
    expect(big.status).toBe(400);
    expect(big.text).toMatch(/at most 1 MB/);
    const ok = await upload(PNG, 'me.png', 'image/png');
    expect(ok.status).toBe(303);

    const user = (await t.services.users.findById(p.id, u.id))!;
    expect(user.pictureUrl).toMatch(new RegExp(`^http://issuer\\.test/pictures/${p.id}/${u.id}/`));
    const served = await request(t.app).get(new URL(user.pictureUrl!).pathname);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.compare(served.body, PNG)).toBe(0);
    const tokens = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    expect(jwtPayload(tokens.id_token).picture).toBe(user.pictureUrl);

    await b.get(`/account?platform_guid=${p.id}`);
    const http = await b.submit(`/account/picture-url?platform_guid=${p.id}`, {
      account: u.id,
      picture_url: 'http://example.com/me.png',
    });
    expect(http.res.status).toBe(400);
    await b.submit(`/account/picture-url?platform_guid=${p.id}`, {
      account: u.id,
      picture_url: 'https://images.example.com/ada.jpg',
    });
    expect((await t.services.users.findById(p.id, u.id))!.pictureUrl).toBe('https://images.example.com/ada.jpg');
    expect((await request(t.app).get(new URL(user.pictureUrl!).pathname)).status).toBe(404);
    await b.submit(`/account/picture/remove?platform_guid=${p.id}`, { account: u.id });
    expect((await t.services.users.findById(p.id, u.id))!.pictureUrl).toBeNull();
  });

  it('changes the password only with the current one, under the policy; other sessions end', async () => {
    const { p, c, u } = await tenant();
    const other = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(other, p, c, u.email));
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    await b.get(`/account?platform_guid=${p.id}&section=security`); // the password form is on the Security tab
    const wrong = await b.submit(`/account/password?platform_guid=${p.id}`, {
      account: u.id,
      current_password: 'nope nope nope',
      new_password: 'a new pass phrase',
    });
    expect(wrong.res.status).toBe(400);
    expect(b.html).toContain('Your current password is not correct');
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    const weak = await b.submit(`/account/password?platform_guid=${p.id}`, {
      account: u.id,
      current_password: TEST_PASSWORD,
      new_password: 'short',
    });
    expect(weak.res.status).toBe(400);
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    await b.submit(`/account/password?platform_guid=${p.id}`, {
      account: u.id,
      current_password: TEST_PASSWORD,
      new_password: 'a new pass phrase',
    });
    expect(b.html).toContain('Your password has been changed');
    expect(b.pageTitle()).toBe('Your account'); // this browser stays signed in
    expect((await refresh(t.app, p, c, tokens.refresh_token!)).body.error).toBe('invalid_grant');
    const none = await other.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(none.location!).searchParams.get('error')).toBe('login_required');
  });

  it('lists apps holding consent and revokes one with its refresh tokens', async () => {
    const { p, c, u } = await tenant();
    const c2 = await buildClient(t.services, p.id, { name: 'Other app' });
    const b = browser(t.app);
    const t1 = await exchange(t.app, p, c, await signInThrough(b, p, c, u.email));
    const t2 = await exchange(t.app, p, c2, await signInThrough(b, p, c2, u.email));
    await b.get(`/account?platform_guid=${p.id}&section=apps`);
    expect(b.html).toContain('Test app');
    expect(b.html).toContain('Other app');
    await b.submit(`/account/apps/revoke?platform_guid=${p.id}`, { account: u.id, client_id: c.id });
    expect(b.html).toContain('Test app no longer has access to your account.');
    expect((await refresh(t.app, p, c, t1.refresh_token!)).body.error).toBe('invalid_grant');
    expect((await refresh(t.app, p, c2, t2.refresh_token!)).status).toBe(200);
    // Consent is asked again.
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    await b.submit('/chooser', { account: u.id });
    expect(b.pageTitle()).toMatch(/wants to access your account/);
  });

  it('signs out everywhere: every browser and every refresh token', async () => {
    const { p, c, u } = await tenant();
    const other = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(other, p, c, u.email));
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    await b.get(`/account?platform_guid=${p.id}&section=security`);
    await b.submit(`/account/signout-everywhere?platform_guid=${p.id}`, { account: u.id });
    expect(b.pageTitle()).toBe('You are signed out');
    expect((await refresh(t.app, p, c, tokens.refresh_token!)).body.error).toBe('invalid_grant');
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.pageTitle()).toBe('Sign in');
    await other.get(`/account?platform_guid=${p.id}`);
    expect(other.pageTitle()).toBe('Sign in');
  });

  it('refuses forms without the CSRF token or for an account not signed in here', async () => {
    const { p, u } = await tenant();
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    const noCsrf = await b.agent
      .post(`/account/profile?platform_guid=${p.id}`)
      .type('form')
      .send({ account: u.id, ...profile({ given_name: 'Mallory' }) });
    expect(noCsrf.status).toBe(403);
    const stranger = await buildUser(t.services, p.id, { email: newEmail() });
    const other = await b.submit(`/account/profile?platform_guid=${p.id}`, {
      account: stranger.id,
      ...profile({ given_name: 'Mallory' }),
    });
    expect(other.res.status).toBe(200);
    expect((await t.services.users.findById(p.id, stranger.id))!.givenName).toBe('Ada');
    expect((await t.services.users.findById(p.id, u.id))!.givenName).toBe('Ada');
  });
});
