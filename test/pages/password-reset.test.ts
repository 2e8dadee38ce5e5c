import express from 'express';
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser, TEST_PASSWORD } from '../factories';
import { browser } from '../support/browser';
import { linkIn, mailsTo, waitForMail } from '../support/outbox';
import { authorizeQuery, exchange, inputValue, pathOf, refresh, signInThrough } from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const NEW_PASSWORD = 'a brand new pass phrase';
const newEmail = () => `reset-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function tenant() {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const c = await buildClient(t.services, p.id);
  const u = await buildUser(t.services, p.id, { email: newEmail() });
  return { p, c, u };
}

/** From the authorization's sign-in page: "Forgot password?" → email → "Check your email". */
async function askForReset(b: ReturnType<typeof browser>, p: { id: string }, email: string) {
  await b.get(`/password/forgot?platform_guid=${p.id}`);
  expect(b.pageTitle()).toBe('Reset your password');
  const sent = await b.submit(`/password/forgot?platform_guid=${p.id}`, { email });
  expect(sent.res.status).toBe(200);
  return b.html;
}

describe('password reset', () => {
  it('links "Forgot password?" from the sign-in page and comes back to that sign-in', async () => {
    const { p, c } = await tenant();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    const iid = /action="\/interaction\/([^/"]+)\/signin"/.exec(b.html)![1];
    expect(b.html).toContain(`href="/interaction/${iid}/forgot"`);
    await b.get(`/interaction/${iid}/forgot`);
    expect(b.pageTitle()).toBe('Reset your password');
    expect(b.html).toContain(`href="/interaction/${iid}"`); // "Back to sign in"
  });

  it('answers the same for an unknown email and a known one, and mails only the known one', async () => {
    const { p, u } = await tenant();
    const stranger = newEmail();
    const known = await askForReset(browser(t.app), p, u.email);
    const unknown = await askForReset(browser(t.app), p, stranger);
    const strip = (html: string) => html.replace(/name="_csrf" value="[^"]*"/g, '');
    expect(strip(unknown)).toBe(strip(known));
    expect(known).toContain('If an account exists for that address');
    await waitForMail(t.config.dataDir, u.email, /Reset your Acme Travel password/);
    expect(await mailsTo(t.config.dataDir, stranger)).toHaveLength(0);
  });

  it('does the same database work before answering, whether or not the email has an account', async () => {
    const { p, u } = await tenant();
    // The SQL each POST ran before its answer was sent (the session store's own pool aside).
    const sql: string[] = [];
    const onQuery = (q: { sql: string }) => sql.push(q.sql);
    const beforeAnswer: string[][] = [];
    const observed = express().use((req, res, next) => {
      const start = sql.length;
      if (req.method === 'POST') res.once('finish', () => beforeAnswer.push(sql.slice(start)));
      next();
    }, t.app);
    t.database.db.on('query', onQuery);
    try {
      await askForReset(browser(observed), p, newEmail()); // warms the platform cache
      await askForReset(browser(observed), p, u.email);
      await askForReset(browser(observed), p, newEmail());
    } finally {
      t.database.db.off('query', onQuery);
    }
    expect(beforeAnswer).toHaveLength(3);
    expect(beforeAnswer[1]).toEqual(beforeAnswer[2]);
    expect(beforeAnswer[1].join('\n')).not.toMatch(/users|account_tokens/);
    await waitForMail(t.config.dataDir, u.email, /Reset your Acme Travel password/);
  });

  it('sets a new password under the sign-up policy, revokes refresh tokens and signs other browsers out', async () => {
    const { p, c, u } = await tenant();
    // Another browser signed in through an app, holding a refresh token.
    const other = browser(t.app);
    const tokens = await exchange(t.app, p, c, await signInThrough(other, p, c, u.email));
    expect(tokens.refresh_token).toBeDefined();

    const b = browser(t.app);
    await askForReset(b, p, u.email);
    const mail = await waitForMail(t.config.dataDir, u.email, /Reset your/);
    expect(mail.text).toMatch(/expires in 30 minutes/);
    const link = linkIn(mail, '/password/reset');
    await b.get(pathOf(link));
    expect(b.pageTitle()).toBe('Choose a new password');

    const weak = await b.submit(`/password/reset?platform_guid=${p.id}`, {
      token: inputValue(b.html, 'token')!,
      password: 'password',
    });
    expect(weak.res.status).toBe(400);
    expect(b.html).toMatch(/too common|at least/);
    const done = await b.submit(`/password/reset?platform_guid=${p.id}`, {
      token: inputValue(b.html, 'token')!,
      password: NEW_PASSWORD,
    });
    expect(done.res.status).toBe(200);
    expect(b.pageTitle()).toBe('Your password has been changed');

    expect((await refresh(t.app, p, c, tokens.refresh_token!)).body.error).toBe('invalid_grant');
    expect(await t.services.authorize.verifyCredentials(p.id, u.email, TEST_PASSWORD)).toBeUndefined();
    expect(await t.services.authorize.verifyCredentials(p.id, u.email, NEW_PASSWORD)).toBeDefined();
    expect((await t.services.users.findById(p.id, u.id))!.emailVerified).toBe(true);

    // The other browser is no longer signed in: the chooser lists the account as signed out.
    await other.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect(other.pageTitle()).toBe('Choose an account');
    expect(other.html).toContain('Signed out');
    const none = await other.get(`/oauth/authorize?${authorizeQuery(p, c, { prompt: 'none' })}`);
    expect(new URL(none.location!).searchParams.get('error')).toBe('login_required');

    // The link works once.
    const again = await request(t.app).get(pathOf(link));
    expect(again.status).toBe(410);
    expect(again.text).toContain('This link has already been used');
    await waitForMail(t.config.dataDir, u.email, /password was changed/);
  });

  it('explains an expired link (30 min) and only the newest link works', async () => {
    const { p, u } = await tenant();
    await askForReset(browser(t.app), p, u.email);
    const first = linkIn(await waitForMail(t.config.dataDir, u.email, /Reset your/), '/password/reset');
    const later = await buildTestApp({}, () => new Date(Date.now() + 31 * 60 * 1000));
    try {
      const expired = await request(later.app).get(pathOf(first));
      expect(expired.status).toBe(410);
      expect(expired.text).toContain('This link has expired');
      // A minute on, a second request replaces the first link.
      await askForReset(browser(later.app), p, u.email);
      const mails = await waitForMailCount(u.email, 2);
      const second = linkIn(mails[0], '/password/reset');
      expect(second).not.toBe(first);
      expect((await request(later.app).get(pathOf(second))).status).toBe(200);
      expect((await request(later.app).get(pathOf(first))).text).toContain('This link has already been used');
    } finally {
      await later.close();
    }
  });

  it('sends nothing more within a minute of the last link (same answer)', async () => {
    const { p, u } = await tenant();
    await askForReset(browser(t.app), p, u.email);
    await waitForMail(t.config.dataDir, u.email, /Reset your/);
    const html = await askForReset(browser(t.app), p, u.email);
    expect(html).toContain('If an account exists for that address');
    await new Promise((r) => setTimeout(r, 200));
    expect((await mailsTo(t.config.dataDir, u.email)).filter((m) => /Reset your/.test(m.subject))).toHaveLength(1);
  });

  it('requires the CSRF token', async () => {
    const { p, u } = await tenant();
    const res = await request(t.app)
      .post(`/password/forgot?platform_guid=${p.id}`)
      .type('form')
      .send({ email: u.email });
    expect(res.status).toBe(403);
  });
});

async function waitForMailCount(to: string, n: number) {
  for (let i = 0; i < 100; i++) {
    const mails = await mailsTo(t.config.dataDir, to);
    if (mails.length >= n) return mails;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`fewer than ${n} mails to ${to}`);
}
