// The account chooser: shown whenever the browser knows an account of the platform;
// continue without a password, pick a signed-out account, another account, sign out.
import type { Page } from 'playwright-core';
import {
  authorizeUrl,
  buildTenant,
  chooserAccounts,
  clickAndLoad,
  createUser,
  expectPage,
  finishAtCallback,
  introspect,
  newPage,
  openAuthorize,
  pickAccount,
  signIn,
  signInThrough,
  signOutButton,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';

let h: Harness;
let tenant: Tenant;
let page: Page;

useBrowserSuite((s) => ({ h, tenant, page } = s));

const useAnother = (p: Page) => clickAndLoad(p, p.getByRole('button', { name: 'Use another account' }));

it('a browser that knows no account gets the sign-in page, not the chooser', async () => {
  await openAuthorize(page, authorizeUrl(h, tenant));
  await expectPage(page, 'signin');
  await expect(page.getByRole('link', { name: 'Choose another account' }).count()).resolves.toBe(0);
});

it('the chooser appears whenever the browser holds an account, signed in or signed out', async () => {
  const user = await createUser(h, tenant);
  await signInThrough(h, tenant, page, user.email);

  await openAuthorize(page, authorizeUrl(h, tenant));
  await expect(page.getByRole('heading', { name: 'Choose an account' }).isVisible()).resolves.toBe(true);
  expect(await chooserAccounts(page)).toEqual([{ email: user.email, signedOut: false }]);

  // Even a request for the sign-up page lands on the chooser first.
  await openAuthorize(page, authorizeUrl(h, tenant, { action: 'register' }));
  await expectPage(page, 'chooser');

  await clickAndLoad(page, signOutButton(page, user.email));
  expect(await chooserAccounts(page)).toEqual([{ email: user.email, signedOut: true }]);
  await openAuthorize(page, authorizeUrl(h, tenant));
  expect(await chooserAccounts(page)).toEqual([{ email: user.email, signedOut: true }]);
});

it('continues as a signed-in account without a password, straight back with a code when consent is remembered', async () => {
  const user = await createUser(h, tenant);
  const first = await signInThrough(h, tenant, page, user.email);

  await openAuthorize(page, authorizeUrl(h, tenant, { state: 'pick' }));
  await expectPage(page, 'chooser');
  await pickAccount(page, user.email);
  const { idToken } = await finishAtCallback(h, tenant, page, 'pick');
  expect(idToken!.sub).toBe(user.id);
  expect(idToken!.auth_time).toBe(first.idToken!.auth_time); // the same sign-in, no new one
});

it('picking a signed-out account opens the sign-in page with its email pre-filled', async () => {
  const user = await createUser(h, tenant);
  await signInThrough(h, tenant, page, user.email);
  await openAuthorize(page, authorizeUrl(h, tenant));
  await clickAndLoad(page, signOutButton(page, user.email));

  await pickAccount(page, user.email);
  await expectPage(page, 'signin');
  expect(await page.getByLabel('Email').inputValue()).toBe(user.email);
  expect(await page.getByLabel('Password').inputValue()).toBe('');
  await signIn(page, undefined);
  const { idToken } = await finishAtCallback(h, tenant, page);
  expect(idToken!.sub).toBe(user.id);
});

it('"Use another account" opens an empty sign-in page, with a way back to the chooser', async () => {
  const user = await createUser(h, tenant);
  await signInThrough(h, tenant, page, user.email);
  await openAuthorize(page, authorizeUrl(h, tenant));
  await useAnother(page);
  await expectPage(page, 'signin');
  expect(await page.getByLabel('Email').inputValue()).toBe('');
  await clickAndLoad(page, page.getByRole('link', { name: 'Choose another account' }));
  await expectPage(page, 'chooser');
});

it('"Sign out <email>" lists the account as signed out and revokes the refresh tokens issued through this browser', async () => {
  const user = await createUser(h, tenant);
  const here = await signInThrough(h, tenant, page, user.email);
  // The same user in another browser: its tokens are not this browser's to revoke.
  const other = await newPage(h);
  const elsewhere = await signInThrough(h, tenant, other.page, user.email);
  await other.context.close();
  expect(here.tokens.refresh_token).toMatch(/^rt_/);
  expect((await introspect(h, tenant, here.tokens.refresh_token!)).active).toBe(true);

  await openAuthorize(page, authorizeUrl(h, tenant));
  await clickAndLoad(page, signOutButton(page, user.email));
  await expectPage(page, 'chooser');
  expect(await chooserAccounts(page)).toEqual([{ email: user.email, signedOut: true }]);

  expect(await introspect(h, tenant, here.tokens.refresh_token!)).toEqual({ active: false });
  expect((await introspect(h, tenant, elsewhere.tokens.refresh_token!)).active).toBe(true);

  // Signed out means a password is needed again.
  await pickAccount(page, user.email);
  await expectPage(page, 'signin');
});

it('"Remove <email>" on a signed-out account forgets it', async () => {
  const user = await createUser(h, tenant);
  await signInThrough(h, tenant, page, user.email);
  await openAuthorize(page, authorizeUrl(h, tenant));
  await clickAndLoad(page, signOutButton(page, user.email));
  await clickAndLoad(page, page.getByRole('button', { name: `Remove ${user.email}`, exact: true }));
  await expectPage(page, 'signin');
});

it('two accounts in one browser: both listed, each continues as itself', async () => {
  const ada = await createUser(h, tenant);
  const bob = await createUser(h, tenant, { givenName: 'Bob', familyName: 'Builder' });
  await signInThrough(h, tenant, page, ada.email);
  await signInThrough(h, tenant, page, bob.email); // via "Use another account"

  await openAuthorize(page, authorizeUrl(h, tenant));
  const listed = await chooserAccounts(page);
  expect(listed.map((a) => a.email).sort()).toEqual([ada.email, bob.email].sort());
  expect(listed.every((a) => !a.signedOut)).toBe(true);
  expect(listed[0].email).toBe(bob.email); // the latest sign-in first

  for (const user of [ada, bob, ada]) {
    await openAuthorize(page, authorizeUrl(h, tenant));
    await pickAccount(page, user.email);
    const { idToken } = await finishAtCallback(h, tenant, page);
    expect(idToken!.sub).toBe(user.id);
    expect(idToken!.email).toBe(user.email);
  }
});

it('"Sign out of all accounts" signs every account out and revokes their refresh tokens', async () => {
  const ada = await createUser(h, tenant);
  const bob = await createUser(h, tenant);
  const a = await signInThrough(h, tenant, page, ada.email);
  const b = await signInThrough(h, tenant, page, bob.email);

  await openAuthorize(page, authorizeUrl(h, tenant));
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign out of all accounts' }));
  await expectPage(page, 'chooser');
  const listed = await chooserAccounts(page);
  expect(listed).toHaveLength(2);
  expect(listed.every((x) => x.signedOut)).toBe(true);
  // Nobody is signed in now: no "Sign out of all accounts" to offer (each row still has "Remove").
  await expect(page.getByRole('button', { name: 'Sign out of all accounts' }).count()).resolves.toBe(0);
  await expect(page.getByRole('button', { name: /^Remove / }).count()).resolves.toBe(2);
  expect(await introspect(h, tenant, a.tokens.refresh_token!)).toEqual({ active: false });
  expect(await introspect(h, tenant, b.tokens.refresh_token!)).toEqual({ active: false });

  // prompt=none now finds nobody signed in.
  await openAuthorize(page, authorizeUrl(h, tenant, { prompt: 'none' }));
  expect(new URL(page.url()).searchParams.get('error')).toBe('login_required');
});

it('two platforms in one browser are kept apart', async () => {
  const other = await buildTenant(h);
  const onA = await createUser(h, tenant);
  const onB = await createUser(h, other);
  await signInThrough(h, tenant, page, onA.email);

  // Platform B knows nobody in this browser: no chooser, and A's account is not offered.
  await openAuthorize(page, authorizeUrl(h, other));
  await expectPage(page, 'signin');
  expect(await page.content()).not.toContain(onA.email);
  // A's credentials mean nothing on B.
  await signIn(page, onA.email);
  await expectPage(page, 'signin');
  await expect(page.getByRole('alert').innerText()).resolves.toMatch(/Incorrect email or password/);
  await signIn(page, onB.email);
  await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
  expect((await finishAtCallback(h, other, page)).idToken!.sub).toBe(onB.id);

  await openAuthorize(page, authorizeUrl(h, other));
  expect(await chooserAccounts(page)).toEqual([{ email: onB.email, signedOut: false }]);
  await openAuthorize(page, authorizeUrl(h, tenant));
  expect(await chooserAccounts(page)).toEqual([{ email: onA.email, signedOut: false }]);

  // Signing out on A leaves B signed in.
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign out of all accounts' }));
  await openAuthorize(page, authorizeUrl(h, other));
  expect(await chooserAccounts(page)).toEqual([{ email: onB.email, signedOut: false }]);
});
