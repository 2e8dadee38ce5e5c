import { parseInput } from '../../services/admin/parse-input';
import { Uuid } from '../../wire/admin/common.schemas';
import type { Operator } from '../../domain/operator';
import type { CliCommand } from '../command-table';
import { one } from '../flags';

const presentOperator = (o: Operator) => ({
  id: o.id,
  email: o.email,
  platform_guid: o.platformId,
  totp_enrolled: o.hasTotp,
  created_at: o.createdAt.toISOString(),
  last_sign_in_at: o.lastSignInAt?.toISOString() ?? null,
  disabled_at: o.disabledAt?.toISOString() ?? null,
});

/** Admin console operators: created here only; they sign in at /admin with the password and a second factor (app or passkey). */
export const operatorCommands: CliCommand[] = [
  {
    group: 'operator',
    verb: 'create',
    usage: '--email E [--platform G] [--password P]',
    flags: ['email', 'platform', 'password'],
    summary: 'Create a console operator: global, or limited to one platform.',
    details: [
      'Without --password a strong one is generated and printed once, as "password".',
      'At the first sign-in at /admin the operator sets up an authenticator app (TOTP): a second factor is mandatory.',
    ],
    async run(s, flags, actor) {
      const platform = one(flags, 'platform');
      const { operator, password } = await s.operators.create(actor, {
        email: one(flags, 'email', true),
        platformId: platform === undefined ? null : parseInput(Uuid, platform),
        password: one(flags, 'password'),
      });
      return { ...presentOperator(operator), ...(password ? { password } : {}) };
    },
  },
  {
    group: 'operator',
    verb: 'list',
    usage: '',
    flags: [],
    summary: 'Every console operator (never a password or TOTP secret).',
    run: async (s, _flags, actor) => ({ operators: (await s.operators.list(actor)).map(presentOperator) }),
  },
  {
    group: 'operator',
    verb: 'disable',
    usage: '--email E',
    flags: ['email'],
    summary: 'Disable an operator: no more sign-ins, and its console session ends at its next request.',
    run: async (s, flags, actor) => presentOperator(await s.operators.disable(actor, one(flags, 'email', true))),
  },
  {
    group: 'operator',
    verb: 'enable',
    usage: '--email E',
    flags: ['email'],
    summary: 'Enable a disabled operator again: it signs in with its password and second factor as before.',
    run: async (s, flags, actor) => presentOperator(await s.operators.enable(actor, one(flags, 'email', true))),
  },
  {
    group: 'operator',
    verb: 'unlock',
    usage: '--email E',
    flags: ['email'],
    summary:
      "Clear an operator account's sign-in locks and failed attempts over every source (an address's own lock over every email stays).",
    async run(s, flags, actor) {
      const { operator, cleared } = await s.operators.unlock(actor, one(flags, 'email', true));
      return { ...presentOperator(operator), cleared };
    },
  },
  {
    group: 'operator',
    verb: 'reset-mfa',
    usage: '--email E',
    flags: ['email'],
    summary: "A lost device: remove the operator's authenticator app and passkeys, and end its console sessions.",
    details: [
      'At the next sign-in, after the password, the operator sets up a second factor again (an app or a passkey).',
    ],
    async run(s, flags, actor) {
      const { operator, totpRemoved, passkeysRemoved, sessionsEnded } = await s.operators.resetMfa(
        actor,
        one(flags, 'email', true),
      );
      return {
        ...presentOperator(operator),
        totp_removed: totpRemoved,
        passkeys_removed: passkeysRemoved,
        sessions_ended: sessionsEnded,
      };
    },
  },
];
