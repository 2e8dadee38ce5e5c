import { invalidRequest } from '../../errors';
import type { CliCommand } from '../command-table';
import { one } from '../flags';

export const userCommands: CliCommand[] = [
  {
    group: 'user', verb: 'create',
    usage: '--platform G --email E --password P --given-name A --family-name B --birthdate YYYY-MM-DD [--phone +E164] [--email-verified] [--preferred-username NAME]',
    flags: ['platform', 'email', 'password', 'given-name', 'family-name', 'birthdate', 'phone', 'email-verified', 'preferred-username'],
    summary: 'Create a user (argon2id password; the same rules as sign-up).',
    async run(s, flags) {
      const platformId = one(flags, 'platform', true);
      await s.platforms.requirePlatform(platformId);
      const verified = flags.get('email-verified');
      if (verified && (verified.length > 1 || verified[0] !== true)) throw invalidRequest('--email-verified takes no value');
      const result = await s.users.createUser(platformId, {
        email: one(flags, 'email', true),
        password: one(flags, 'password', true),
        givenName: one(flags, 'given-name', true),
        familyName: one(flags, 'family-name', true),
        birthdate: one(flags, 'birthdate', true),
        phoneNumber: one(flags, 'phone'),
        preferredUsername: one(flags, 'preferred-username'), // absent: derived from the name
        emailVerified: Boolean(verified),
      });
      if (!result.ok) throw invalidRequest(result.errors.map((e) => `${e.field}: ${e.message}`).join('; '));
      return { sub: result.user.id, email: result.user.email, preferred_username: result.user.preferredUsername };
    },
  },
  {
    group: 'user', verb: 'reset-mfa', usage: '--platform G --email E', flags: ['platform', 'email'],
    summary: "Remove the user's authenticator app, recovery codes and passkeys (a lost device).",
    async run(s, flags) {
      const platformId = one(flags, 'platform', true);
      await s.platforms.requirePlatform(platformId);
      const user = await s.users.findByEmail(platformId, one(flags, 'email', true));
      if (!user) throw invalidRequest('no user with that email on this platform');
      const had = (await s.mfa.totp.status(user.id)).enrolled;
      await s.mfa.removeTotp(user.id);
      const passkeysRemoved = await s.passkeys.removeAll(platformId, user.id);
      return { platform_guid: platformId, sub: user.id, email: user.email, totp_removed: had, passkeys_removed: passkeysRemoved };
    },
  },
];
