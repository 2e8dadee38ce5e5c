import { randomInt } from 'node:crypto';
import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';
import { TEST_PASSWORD } from '../factories';
import { browser, type Browser } from '../support/browser';
import { totpAt } from '../support/totp';
import { answerDevice, deviceSetup, enterCode, poll, startDevice } from '../support/device';
import { SUPPORTED_LOCALES } from '../../src/domain/locales';
import { translatorFor } from '../../src/i18n/catalogs';

// BASE_URL/device (RFC 8628 §3.3): the person types the code their device shows, signs in through
// the authorization's own interaction (chooser, every factor) and approves or denies on a consent
// page that names the device's client and warns about codes someone else started. Wrong codes are
// a message, never a 5xx, and are throttled per source and per code (§5.1). Each test comes from its
// own address (X-Forwarded-For, TRUST_PROXY=true), so the throttles of one never reach another.
let clock = Date.now();
const now = () => new Date(clock);
const tick = (seconds: number) => (clock += seconds * 1000);
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ TRUST_PROXY: 'true' }, now);
});
afterAll(() => t.close());

const newSource = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
/** A browser at its own address. */
function from(source = newSource()): Browser {
  const b = browser(t.app);
  b.agent.set('X-Forwarded-For', source);
  return b;
}
/** A code no device was given (8 letters of the alphabet). */
const strayCode = () =>
  Array.from({ length: 8 }, () => 'BCDFGHJKLMNPQRSTVWXZ'[randomInt(20)])
    .join('')
    .replace(/^(.{4})/, '$1-');
const alert = (html: string) => /role="alert"[^>]*><p>([^<]*)</.exec(html)?.[1];

describe('GET /device', () => {
  it('shows one field for the code, focused, with a form token; not cacheable', async () => {
    const res = await request(t.app).get('/device').expect(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(res.text).toMatch(/<input id="user_code" name="user_code"[^>]* autofocus/);
    expect(res.text).toMatch(/<label for="user_code">Code from your device<\/label>/);
    expect(res.text).toMatch(/name="_csrf" value="[^"]+"/);
    expect(res.text).toContain('<form method="post" action="/device"');
  });

  it('pre-fills the code from verification_uri_complete, shown as XXXX-XXXX however it came', async () => {
    for (const given of ['BCDF-GHJK', 'bcdfghjk', 'bcdf-ghjk']) {
      const res = await request(t.app).get(`/device?user_code=${given}`).expect(200);
      expect(res.text).toContain('value="BCDF-GHJK"');
    }
    const odd = await request(t.app).get('/device?user_code=%3Cb%3E').expect(200);
    expect(odd.text).toContain('value="&lt;b&gt;"');
  });

  it.each(SUPPORTED_LOCALES)('speaks %s by Accept-Language', async (locale) => {
    const res = await request(t.app).get('/device').set('Accept-Language', locale).expect(200);
    const t_ = translatorFor(locale);
    expect(res.headers['content-language']).toBe(locale);
    expect(res.text).toContain(`<html lang="${locale}">`);
    expect(res.text).toContain(t_('device:heading'));
    expect(res.text).toContain(t_('device:codeHint'));
  });
});

describe('POST /device', () => {
  it('refuses a form without its token: 403 on a page', async () => {
    const res = await request(t.app)
      .post('/device')
      .set('Accept', 'text/html')
      .type('form')
      .send({ user_code: 'BCDF-GHJK' });
    expect(res.status).toBe(403);
    expect(res.type).toBe('text/html');
  });

  it('explains a malformed code and keeps what was typed', async () => {
    const b = from();
    await b.get('/device');
    const step = await b.submit('/device', { user_code: 'abc' });
    expect(step.res.status).toBe(400);
    expect(alert(b.html)).toBe('Enter the 8 letters shown on your device, for example BCDF-GHJK.');
    expect(b.html).toContain('value="abc"');
    expect(b.html).toContain('aria-invalid="true"');
  });

  it('explains a wrong code, never with a 5xx', async () => {
    const b = from();
    await b.get('/device');
    const step = await b.submit('/device', { user_code: strayCode() });
    expect(step.res.status).toBe(400);
    expect(alert(b.html)).toBe('That code is not valid. Check the code on your device and try again.');
  });

  it('takes the code in small letters, without the dash, or with spaces', async () => {
    const d = await deviceSetup(t.services);
    for (const shape of [
      (c: string) => c.toLowerCase().replace('-', ''),
      (c: string) => c.replace('-', ' '),
      (c: string) => ` ${c.toLowerCase()} `,
    ]) {
      const { user_code } = await startDevice(t.app, d);
      const b = from();
      await b.get('/device');
      await b.submit('/device', { user_code: shape(user_code) });
      expect(b.pageTitle()).toBe('Sign in');
    }
  });

  it('says so for an expired code and for one already answered', async () => {
    const d = await deviceSetup(t.services);
    const expired = await startDevice(t.app, d);
    tick(expired.expires_in + 1);
    const b = from();
    await b.get('/device');
    await b.submit('/device', { user_code: expired.user_code });
    expect(alert(b.html)).toBe('This code has expired. Start again on your device to get a new code.');

    const used = await startDevice(t.app, d);
    await answerDevice(t.app, used.user_code, d.user.email, 'allow', from());
    await b.get('/device');
    await b.submit('/device', { user_code: used.user_code });
    expect(alert(b.html)).toBe('This code has already been used. Start again on your device to get a new code.');
  });
});

describe('guessing', () => {
  it('locks a source after 10 wrong codes: 429 with Retry-After, and even a right code waits', async () => {
    const d = await deviceSetup(t.services);
    const { user_code } = await startDevice(t.app, d);
    const b = from();
    await b.get('/device');
    for (let i = 1; i <= 9; i++) {
      const step = await b.submit('/device', { user_code: strayCode() });
      expect(step.res.status).toBe(400);
    }
    const tenth = await b.submit('/device', { user_code: strayCode() });
    expect(tenth.res.status).toBe(429);
    expect(tenth.res.headers['retry-after']).toBe('60');
    expect(alert(b.html)).toBe('Too many wrong codes. Try again in 1 minute.');
    const right = await b.submit('/device', { user_code });
    expect(right.res.status).toBe(429);
    // Another address is not locked out by this one.
    const other = from();
    await other.get('/device');
    await other.submit('/device', { user_code });
    expect(other.pageTitle()).toBe('Sign in');
    // The lock ends.
    tick(61);
    await b.submit('/device', { user_code });
    expect(b.pageTitle()).toBe('Sign in');
  });

  it('locks a code tried 5 times, wherever the tries come from', async () => {
    const code = strayCode();
    for (let i = 1; i <= 5; i++) {
      const b = from();
      await b.get('/device');
      const step = await b.submit('/device', { user_code: code.toLowerCase() });
      expect(step.res.status).toBe(i < 5 ? 400 : 429);
    }
    const sixth = from();
    await sixth.get('/device');
    expect((await sixth.submit('/device', { user_code: code })).res.status).toBe(429);
    // That address may still try another code.
    expect((await sixth.submit('/device', { user_code: strayCode() })).res.status).toBe(400);
  });
});

describe('signing in and approving', () => {
  it('shows consent naming the device client, the code to compare, a warning, Approve and Deny', async () => {
    const d = await deviceSetup(t.services);
    const { user_code } = await startDevice(t.app, d, { scope: 'openid email' });
    const b = await enterCode(t.app, user_code, d.user.email, from());
    expect(b.pageTitle()).toBe('Living Room TV wants to access your account');
    expect(b.html).toContain('Signing in on another device');
    expect(b.html).toContain(`<p class="device-code">${user_code}</p>`);
    expect(b.html).toContain(
      'Approve only if you started signing in to Living Room TV on a device of your own just now.',
    );
    expect(b.html).toMatch(/<button type="submit" name="decision" value="allow"[^>]*>Approve<\/button>/);
    expect(b.html).toMatch(/<button type="submit" name="decision" value="deny"[^>]*>Deny<\/button>/);
    await b.submit('/consent', { decision: 'allow' });
    expect(b.pageTitle()).toBe('Device connected');
    expect(b.html).toContain('Living Room TV is now signed in on your device.');
    expect(b.html).toContain('Return to your device');
  });

  it('asks for consent every time, and offers the chooser to a browser already signed in', async () => {
    const d = await deviceSetup(t.services);
    const b = from();
    const first = await startDevice(t.app, d);
    await answerDevice(t.app, first.user_code, d.user.email, 'allow', b);
    await poll(t.app, d, first.device_code).expect(200);
    // The same person, app and scopes again: remembered consent does not approve a device.
    const second = await startDevice(t.app, d);
    await b.get('/device');
    await b.submit('/device', { user_code: second.user_code });
    expect(b.pageTitle()).toBe('Choose an account');
    await b.submit('/chooser', { account: d.user.id });
    expect(b.pageTitle()).toBe('Living Room TV wants to access your account');
    await b.submit('/consent', { decision: 'allow' });
    await poll(t.app, d, second.device_code).expect(200);
  });

  it('asks for the second factor of a user who has one, before consent', async () => {
    const d = await deviceSetup(t.services);
    const enrolment = (await t.services.mfa.totp.beginEnrolment(d.user, 'TV'))!;
    expect((await t.services.mfa.confirmTotp(d.user.id, totpAt(enrolment.secret, now()))).ok).toBe(true);
    tick(30);
    const start = await startDevice(t.app, d);
    const b = await enterCode(t.app, start.user_code, d.user.email, from());
    expect(b.pageTitle()).toBe('Two-step verification');
    await b.submit('/second-factor', { method: 'totp', code: totpAt(enrolment.secret, now()) });
    expect(b.pageTitle()).toBe('Living Room TV wants to access your account');
    await b.submit('/consent', { decision: 'allow' });
    const res = await poll(t.app, d, start.device_code).expect(200);
    const amr = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString()).amr;
    expect(amr).toEqual(expect.arrayContaining(['pwd', 'otp', 'mfa']));
  });

  it('says the code expired when it ran out while the person was signing in; the device hears expired_token', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    const b = await enterCode(t.app, start.user_code, d.user.email, from());
    tick(start.expires_in + 1);
    await b.submit('/consent', { decision: 'allow' });
    expect(b.pageTitle()).toBe('Code expired');
    expectOAuthError(await poll(t.app, d, start.device_code), 400, 'expired_token');
  });

  it.each(SUPPORTED_LOCALES)('shows the consent, the warning and the last page in %s', async (locale) => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    const b = from();
    b.agent.set('Accept-Language', locale);
    await enterCode(t.app, start.user_code, undefined, b);
    await b.submit('/signin', { email: d.user.email, password: TEST_PASSWORD });
    const t_ = translatorFor(locale);
    expect(b.html).toContain(t_('device:consent.caution'));
    expect(b.html).toContain(t_('device:consent.warning', { app: 'Living Room TV' }));
    expect(b.html).toContain(`>${t_('device:consent.approve')}</button>`);
    await b.submit('/consent', { decision: 'allow' });
    expect(b.pageTitle()).toBe(t_('device:done.approvedTitle'));
  });

  it('an answer from a second tab, after the first answered, changes nothing and says so', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    const first = await enterCode(t.app, start.user_code, d.user.email, from());
    const second = await enterCode(t.app, start.user_code, d.user.email, from());
    await first.submit('/consent', { decision: 'allow' });
    await second.submit('/consent', { decision: 'deny' });
    expect(second.pageTitle()).toBe('Code already answered');
    await poll(t.app, d, start.device_code).expect(200);
  });

  it('a denial says the device was not connected', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    const b = await answerDevice(t.app, start.user_code, d.user.email, 'deny', from());
    expect(b.pageTitle()).toBe('Device not connected');
    expect(b.html).toContain('You denied access. Living Room TV was not signed in on your device.');
  });

  it('signs in a new person through the sign-up form as well', async () => {
    const d = await deviceSetup(t.services);
    const start = await startDevice(t.app, d);
    const b = from();
    await b.get('/device');
    await b.submit('/device', { user_code: start.user_code });
    await b.get(/href="(\/interaction\/[^"]+\/signup)"/.exec(b.html)![1]); // "Create account"
    await b.submit('/signup', {
      email: `device-${randomInt(1e9)}@example.com`,
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1990-05-17',
      phone_number: '',
      password: TEST_PASSWORD,
    });
    expect(b.pageTitle()).toBe('Living Room TV wants to access your account');
    await b.submit('/consent', { decision: 'allow' });
    await poll(t.app, d, start.device_code).expect(200);
  });
});
