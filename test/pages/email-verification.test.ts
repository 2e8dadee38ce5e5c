import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { linkIn, mailsTo, waitForMail } from '../support/outbox';
import {
  accountSignIn,
  exchange,
  pathOf,
  signInThrough,
  signUpThrough,
  userinfo,
  jwtPayload,
} from '../support/account-flows';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const newEmail = () => `verify-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function tenant() {
  const p = await buildPlatform(t.services, 'Acme Travel');
  const c = await buildClient(t.services, p.id);
  return { p, c };
}

describe('email verification', () => {
  it('mails a branded link at sign-up; opening it sets email_verified, seen by the next tokens and userinfo', async () => {
    const { p, c } = await tenant();
    const email = newEmail();
    const b = browser(t.app);
    const first = await exchange(t.app, p, c, await signUpThrough(b, p, c, email));
    expect(jwtPayload(first.id_token).email_verified).toBe(false);

    const mail = await waitForMail(t.config.dataDir, email, /Verify your email/);
    expect(mail.subject).toBe('Verify your email address for Acme Travel');
    expect(mail.from).toMatch(/^Acme Travel </);
    expect(mail.html).toMatch(/<a href="http:\/\/issuer\.test\/verify-email\?/);
    const link = linkIn(mail, '/verify-email');
    // Only the hash is stored.
    const token = new URL(link).searchParams.get('token')!;
    const rows = await t.database.db('account_tokens').where({ platform_id: p.id });
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0].expires_at.getTime() - rows[0].created_at.getTime()).toBe(24 * 3600 * 1000);

    const opened = await request(t.app).get(pathOf(link));
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('Your email address is verified');

    expect((await userinfo(t.app, p, first.access_token)).body.email_verified).toBe(true);
    const next = await exchange(t.app, p, c, await signInThrough(b, p, c, email));
    expect(jwtPayload(next.id_token).email_verified).toBe(true);

    const again = await request(t.app).get(pathOf(link));
    expect(again.status).toBe(410);
    expect(again.text).toContain('This link has already been used');
  });

  it('explains an expired link (24 h) and an unknown one', async () => {
    const { p, c } = await tenant();
    const email = newEmail();
    await signUpThrough(browser(t.app), p, c, email);
    const link = linkIn(await waitForMail(t.config.dataDir, email, /Verify/), '/verify-email');
    const later = await buildTestApp({}, () => new Date(Date.now() + 24 * 3600 * 1000 + 1000));
    try {
      const res = await request(later.app).get(pathOf(link));
      expect(res.status).toBe(410);
      expect(res.text).toContain('This link has expired');
    } finally {
      await later.close();
    }
    const user = await t.services.users.findByEmail(p.id, email);
    expect(user!.emailVerified).toBe(false);
    const unknown = await request(t.app).get(`/verify-email?platform_guid=${p.id}&token=${'x'.repeat(43)}`);
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('This link is not valid');
  });

  it('resends from the account page, at most once a minute', async () => {
    const { p } = await tenant();
    const u = await buildUser(t.services, p.id, { email: newEmail() });
    const b = browser(t.app);
    await accountSignIn(b, p, u.email);
    expect(b.html).toContain('Not verified');
    await b.submit(`/account/verify-email?platform_guid=${p.id}`, { account: u.id });
    expect(b.html).toContain(`We sent a verification link to ${u.email}`);
    await b.submit(`/account/verify-email?platform_guid=${p.id}`, { account: u.id });
    expect(b.html).toMatch(/sent a moment ago/);
    const mail = await waitForMail(t.config.dataDir, u.email, /Verify/);
    expect(await mailsTo(t.config.dataDir, u.email)).toHaveLength(1);
    await request(t.app)
      .get(pathOf(linkIn(mail, '/verify-email')))
      .expect(200);
    await b.get(`/account?platform_guid=${p.id}`);
    expect(b.html).toContain('badge-ok');
  });
});
