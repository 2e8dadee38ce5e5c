// What real users do to a flow: the back button after it completed, a double
// submit, and a session cookie that expired or was tampered with. Each ends on a page the user
// can carry on from (sign-in, chooser, consent, or back at the app), never a 5xx or a stack.
import type { BrowserContext, Page, Response } from 'playwright-core';
import {
  authorizeUrl,
  callbackParams,
  clickAndLoad,
  createUser,
  expectPage,
  finishAtCallback,
  isCallback,
  openAuthorize,
  pageKind,
  pickAccount,
  settledContent,
  signIn,
  signInThrough,
  signUp,
  TEST_PASSWORD,
  newEmail,
  type Harness,
  type Tenant,
} from './support/harness';
import { useBrowserSuite } from './support/browser-suite';

let h: Harness;
let tenant: Tenant;
let context: BrowserContext;
let page: Page;

useBrowserSuite((s) => ({ h, tenant, context, page } = s));

const CARRY_ON = ['signin', 'signup', 'chooser', 'consent', 'callback'];

/** A page the user can continue from: no server error, no stack trace, a known hosted page or the app. */
async function expectSensible(p: Page, res: Response | null | undefined, allowed = CARRY_ON) {
  if (res) expect(res.status()).toBeLessThan(500);
  const kind = await pageKind(p);
  if (process.env.E2E_DEBUG) console.log('landed on', kind, p.url(), res?.status());
  if (!allowed.includes(kind)) {
    throw new Error(
      `expected one of ${allowed.join(', ')}, got ${kind} at ${p.url()}:\n${(await p.locator('body').innerText()).slice(0, 800)}`,
    );
  }
  if (!isCallback(p)) expect(await settledContent(p)).not.toMatch(/\bat [\w.<>]+ \(|node_modules|Error:/);
  return kind;
}

describe('the back button after a completed flow', () => {
  it('after sign-in and consent, Back then submitting the old form again leads on sensibly', async () => {
    const user = await createUser(h, tenant);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await signIn(page, user.email);
    await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
    await finishAtCallback(h, tenant, page);

    const back = await page.goBack();
    const kind = await expectSensible(page, back);
    if (kind === 'consent') {
      // The page came back from the history cache: its form still has to lead somewhere sensible.
      const res = await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
      await expectSensible(page, res);
    }
  });

  it('after sign-up, Back shows a sensible page, and the old form does not create a second account', async () => {
    const email = newEmail('back');
    await openAuthorize(page, authorizeUrl(h, tenant, { action: 'register', scope: 'openid' }));
    await signUp(page, { email });
    await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
    await finishAtCallback(h, tenant, page);

    const back = await page.goBack();
    await expectSensible(page, back);
    expect(await h.t.database.db('users').where({ email_normalized: email })).toHaveLength(1);
  });

  it('after a completed flow, Back then Reload explains itself (no 5xx, no stack) and a new attempt works', async () => {
    const user = await createUser(h, tenant);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await signIn(page, user.email);
    await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
    await finishAtCallback(h, tenant, page);
    await page.goBack();
    const res = await page.reload();
    const kind = await expectSensible(page, res, [...CARRY_ON, 'error']);
    if (kind === 'error') {
      // The finished interaction is gone: a plain 4xx page that says what to do.
      expect(res!.status()).toBeLessThan(500);
      await expect(page.getByRole('alert').innerText()).resolves.toMatch(/expired.*start again/i);
    }
    await openAuthorize(page, authorizeUrl(h, tenant, { state: 'again' }));
    await pickAccount(page, user.email);
    await finishAtCallback(h, tenant, page, 'again');
  });

  it('after continuing from the chooser, Back and picking again gives the app a new code', async () => {
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await pickAccount(page, user.email);
    const first = callbackParams(page).get('code');

    const back = await page.goBack();
    const kind = await expectSensible(page, back);
    if (kind === 'chooser') {
      const res = await clickAndLoad(page, page.locator('button[name=account]', { hasText: user.email }));
      await expectSensible(page, res);
      if (isCallback(page)) expect(callbackParams(page).get('code')).not.toBe(first);
    }
  });
});

describe('a double submit', () => {
  it('of the sign-in form', async () => {
    const user = await createUser(h, tenant);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    // The second click may abort the first navigation (net::ERR_ABORTED): then only where it ends counts.
    const nav = page.waitForNavigation().catch(() => null);
    await page.getByRole('button', { name: 'Sign in' }).dblclick();
    await expectSensible(page, await nav);
    await page.waitForLoadState('load');
    await expectSensible(page, null);
  });

  it('of the sign-in form, the second POST arriving after the first completed', async () => {
    const user = await createUser(h, tenant);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    // Keep a copy of the form as the browser would post it, then submit it for real.
    const replay = await page.evaluate(() => {
      const form = document.querySelector('form')!;
      return {
        action: form.action,
        fields: Array.from(form.querySelectorAll('input[name]'), (i) => [
          (i as HTMLInputElement).name,
          (i as HTMLInputElement).value,
        ]),
      };
    });
    await clickAndLoad(page, page.getByRole('button', { name: 'Sign in' }));
    await expectPage(page, 'consent');
    const res = await replayForm(page, replay);
    const kind = await expectSensible(page, res);
    expect(kind).not.toBe('signin'); // the browser is signed in: no password asked again
  });

  it('of the consent form', async () => {
    const user = await createUser(h, tenant);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await signIn(page, user.email);
    await expectPage(page, 'consent');
    const replay = await page.evaluate(() => {
      const form = document.querySelector('form')!;
      const fields = Array.from(form.querySelectorAll('input[name]'), (i) => [
        (i as HTMLInputElement).name,
        (i as HTMLInputElement).value,
      ]);
      return { action: form.action, fields: [...fields, ['decision', 'allow']] };
    });
    // The second click may abort the first navigation (net::ERR_ABORTED): then only where it ends counts.
    const nav = page.waitForNavigation().catch(() => null);
    await page.getByRole('button', { name: 'Allow' }).dblclick();
    await expectSensible(page, await nav);
    await page.waitForLoadState('load');
    await expectSensible(page, null);
    // And once more after it all completed.
    const res = await replayForm(page, replay);
    await expectSensible(page, res);
  });

  it('of the sign-up form creates one account and leads on', async () => {
    const email = newEmail('double');
    await openAuthorize(page, authorizeUrl(h, tenant, { action: 'register' }));
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('First name').fill('Double');
    await page.getByLabel('Last name').fill('Click');
    await page.getByLabel('Date of birth').fill('1990-05-17');
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    // The second click may abort the first navigation (net::ERR_ABORTED): then only where it ends counts.
    const nav = page.waitForNavigation().catch(() => null);
    await page.getByRole('button', { name: 'Create account' }).dblclick();
    await expectSensible(page, await nav);
    await page.waitForLoadState('load');
    await expectSensible(page, null, ['consent', 'chooser', 'signin']);
    expect(await h.t.database.db('users').where({ email_normalized: email })).toHaveLength(1);
  });
});

describe('a bad session cookie', () => {
  async function sessionCookie(ctx: BrowserContext) {
    const cookie = (await ctx.cookies(h.base)).find((c) => c.name === 'latchkey.sid');
    if (!cookie) throw new Error('no latchkey.sid cookie');
    return cookie;
  }

  it('tampered while on the sign-in page: submitting it gives the sign-in page again, not an error', async () => {
    const user = await createUser(h, tenant);
    await openAuthorize(page, authorizeUrl(h, tenant, { state: 'tamper' }));
    await expectPage(page, 'signin');
    const cookie = await sessionCookie(context);
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    await context.addCookies([
      { ...cookie, value: cookie.value.slice(0, -4) + (cookie.value.endsWith('AAAA') ? 'BBBB' : 'AAAA') },
    ]);

    const res = await signIn(page, user.email);
    await expectSensible(page, res, ['signin']);
    // Carrying on from there works.
    await signIn(page, user.email);
    await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
    await finishAtCallback(h, tenant, page, 'tamper');
  });

  it('tampered after signing in: the next authorization shows the sign-in page, not an error', async () => {
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    const cookie = await sessionCookie(context);
    await context.addCookies([{ ...cookie, value: `s%3A${'x'.repeat(32)}.${'y'.repeat(43)}` }]);
    const { res } = await openAuthorize(page, authorizeUrl(h, tenant));
    await expectSensible(page, res, ['signin']);
  });

  it('expired on the server while on the sign-in page: submitting it gives the sign-in page, not an error', async () => {
    const user = await createUser(h, tenant);
    await openAuthorize(page, authorizeUrl(h, tenant, { state: 'expired' }));
    await expectPage(page, 'signin');
    await h.t.database.db('session').update({ expire: h.t.database.db.raw("now() - interval '1 day'") });
    const res = await signIn(page, user.email);
    await expectSensible(page, res, ['signin']);
    await signIn(page, user.email);
    await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
    await finishAtCallback(h, tenant, page, 'expired');
  });

  it('expired in the browser (cookie gone) while on the consent page: Allow leads to the sign-in page', async () => {
    const user = await createUser(h, tenant);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await signIn(page, user.email);
    await expectPage(page, 'consent');
    await context.clearCookies();
    const res = await clickAndLoad(page, page.getByRole('button', { name: 'Allow' }));
    await expectSensible(page, res, ['signin']);
  });

  it('expired while on the chooser: picking the account gives the sign-in page', async () => {
    const user = await createUser(h, tenant);
    await signInThrough(h, tenant, page, user.email);
    await openAuthorize(page, authorizeUrl(h, tenant));
    await expectPage(page, 'chooser');
    const cookie = await sessionCookie(context);
    await context.addCookies([{ ...cookie, value: 'garbage' }]);
    const res = await pickAccount(page, user.email);
    await expectSensible(page, res, ['signin']);
  });
});

/** Posts the saved fields to the saved action from the page, as a second click would. */
async function replayForm(p: Page, replay: { action: string; fields: string[][] }) {
  const nav = p.waitForNavigation();
  await p.evaluate(({ action, fields }) => {
    const form = document.createElement('form');
    form.method = 'post';
    form.action = action;
    for (const [k, v] of fields) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = k;
      input.value = v;
      form.appendChild(input);
    }
    document.body.appendChild(form);
    form.submit();
  }, replay);
  return nav;
}
