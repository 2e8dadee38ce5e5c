import { buildTestApp } from '../helpers';
import { buildPlatform, buildUser } from '../factories';
import { createCredential, getAssertion } from '../support/soft-authenticator';
import { relyingPartyOf } from '../../src/services/mfa/passkeys.service';
import { runCommand } from '../../src/cli/commands';

// Passkeys at the service level, with a software authenticator whose flags the test sets.
const BASE = 'http://localhost:4567';
let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ BASE_URL: BASE });
});
afterAll(() => t.close());

async function tenant() {
  const platform = await buildPlatform(t.services);
  const user = await buildUser(t.services, platform.id);
  return { platform, user };
}

async function addPasskey(
  platform: { id: string; name: string },
  user: { id: string; email: string },
  name: string,
  flags = { uv: true },
) {
  const options = await t.services.passkeys.registrationOptions(platform, user);
  const { credential, json } = createCredential(options, BASE, flags);
  const result = await t.services.passkeys.register(platform, user, {
    name,
    credential: json,
    expectedChallenge: options.challenge,
  });
  if (!result.ok) throw new Error(result.message);
  return { credential, passkey: result.passkey };
}

describe('passkeys service', () => {
  it('registers several named passkeys per account, lists them oldest first and removes one', async () => {
    const { platform, user } = await tenant();
    const options = await t.services.passkeys.registrationOptions(platform, user);
    expect(options.rp).toEqual({ name: platform.name, id: 'localhost' });
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required' });
    const a = await addPasskey(platform, user, '  Laptop   Touch ID ');
    const b = await addPasskey(platform, user, 'Security key');
    expect((await t.services.passkeys.list(platform.id, user.id)).map((p) => p.name)).toEqual([
      'Laptop Touch ID',
      'Security key',
    ]);
    // The next registration excludes both (no second registration of one authenticator).
    const again = await t.services.passkeys.registrationOptions(platform, user);
    expect(again.excludeCredentials!.map((c) => c.id).sort()).toEqual([a.credential.id, b.credential.id].sort());

    const other = await buildUser(t.services, platform.id);
    expect(await t.services.passkeys.remove(platform.id, other.id, a.passkey.id)).toBe(false); // not theirs
    expect(await t.services.passkeys.remove(platform.id, user.id, 'not-a-uuid')).toBe(false); // no 5xx on bad input
    expect(await t.services.passkeys.remove(platform.id, user.id, a.passkey.id)).toBe(true);
    expect((await t.services.passkeys.list(platform.id, user.id)).map((p) => p.name)).toEqual(['Security key']);
    expect(await t.services.passkeys.count(platform.id, user.id)).toBe(1);
  });

  it('admin user reset-mfa removes every passkey of the user (a lost device)', async () => {
    const { platform, user } = await tenant();
    await addPasskey(platform, user, 'A');
    await addPasskey(platform, user, 'B');
    expect(
      await runCommand(t.services, ['user', 'reset-mfa', '--platform', platform.id, '--email', user.email]),
    ).toMatchObject({ sub: user.id, passkeys_removed: 2 });
    expect(await t.services.passkeys.count(platform.id, user.id)).toBe(0);
  });

  it('refuses a nameless passkey, a wrong challenge, a foreign origin and a duplicate credential', async () => {
    const { platform, user } = await tenant();
    const options = await t.services.passkeys.registrationOptions(platform, user);
    const { json } = createCredential(options, BASE);
    expect(
      await t.services.passkeys.register(platform, user, {
        name: '  ',
        credential: json,
        expectedChallenge: options.challenge,
      }),
    ).toMatchObject({ ok: false });
    expect(
      await t.services.passkeys.register(platform, user, {
        name: 'x'.repeat(65),
        credential: json,
        expectedChallenge: options.challenge,
      }),
    ).toMatchObject({ ok: false });
    expect(
      await t.services.passkeys.register(platform, user, {
        name: 'Phone',
        credential: json,
        expectedChallenge: 'another-challenge',
      }),
    ).toMatchObject({ ok: false });
    expect(
      await t.services.passkeys.register(platform, user, {
        name: 'Phone',
        credential: '{"id":1}',
        expectedChallenge: options.challenge,
      }),
    ).toMatchObject({ ok: false });
    expect(
      await t.services.passkeys.register(platform, user, {
        name: 'Phone',
        credential: 'not json',
        expectedChallenge: options.challenge,
      }),
    ).toMatchObject({ ok: false });
    const foreign = createCredential(options, 'http://evil.example');
    expect(
      await t.services.passkeys.register(platform, user, {
        name: 'Phone',
        credential: foreign.json,
        expectedChallenge: options.challenge,
      }),
    ).toMatchObject({ ok: false });
    expect(
      await t.services.passkeys.register(platform, user, {
        name: 'Phone',
        credential: json,
        expectedChallenge: options.challenge,
      }),
    ).toMatchObject({ ok: true });
    expect(
      await t.services.passkeys.register(platform, user, {
        name: 'Phone again',
        credential: json,
        expectedChallenge: options.challenge,
      }),
    ).toEqual({ ok: false, message: 'security:passkeys.errors.alreadyRegistered' }); // a catalog key: the page translates it
    expect(await t.services.passkeys.count(platform.id, user.id)).toBe(1);
  });

  it('signs in passwordless only with user verification, and says how (amr hwk/swk + user)', async () => {
    const { platform, user } = await tenant();
    const { credential, passkey } = await addPasskey(platform, user, 'Laptop');
    const options = await t.services.passkeys.authenticationOptions(platform);
    expect(options.userVerification).toBe('required');
    expect(options.allowCredentials).toEqual([]); // discoverable: the browser offers its passkeys

    const noUv = getAssertion(credential, options, BASE, { uv: false });
    const refused = await t.services.passkeys.authenticate(platform, {
      credential: noUv,
      expectedChallenge: options.challenge,
    });
    expect(refused).toMatchObject({ ok: false, message: 'security:passkeys.errors.userNotVerified' });

    const ok = await t.services.passkeys.authenticate(platform, {
      credential: getAssertion(credential, options, BASE),
      expectedChallenge: options.challenge,
    });
    expect(ok).toMatchObject({
      ok: true,
      user: { id: user.id, email: user.email },
      userVerified: true,
      amr: ['hwk', 'user'],
    });
    expect(ok.ok && 'passwordHash' in ok.user).toBe(false);
    const [stored] = await t.services.passkeys.list(platform.id, user.id);
    expect(stored).toMatchObject({ id: passkey.id, counter: credential.counter });
    expect(stored.lastUsedAt).toBeInstanceOf(Date);

    // A cloned authenticator (counter not above the stored one) is refused.
    const cloned = getAssertion(credential, options, BASE, { uv: true }, credential.counter);
    expect(
      await t.services.passkeys.authenticate(platform, { credential: cloned, expectedChallenge: options.challenge }),
    ).toMatchObject({ ok: false });
  });

  it('reports a synced passkey as swk', async () => {
    const { platform, user } = await tenant();
    const { credential } = await addPasskey(platform, user, 'Synced', { uv: true, be: true, bs: true } as never);
    const options = await t.services.passkeys.authenticationOptions(platform);
    const ok = await t.services.passkeys.authenticate(platform, {
      credential: getAssertion(credential, options, BASE, { uv: true, be: true, bs: true }),
      expectedChallenge: options.challenge,
    });
    expect(ok).toMatchObject({ ok: true, amr: ['swk', 'user'] });
    expect((await t.services.passkeys.list(platform.id, user.id))[0]).toMatchObject({
      isBackupEligible: true,
      isBackedUp: true,
    });
  });

  it("as a second factor: the user's own passkeys only, user verification not needed", async () => {
    const { platform, user } = await tenant();
    const other = await buildUser(t.services, platform.id);
    const mine = await addPasskey(platform, user, 'Mine');
    const theirs = await addPasskey(platform, other, 'Theirs');
    const options = await t.services.passkeys.authenticationOptions(platform, user);
    expect(options.allowCredentials!.map((c) => c.id)).toEqual([mine.credential.id]);
    expect(options.userVerification).toBe('preferred');
    const ok = await t.services.passkeys.authenticate(platform, {
      credential: getAssertion(mine.credential, options, BASE, { uv: false }),
      expectedChallenge: options.challenge,
      forUser: user,
    });
    expect(ok).toMatchObject({ ok: true, userVerified: false, amr: ['hwk'] });
    const wrong = await t.services.passkeys.authenticate(platform, {
      credential: getAssertion(theirs.credential, options, BASE),
      expectedChallenge: options.challenge,
      forUser: user,
    });
    expect(wrong).toMatchObject({ ok: false });
  });

  it('keeps passkeys per platform and refuses a wrong challenge', async () => {
    const { platform, user } = await tenant();
    const elsewhere = await buildPlatform(t.services);
    const { credential } = await addPasskey(platform, user, 'Laptop');
    const options = await t.services.passkeys.authenticationOptions(elsewhere);
    expect(
      await t.services.passkeys.authenticate(elsewhere, {
        credential: getAssertion(credential, options, BASE),
        expectedChallenge: options.challenge,
      }),
    ).toMatchObject({ ok: false });
    const here = await t.services.passkeys.authenticationOptions(platform);
    expect(
      await t.services.passkeys.authenticate(platform, {
        credential: getAssertion(credential, here, BASE),
        expectedChallenge: 'stale',
      }),
    ).toMatchObject({ ok: false });
  });

  it('has no relying party for an IP BASE_URL (browsers refuse an IP as RP id)', async () => {
    expect(relyingPartyOf('http://127.0.0.1:3000')).toEqual({
      rpId: '127.0.0.1',
      origin: 'http://127.0.0.1:3000',
      isAvailable: false,
    });
    expect(relyingPartyOf('http://[::1]:3000').isAvailable).toBe(false);
    expect(relyingPartyOf('https://id.example.com')).toEqual({
      rpId: 'id.example.com',
      origin: 'https://id.example.com',
      isAvailable: true,
    });
    const ip = await buildTestApp({ BASE_URL: 'http://127.0.0.1:4568' });
    try {
      const platform = await buildPlatform(ip.services);
      const user = await buildUser(ip.services, platform.id);
      await expect(ip.services.passkeys.registrationOptions(platform, user)).rejects.toMatchObject({
        code: 'invalid_request',
      });
    } finally {
      await ip.close();
    }
  });
});
