// The authorize parameters that steer the pages: login_hint, action, prompt, max_age,
// and the sign-up pre-fill.
import type { Page } from 'playwright-core';
import {
  allow,
  authorizeUrl,
  callbackParams,
  chooserAccounts,
  clickAndLoad,
  createUser,
  expectPage,
  finishAtCallback,
  newEmail,
  openAuthorize,
  pickAccount,
  signIn,
  signInThrough,
  signUp,
  userinfo,
  TEST_PASSWORD,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';

let h: Harness;
let tenant: Tenant;
let page: Page;

useBrowserSuite((s) => ({ h, tenant, page } = s));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const visitedInteraction = (chain: string[]) => chain.some((u) => new URL(u).pathname.startsWith('/interaction'));

/** Makes a readonly email field editable, as a user with devtools could. */
const unlockEmail = (p: Page) =>
  p.evaluate(() => {
    const input = document.querySelector<HTMLInputElement>('input[name=email]')!;
    input.removeAttribute('readonly');
    input.removeAttribute('aria-readonly');
  });

describe('login_hint', () => {
  it('an existing account goes to sign-in with the email locked; another email in the POST is refused', async () => {
    const hinted = await createUser(h, tenant);
    const intruder = await createUser(h, tenant); // valid credentials, but not the hinted account
    const other = await createUser(h, tenant);
    await signInThrough(h, tenant, page, other.email); // the browser knows an account: still no chooser

    await openAuthorize(page, authorizeUrl(h, tenant, { login_hint: hinted.email.toUpperCase(), state: 'hint' }));
    await expectPage(page, 'signin');
    const email = page.getByLabel('Email');
    expect((await email.inputValue()).toLowerCase()).toBe(hinted.email);
    expect(await email.getAttribute('readonly')).not.toBeNull();
    expect(await email.isEditable()).toBe(false);
    await expect(page.getByRole('link', { name: 'Choose another account' }).count()).resolves.toBe(0);

    await unlockEmail(page);
    await email.fill(intruder.email);
    const res = await signIn(page, undefined);
    expect(res?.status()).toBe(400);
    await expectPage(page, 'signin');
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/This sign-in is for/);
    expect((await page.getByLabel('Email').inputValue()).toLowerCase()).toBe(hinted.email);

    await signIn(page, undefined, TEST_PASSWORD);
    await allow(page);
    const { idToken } = await finishAtCallback(h, tenant, page, 'hint');
    expect(idToken!.sub).toBe(hinted.id);
  });

  it('an unknown email goes to sign-up with the email locked', async () => {
    const email = newEmail('hinted-new');
    await openAuthorize(page, authorizeUrl(h, tenant, { login_hint: email, state: 'new' }));
    await expectPage(page, 'signup');
    const field = page.getByLabel('Email');
    expect(await field.inputValue()).toBe(email);
    expect(await field.isEditable()).toBe(false);

    // Tampered: refused, and nothing stored under the other address.
    await unlockEmail(page);
    const other = newEmail('not-hinted');
    const res = await signUp(page, { email: other });
    expect(res?.status()).toBe(400);
    await expectPage(page, 'signup');
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/This sign-up is for/);
    expect(await h.t.database.db('users').where({ email_normalized: other })).toHaveLength(0);

    await signUp(page, { email: undefined }); // the locked field already holds the hint
    await allow(page);
    const { idToken } = await finishAtCallback(h, tenant, page, 'new');
    expect(idToken!.email).toBe(email);
  });

  it('an already signed-in account with remembered consent: no page at all', async () => {
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    await signInThrough(h, tenant, page, (await createUser(h, tenant)).email); // a second account, so the chooser would show

    const { chain } = await openAuthorize(page, authorizeUrl(h, tenant, { login_hint: user.email, state: 'silent' }));
    expect(chain.map((u) => new URL(u).pathname)).toEqual(['/oauth/authorize', '/__rp/callback']);
    const { idToken } = await finishAtCallback(h, tenant, page, 'silent');
    expect(idToken!.sub).toBe(user.id);
  });
});

describe('action', () => {
  it('action=register opens the sign-up page', async () => {
    await openAuthorize(page, authorizeUrl(h, tenant, { action: 'register' }));
    await expectPage(page, 'signup');
    expect(await page.getByLabel('Email').isEditable()).toBe(true);
  });

  it('action=login (or none) opens the sign-in page, which links to sign-up and back', async () => {
    await openAuthorize(page, authorizeUrl(h, tenant, { action: 'login' }));
    await expectPage(page, 'signin');
    await clickAndLoad(page, page.getByRole('link', { name: 'Create account' }));
    await expectPage(page, 'signup');
    await page.reload();
    await expectPage(page, 'signup'); // a reload stays on the chosen form
    await clickAndLoad(page, page.getByRole('link', { name: 'Sign in' }));
    await expectPage(page, 'signin');
  });
});

describe('prompt', () => {
  it('prompt=login asks for the password again for the same account', async () => {
    const user = await createUser(h, tenant);
    const first = await signInThrough(h, tenant, page, user.email);
    await sleep(1100);

    await openAuthorize(page, authorizeUrl(h, tenant, { prompt: 'login', state: 'relogin' }));
    if ((await chooserAccountsOrNull(page)) !== null) await pickAccount(page, user.email);
    await expectPage(page, 'signin');
    const email = page.getByLabel('Email');
    expect(await email.inputValue()).toBe(user.email);
    expect(await email.isEditable()).toBe(false);
    await signIn(page, undefined);
    const { idToken } = await finishAtCallback(h, tenant, page, 'relogin');
    expect(idToken!.sub).toBe(user.id);
    expect(idToken!.auth_time as number).toBeGreaterThan(first.idToken!.auth_time as number);
  });

  it('prompt=login with a login_hint goes straight to the password', async () => {
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    await openAuthorize(page, authorizeUrl(h, tenant, { prompt: 'login', login_hint: user.email }));
    await expectPage(page, 'signin');
    await signIn(page, undefined);
    expect(callbackParams(page).get('code')).toBeTruthy();
  });

  it('prompt=select_account shows the chooser', async () => {
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    await openAuthorize(page, authorizeUrl(h, tenant, { prompt: 'select_account' }));
    expect(await chooserAccounts(page)).toEqual([{ email: user.email, signedOut: false }]);
    await pickAccount(page, user.email);
    expect(callbackParams(page).get('code')).toBeTruthy();
  });

  it('prompt=select_account forces the chooser even when a login_hint would skip it', async () => {
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    const { chain } = await openAuthorize(
      page,
      authorizeUrl(h, tenant, { prompt: 'select_account', login_hint: user.email }),
    );
    expect(visitedInteraction(chain)).toBe(true);
    await expectPage(page, 'chooser');
  });

  describe('prompt=none never shows a page', () => {
    async function silent(params: Record<string, string>) {
      const { chain } = await openAuthorize(
        page,
        authorizeUrl(h, tenant, { prompt: 'none', state: 'quiet', ...params }),
      );
      expect(visitedInteraction(chain)).toBe(false);
      expect(chain.map((u) => new URL(u).pathname)).toEqual(['/oauth/authorize', '/__rp/callback']);
      const params_ = callbackParams(page);
      expect(params_.get('state')).toBe('quiet');
      expect(params_.get('iss')).toBe(h.base);
      return params_;
    }

    it('nobody signed in → login_required', async () => {
      const p = await silent({});
      expect(p.get('error')).toBe('login_required');
      expect(p.get('error_description')).toBeTruthy();
    });

    it('signed in but a scope not yet consented → consent_required', async () => {
      const user = await createUser(h, tenant);
      await signInThrough(h, tenant, page, user.email, { scope: 'openid' });
      expect((await silent({ scope: 'openid email' })).get('error')).toBe('consent_required');
    });

    it('two accounts signed in → account_selection_required', async () => {
      await signInThrough(h, tenant, page, (await createUser(h, tenant)).email);
      await signInThrough(h, tenant, page, (await createUser(h, tenant)).email);
      expect((await silent({})).get('error')).toBe('account_selection_required');
    });

    it('one account signed in with consent → a code', async () => {
      const user = await createUser(h, tenant);
      await signInThrough(h, tenant, page, user.email);
      const p = await silent({});
      expect(p.get('error')).toBeNull();
      const { idToken } = await finishAtCallback(h, tenant, page, 'quiet');
      expect(idToken!.sub).toBe(user.id);
    });

    it('a login_hint of a signed-out account → login_required', async () => {
      const user = await createUser(h, tenant);
      expect((await silent({ login_hint: user.email })).get('error')).toBe('login_required');
    });
  });
});

describe('max_age', () => {
  it('an older sign-in than max_age asks for the password with the email pre-filled; auth_time is in the ID token', async () => {
    const user = await createUser(h, tenant);
    const first = await signInThrough(h, tenant, page, user.email);
    await sleep(2100);

    await openAuthorize(page, authorizeUrl(h, tenant, { max_age: '1', state: 'old' }));
    if ((await chooserAccountsOrNull(page)) !== null) await pickAccount(page, user.email);
    await expectPage(page, 'signin');
    expect(await page.getByLabel('Email').inputValue()).toBe(user.email);
    await signIn(page, undefined);
    const { idToken } = await finishAtCallback(h, tenant, page, 'old');
    expect(typeof idToken!.auth_time).toBe('number');
    expect(idToken!.auth_time as number).toBeGreaterThan(first.idToken!.auth_time as number);
    expect(Math.floor(Date.now() / 1000) - (idToken!.auth_time as number)).toBeLessThanOrEqual(5);
  });

  it('a recent enough sign-in continues without a password, and auth_time is still in the ID token', async () => {
    const user = await createUser(h, tenant);
    const first = await signInThrough(h, tenant, page, user.email);
    await openAuthorize(page, authorizeUrl(h, tenant, { max_age: '3600' }));
    await pickAccount(page, user.email);
    const { idToken } = await finishAtCallback(h, tenant, page);
    expect(idToken!.auth_time).toBe(first.idToken!.auth_time);
  });

  it('max_age=0 behaves as prompt=login', async () => {
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    await openAuthorize(page, authorizeUrl(h, tenant, { max_age: '0', login_hint: user.email }));
    await expectPage(page, 'signin');
    await signIn(page, undefined);
    const { idToken } = await finishAtCallback(h, tenant, page);
    expect(typeof idToken!.auth_time).toBe('number');
  });
});

describe('sign-up pre-fill', () => {
  it('first_name, last_name and phone_number pre-fill the sign-up form and stay editable', async () => {
    await openAuthorize(
      page,
      authorizeUrl(h, tenant, {
        action: 'register',
        first_name: 'Ada',
        last_name: 'Byron',
        phone_number: '+1 415 555 0123',
        scope: 'openid profile email phone',
      }),
    );
    await expectPage(page, 'signup');
    expect(await page.getByLabel('First name').inputValue()).toBe('Ada');
    expect(await page.getByLabel('Last name').inputValue()).toBe('Byron');
    expect(await page.getByLabel('Phone number (optional)').inputValue()).toBe('+1 415 555 0123');
    for (const label of ['First name', 'Last name', 'Phone number (optional)', 'Email'])
      expect(await page.getByLabel(label, { exact: true }).isEditable()).toBe(true);

    const email = newEmail('prefill');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('First name').fill('Augusta');
    await page.getByLabel('Date of birth').fill('1990-05-17');
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await clickAndLoad(page, page.getByRole('button', { name: 'Create account' }));
    await allow(page);
    const { tokens } = await finishAtCallback(h, tenant, page);
    expect(await userinfo(h, tenant, tokens.access_token)).toMatchObject({
      given_name: 'Augusta',
      family_name: 'Byron',
      phone_number: '+14155550123',
      email,
    });
  });

  it('is ignored for an existing account', async () => {
    const user = await createUser(h, tenant, { givenName: 'Ada', familyName: 'Lovelace' });
    await openAuthorize(
      page,
      authorizeUrl(h, tenant, {
        login_hint: user.email,
        first_name: 'Mallory',
        last_name: 'Evil',
        phone_number: '+14155550123',
        scope: 'openid profile phone',
      }),
    );
    await expectPage(page, 'signin');
    expect(await page.locator('main').innerText()).not.toContain('Mallory');
    await expect(page.getByLabel('First name').count()).resolves.toBe(0);
    await signIn(page, undefined);
    await allow(page);
    const { tokens } = await finishAtCallback(h, tenant, page);
    const claims = await userinfo(h, tenant, tokens.access_token);
    expect(claims).toMatchObject({ given_name: 'Ada', family_name: 'Lovelace' });
    expect(claims.phone_number).toBeUndefined();
    const row = await h.t.database.db('users').where({ id: user.id }).first();
    expect({ given: row.given_name, family: row.family_name, phone: row.phone_number }).toEqual({
      given: 'Ada',
      family: 'Lovelace',
      phone: null,
    });
  });
});

async function chooserAccountsOrNull(p: Page) {
  return (await p.locator('h1', { hasText: 'Choose an account' }).count()) ? chooserAccounts(p) : null;
}
