import { buildTestApp } from '../helpers';
import { buildPlatform } from '../factories';
import { createCredential, getAssertion, type SoftCredential } from '../support/soft-authenticator';
import { totpAt } from '../support/totp';
import { cliActor } from '../../src/domain/admin';
import { runCommand } from '../../src/cli/commands';
import type { Operator } from '../../src/domain/operator';
import {
  buildOperator,
  consoleBrowser,
  h1Of,
  OPERATOR_PASSWORD,
  setupKeyOf,
  signInConsole,
  type ConsoleBrowser,
} from './console-support';

// Operators' passkeys: real WebAuthn answers from a
// software authenticator, through the service and through the console's forms.
const BASE = 'http://localhost:4567';
let clock = Date.now();
const now = () => new Date(clock);
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ BASE_URL: BASE }, now);
});
afterAll(() => t.close());

const ctx = { ...cliActor(), actorType: 'operator' as const };
const passkeysOf = () => t.services.operators.passkeys;
const eventsOf = async (email: string) =>
  (await t.services.audit.list({}, 200)).events.filter((e) => e.details.email === email);

/** A passkey added through the service (a software authenticator answering the real options). */
async function addPasskey(op: Operator, name: string, firstFactor = false) {
  clock += 1000; // listed oldest first
  const options = await passkeysOf().registrationOptions(op);
  const { credential, json } = createCredential(options, BASE);
  const added = await passkeysOf().register(ctx, op, {
    name,
    credential: json,
    expectedChallenge: options.challenge,
    firstFactor,
  });
  if (!added.ok) throw new Error(added.message);
  return { credential, passkey: added.passkey };
}

async function assertWith(op: Operator, credential: SoftCredential, counter?: number) {
  const options = await passkeysOf().authenticationOptions(op.id);
  const json = getAssertion(
    credential,
    { challenge: options.challenge, rpId: 'localhost' },
    BASE,
    { uv: true },
    counter,
  );
  return { json, challenge: options.challenge };
}

/** The password, then the second-factor page. */
async function afterPassword(b: ConsoleBrowser, email: string) {
  await b.get('/admin/sign-in');
  return b.follow(await b.post('/admin/sign-in', { email, password: OPERATOR_PASSWORD }));
}

describe('operator passkeys (service)', () => {
  it('adds a first passkey only to an operator without any second factor, then more as a signed-in operator', async () => {
    const op = await buildOperator(t.services);
    const options = await passkeysOf().registrationOptions(op);
    expect(options.rp).toEqual({ name: 'Latchkey admin', id: 'localhost' });
    await addPasskey(op, '  Laptop   key ', true);
    // A second "first factor" (the sign-in's enrolment) is refused: the operator has one now.
    const more = await passkeysOf().registrationOptions(op);
    const refused = await passkeysOf().register(ctx, op, {
      name: 'Sneaky',
      credential: createCredential(more, BASE).json,
      expectedChallenge: more.challenge,
      firstFactor: true,
    });
    expect(refused).toEqual({ ok: false, message: 'Sign in with your second factor first.' });
    await addPasskey(op, 'Security key');
    expect((await passkeysOf().list(op.id)).map((p) => p.name)).toEqual(['Laptop key', 'Security key']);
    const added = (await eventsOf(op.email)).filter((e) => e.kind === 'operator.passkey_added');
    expect(added.map((e) => e.details.name).sort()).toEqual(['Laptop key', 'Security key']);
    expect(JSON.stringify(added)).not.toContain('publicKey');
  });

  it('refuses an answer to another challenge, a malformed one, and an empty name', async () => {
    const op = await buildOperator(t.services);
    const options = await passkeysOf().registrationOptions(op);
    const { json } = createCredential(options, BASE);
    expect(
      (
        await passkeysOf().register(ctx, op, {
          name: 'A',
          credential: json,
          expectedChallenge: 'another-challenge',
          firstFactor: true,
        })
      ).ok,
    ).toBe(false);
    expect(
      (
        await passkeysOf().register(ctx, op, {
          name: 'A',
          credential: '{not json',
          expectedChallenge: options.challenge,
          firstFactor: true,
        })
      ).ok,
    ).toBe(false);
    expect(
      await passkeysOf().register(ctx, op, {
        name: '  ',
        credential: json,
        expectedChallenge: options.challenge,
        firstFactor: true,
      }),
    ).toEqual({ ok: false, message: 'Give the passkey a name.' });
    expect(await passkeysOf().count(op.id)).toBe(0);
  });

  it('never removes the last second factor; removes a passkey once another factor remains', async () => {
    const op = await buildOperator(t.services);
    const a = await addPasskey(op, 'Only one', true);
    await expect(passkeysOf().remove(ctx, op, a.passkey.id)).rejects.toMatchObject({
      code: 'invalid_request',
      description: expect.stringMatching(/only second factor/),
    });
    const b = await addPasskey(op, 'Spare');
    await expect(passkeysOf().remove(ctx, op, 'not-a-uuid')).rejects.toMatchObject({ code: 'invalid_request' });
    const other = await buildOperator(t.services);
    await expect(passkeysOf().remove(ctx, other, b.passkey.id)).rejects.toMatchObject({ code: 'invalid_request' }); // not theirs
    expect((await passkeysOf().remove(ctx, op, a.passkey.id)).name).toBe('Only one');
    await expect(passkeysOf().remove(ctx, op, b.passkey.id)).rejects.toMatchObject({ code: 'invalid_request' }); // now the last one
    expect((await passkeysOf().list(op.id)).map((p) => p.name)).toEqual(['Spare']);
    expect(
      (await eventsOf(op.email)).filter((e) => e.kind === 'operator.passkey_removed').map((e) => e.details.name),
    ).toEqual(['Only one']);
  });

  it('with the authenticator app set, even the only passkey can be removed', async () => {
    const op = await buildOperator(t.services);
    await signInConsole(consoleBrowser(t.app), op.email, now);
    const withApp = (await t.services.operators.findActive(op.id))!;
    const { passkey } = await addPasskey(withApp, 'Phone');
    expect((await passkeysOf().remove(ctx, withApp, passkey.id)).id).toBe(passkey.id);
  });

  it("signs in with the operator's passkey once per counter: a replayed or cloned answer, or another operator's passkey, is refused and audited", async () => {
    const op = await buildOperator(t.services);
    const { credential } = await addPasskey(op, 'Laptop', true);
    const first = await assertWith(op, credential);
    const ok = await passkeysOf().authenticate(
      ctx,
      op,
      { credential: first.json, expectedChallenge: first.challenge },
      'test-source',
    );
    expect(ok).toMatchObject({ ok: true, passkey: { name: 'Laptop', counter: 1 } });
    expect((await passkeysOf().list(op.id))[0].lastUsedAt).not.toBeNull();
    // The same answer again (its challenge even accepted): the counter did not go up.
    expect(
      await passkeysOf().authenticate(
        ctx,
        op,
        { credential: first.json, expectedChallenge: first.challenge },
        'test-source',
      ),
    ).toMatchObject({ ok: false });
    // A clone whose counter is behind.
    const clone = await assertWith(op, { ...credential }, 1);
    expect(
      (
        await passkeysOf().authenticate(
          ctx,
          op,
          { credential: clone.json, expectedChallenge: clone.challenge },
          'test-source',
        )
      ).ok,
    ).toBe(false);
    // Another operator's passkey does not stand for this one.
    const other = await buildOperator(t.services);
    const theirs = await addPasskey(other, 'Theirs', true);
    const foreign = await assertWith(op, theirs.credential);
    expect(
      await passkeysOf().authenticate(
        ctx,
        op,
        { credential: foreign.json, expectedChallenge: foreign.challenge },
        'test-source',
      ),
    ).toMatchObject({ ok: false, message: expect.stringMatching(/not registered/) });
    const next = await assertWith(op, credential);
    expect(
      (
        await passkeysOf().authenticate(
          ctx,
          op,
          { credential: next.json, expectedChallenge: next.challenge },
          'test-source',
        )
      ).ok,
    ).toBe(true);
    const failures = (await eventsOf(op.email))
      .filter((e) => e.kind === 'operator.sign_in_failed')
      .map((e) => e.details.reason)
      .sort();
    expect(failures).toEqual(['counter', 'counter', 'unknown_passkey']);
  });

  it('an operator with a passkey cannot add an authenticator app at sign-in (no way around the passkey)', async () => {
    const op = await buildOperator(t.services);
    await addPasskey(op, 'Laptop', true);
    expect(await t.services.operators.totpEnrolment(op.id)).toBeUndefined();
  });
});

describe('operator passkeys (console)', () => {
  it('an operator without a second factor adds a passkey on the enrolment page and is signed in (audited second_factor passkey)', async () => {
    const platform = await buildPlatform(t.services, 'Scoped');
    const op = await buildOperator(t.services, { platformId: platform.id });
    const b = consoleBrowser(t.app);
    const page = await afterPassword(b, op.email);
    expect(h1Of(page.text)).toBe('Set up authenticator app');
    expect(page.text).toContain('Or add a passkey');
    expect(page.text).toContain('data-passkey="create"');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const options = await b.post('/admin/sign-in/new-passkey/options', {});
    expect(options.status).toBe(200);
    const { json } = createCredential(options.body.options, BASE);
    const done = await b.post('/admin/sign-in/new-passkey', { name: 'Laptop', credential: json });
    expect({ status: done.status, location: done.headers.location }).toEqual({ status: 303, location: '/admin' });
    expect(h1Of((await b.follow(done)).text)).toBe('Platforms');
    const signedIn = (await eventsOf(op.email)).find((e) => e.kind === 'operator.signed_in')!;
    expect(signedIn.details).toMatchObject({ second_factor: 'passkey', passkey_enrolled: true });
    expect(signedIn.platformId).toBe(platform.id);
    // The pending app enrolment is gone for good: neither its page nor a code signs in past the passkey.
    const again = consoleBrowser(t.app);
    const codePage = await afterPassword(again, op.email);
    expect(h1Of(codePage.text)).toBe('Two-step verification');
    expect(codePage.text).not.toContain('id="code"');
    expect(codePage.text).toContain('Use a passkey');
    expect((await again.get('/admin/sign-in/authenticator')).headers.location).toBe('/admin/sign-in/code');
  });

  it('"Use a passkey" signs in; each challenge is used once, even when the answer was wrong', async () => {
    const op = await buildOperator(t.services);
    const { credential } = await addPasskey(op, 'Laptop', true);
    const b = consoleBrowser(t.app);
    await afterPassword(b, op.email);
    const options = (await b.post('/admin/sign-in/passkey/options', {})).body.options;
    const bad = await b.post('/admin/sign-in/passkey', { credential: '{"id":"x"}' });
    expect(bad.status).toBe(400);
    const good = getAssertion(credential, { challenge: options.challenge, rpId: 'localhost' }, BASE);
    const late = await b.post('/admin/sign-in/passkey', { credential: good });
    expect(late.status).toBe(400);
    expect(late.text).toContain('This passkey request has expired');
    expect((await b.get('/admin/platforms')).headers.location).toBe('/admin/sign-in');

    const fresh = (await b.post('/admin/sign-in/passkey/options', {})).body.options;
    const done = await b.post('/admin/sign-in/passkey', {
      credential: getAssertion(credential, { challenge: fresh.challenge, rpId: 'localhost' }, BASE),
    });
    expect(done.headers.location).toBe('/admin');
    const events = await eventsOf(op.email);
    expect(events.find((e) => e.kind === 'operator.signed_in')!.details).toMatchObject({
      second_factor: 'passkey',
      passkey_enrolled: false,
    });
    expect(events.find((e) => e.kind === 'operator.sign_in_failed')!.details).toMatchObject({
      factor: 'passkey',
      reason: 'malformed',
    });
  });

  it('offers both the code and "Use a passkey" to an operator with both; the code still works', async () => {
    const op = await buildOperator(t.services);
    const secret = await signInConsole(consoleBrowser(t.app), op.email, now);
    await addPasskey((await t.services.operators.findActive(op.id))!, 'Key');
    clock += 30_000;
    const b = consoleBrowser(t.app);
    const page = await afterPassword(b, op.email);
    expect(page.text).toContain('id="code"');
    expect(page.text).toContain('Use a passkey');
    expect((await b.post('/admin/sign-in/code', { code: totpAt(secret, now()) })).headers.location).toBe('/admin');
  });

  it('the account page lists the second factors; the only one has no Remove, a second one does', async () => {
    const op = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    await afterPassword(b, op.email);
    const options = (await b.post('/admin/sign-in/new-passkey/options', {})).body.options;
    await b.follow(
      await b.post('/admin/sign-in/new-passkey', { name: 'Laptop', credential: createCredential(options, BASE).json }),
    );
    expect(b.html).toContain('href="/admin/account"');
    const account = await b.get('/admin/account');
    expect(h1Of(account.text)).toBe('Your account');
    expect(account.text).toContain('Not set up');
    expect(account.text).toContain('Your only second factor');
    expect(account.text).not.toContain('>Remove<');
    const [only] = await passkeysOf().list(op.id);
    const refused = await b.post('/admin/account/passkeys/remove', { passkey: only.id });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/only second factor/);

    const more = (await b.post('/admin/account/passkeys/options', {})).body.options;
    const added = await b.follow(
      await b.post('/admin/account/passkeys', { name: 'Spare key', credential: createCredential(more, BASE).json }),
    );
    expect(added.text).toContain('Passkey “Spare key” added.');
    expect(added.text).toContain('>Remove<');
    const removed = await b.follow(await b.post('/admin/account/passkeys/remove', { passkey: only.id }));
    expect(removed.text).toContain('Passkey “Laptop” removed.');
    expect((await passkeysOf().list(op.id)).map((p) => p.name)).toEqual(['Spare key']);
    // A replayed registration form (its challenge used) adds nothing.
    const replay = await b.post('/admin/account/passkeys', {
      name: 'Again',
      credential: createCredential(more, BASE).json,
    });
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('This passkey request has expired');
  });
});

describe('the authenticator app on "Your account"', () => {
  /** An operator signed in with a passkey only; the sign-in's enrolment page seen first (a pending secret). */
  async function passkeyOperator() {
    const op = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    const enrol = await afterPassword(b, op.email);
    const pendingAtSignIn = setupKeyOf(enrol.text)!;
    const options = (await b.post('/admin/sign-in/new-passkey/options', {})).body.options;
    const { credential, json } = createCredential(options, BASE);
    expect((await b.post('/admin/sign-in/new-passkey', { name: 'Laptop', credential: json })).headers.location).toBe(
      '/admin',
    );
    return { op, b, credential, pendingAtSignIn };
  }

  it('a passkey operator sets up the app (a new secret, the same on reload), then signs in with its code; audited without the secret', async () => {
    const { op, b, pendingAtSignIn } = await passkeyOperator();
    const account = await b.get('/admin/account');
    expect(account.text).toContain('Not set up');
    expect(account.text).toContain('href="/admin/account/authenticator"');
    const setup = await b.get('/admin/account/authenticator');
    expect(h1Of(setup.text)).toBe('Set up authenticator app');
    const secret = setupKeyOf(setup.text)!;
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    // Not the secret shown at sign-in before the passkey existed (someone with the password alone saw that one).
    expect(secret).not.toBe(pendingAtSignIn);
    expect(setupKeyOf((await b.get('/admin/account/authenticator')).text)).toBe(secret);

    const wrong = await b.post('/admin/account/authenticator', {
      code: '000000' === totpAt(secret, now()) ? '111111' : '000000',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('That code is not right');
    expect(setupKeyOf(wrong.text)).toBe(secret);
    const done = await b.follow(await b.post('/admin/account/authenticator', { code: totpAt(secret, now()) }));
    expect(done.text).toContain('Authenticator app set up.');
    expect(done.text).toContain('Remove authenticator app');
    expect((await b.get('/admin/account/authenticator')).headers.location).toBe('/admin/account');
    const added = (await eventsOf(op.email)).find((e) => e.kind === 'operator.totp_added')!;
    expect(added).toMatchObject({ actorType: 'operator', actorId: op.id });
    expect(JSON.stringify(added)).not.toContain(secret);

    // The code that confirmed it does not sign in again (its step is used); the next one does.
    const again = consoleBrowser(t.app);
    const page = await afterPassword(again, op.email);
    expect(page.text).toContain('id="code"');
    expect((await again.post('/admin/sign-in/code', { code: totpAt(secret, now()) })).status).toBe(400);
    clock += 30_000;
    expect((await again.post('/admin/sign-in/code', { code: totpAt(secret, now()) })).headers.location).toBe('/admin');
  });

  it('a setup form without a started setup, or with a bad code, is refused plainly', async () => {
    const { b } = await passkeyOperator();
    await b.get('/admin/account');
    const unstarted = await b.post('/admin/account/authenticator', { code: '123456' });
    expect(unstarted.status).toBe(400);
    expect(unstarted.text).toContain('This setup has expired');
    await b.get('/admin/account/authenticator');
    expect((await b.post('/admin/account/authenticator', { code: 'not a code' })).status).toBe(400);
  });

  it('an operator with both removes the app (audited); the app alone cannot be removed', async () => {
    const op = await buildOperator(t.services);
    const b = consoleBrowser(t.app);
    await signInConsole(b, op.email, now);
    const appOnly = await b.get('/admin/account');
    expect(appOnly.text).not.toContain('Remove authenticator app');
    expect(appOnly.text).toContain('add a passkey before removing it');
    const refused = await b.post('/admin/account/authenticator/remove', {});
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('The authenticator app is your only second factor');

    const options = (await b.post('/admin/account/passkeys/options', {})).body.options;
    await b.follow(
      await b.post('/admin/account/passkeys', { name: 'Key', credential: createCredential(options, BASE).json }),
    );
    const removed = await b.follow(await b.post('/admin/account/authenticator/remove', {}));
    expect(removed.text).toContain('Authenticator app removed.');
    expect(removed.text).toContain('Not set up');
    expect((await t.services.operators.findActive(op.id))!.hasTotp).toBe(false);
    expect((await eventsOf(op.email)).filter((e) => e.kind === 'operator.totp_removed')).toHaveLength(1);
    // Twice: nothing left to remove.
    expect((await b.post('/admin/account/authenticator/remove', {})).status).toBe(400);
    // The next sign-in offers the passkey only.
    const next = await afterPassword(consoleBrowser(t.app), op.email);
    expect(next.text).not.toContain('id="code"');
    expect(next.text).toContain('Use a passkey');
  });

  it('admin operator reset-mfa removes the passkeys too: the next sign-in is an enrolment again', async () => {
    const { op, b, credential } = await passkeyOperator();
    await addPasskey((await t.services.operators.findActive(op.id))!, 'Spare');
    const out = await runCommand(t.services, ['operator', 'reset-mfa', '--email', op.email]);
    expect(out).toMatchObject({ totp_removed: false, passkeys_removed: 2, sessions_ended: 1 });
    expect(await passkeysOf().count(op.id)).toBe(0);
    expect((await b.get('/admin/account')).headers.location).toBe('/admin/sign-in');
    const again = consoleBrowser(t.app);
    expect(h1Of((await afterPassword(again, op.email)).text)).toBe('Set up authenticator app');
    // The old passkey no longer stands for the operator.
    const { json, challenge } = await assertWith(op, credential);
    expect(
      (await passkeysOf().authenticate(ctx, op, { credential: json, expectedChallenge: challenge }, 'test-source')).ok,
    ).toBe(false);
  });
});

describe('operator passkeys on an IP BASE_URL', () => {
  let ip: Awaited<ReturnType<typeof buildTestApp>>;
  beforeAll(async () => {
    ip = await buildTestApp({ BASE_URL: 'http://127.0.0.1:4567' }, now);
  });
  afterAll(() => ip.close());

  it('hides the passkey option with a one-line note; its options answer 400 JSON', async () => {
    const op = await buildOperator(ip.services);
    const b = consoleBrowser(ip.app);
    const page = await afterPassword(b, op.email);
    expect(setupKeyOf(page.text)).toBeDefined();
    expect(page.text).not.toContain('data-passkey=');
    expect(page.text).toContain('Passkeys are not available here');
    const options = await b.post('/admin/sign-in/new-passkey/options', {});
    expect(options.status).toBe(400);
    expect(options.body.error).toBe('invalid_request');
  });
});
