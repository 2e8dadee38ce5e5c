import { invalidRequest } from '../../errors';
import type { Services } from '../../services';
import type { AdminActor } from '../../domain/admin';
import { parseInput } from '../../services/admin/parse-input';
import { PlatformParams } from '../../wire/admin/common.schemas';
import {
  UserConsentParams,
  UserCreate,
  UserListQuery,
  UserParams,
  UserSessionParams,
  UserUpdate,
} from '../../wire/admin/users.schemas';
import {
  presentUser,
  presentUserConsent,
  presentUserDetail,
  presentUserSession,
} from '../../presenters/admin/user.presenter';
import type { CliCommand } from '../command-table';
import { many, one, pageFlags, switchFlag, type Flags } from '../flags';

const platformOf = (flags: Flags) =>
  parseInput(PlatformParams, { platform_guid: one(flags, 'platform', true) }).platform_guid;

/** `--sub S` or `--email E` (exactly one): the user's platform and subject, checked like the API's path. */
export async function userOf(
  s: Services,
  flags: Flags,
  actor: AdminActor,
): Promise<{ platformId: string; sub: string }> {
  const platformId = platformOf(flags);
  const sub = one(flags, 'sub');
  const email = one(flags, 'email');
  if ((sub === undefined) === (email === undefined)) throw invalidRequest('give --sub or --email (one of them)');
  if (sub !== undefined) return { platformId, sub: parseInput(UserParams, { platform_guid: platformId, sub }).sub };
  return { platformId, sub: (await s.admin.users.getByEmail(actor, platformId, email!)).user.id };
}

const WHO = ['platform', 'sub', 'email'] as const;
const WHO_USAGE = '--platform G (--sub S | --email E)';

/** A verb that acts on one user and prints the API's answer. */
function action(
  verb: string,
  summary: string,
  run: (s: Services, actor: AdminActor, platformId: string, sub: string) => Promise<Record<string, unknown>>,
  details?: string[],
): CliCommand {
  return {
    group: 'user',
    verb,
    usage: WHO_USAGE,
    flags: WHO,
    summary,
    details,
    async run(s, flags, actor) {
      const { platformId, sub } = await userOf(s, flags, actor);
      return run(s, actor, platformId, sub);
    },
  };
}

const UPDATE_FLAGS = [
  'email-verified',
  'given-name',
  'family-name',
  'middle-name',
  'nickname',
  'preferred-username',
  'birthdate',
  'phone',
  'street-address',
  'locality',
  'region',
  'postal-code',
  'country',
  'clear',
  'new-email',
] as const;
const CLEARABLE = ['middle_name', 'nickname', 'phone_number', 'address'];

/** Update flags in the API's UserUpdate shape (validated by its schema). */
function updateBody(flags: Flags): unknown {
  const body: Record<string, unknown> = {};
  const set = (field: string, flag: string) => {
    const v = one(flags, flag);
    if (v !== undefined) body[field] = v;
  };
  set('email', 'new-email');
  set('given_name', 'given-name');
  set('family_name', 'family-name');
  set('middle_name', 'middle-name');
  set('nickname', 'nickname');
  set('preferred_username', 'preferred-username');
  set('birthdate', 'birthdate');
  set('phone_number', 'phone');
  const verified = one(flags, 'email-verified');
  if (verified !== undefined) {
    if (verified !== 'true' && verified !== 'false') throw invalidRequest('--email-verified must be true or false');
    body.email_verified = verified === 'true';
  }
  const address: Record<string, string> = {};
  for (const [field, flag] of [
    ['street_address', 'street-address'],
    ['locality', 'locality'],
    ['region', 'region'],
    ['postal_code', 'postal-code'],
    ['country', 'country'],
  ]) {
    const v = one(flags, flag);
    if (v !== undefined) address[field] = v;
  }
  if (Object.keys(address).length) body.address = address;
  for (const field of many(flags, 'clear')) {
    if (!CLEARABLE.includes(field)) throw invalidRequest(`--clear takes one of ${CLEARABLE.join(', ')}`);
    if (body[field] !== undefined) throw invalidRequest(`--clear ${field} and a new value for it`);
    body[field] = null;
  }
  return body;
}

export const userCommands: CliCommand[] = [
  {
    group: 'user',
    verb: 'create',
    usage:
      '--platform G --email E --password P --given-name A --family-name B --birthdate YYYY-MM-DD [--phone +E164] [--email-verified] [--preferred-username NAME]',
    flags: [
      'platform',
      'email',
      'password',
      'given-name',
      'family-name',
      'birthdate',
      'phone',
      'email-verified',
      'preferred-username',
    ],
    summary: 'Create a user (argon2id password; the same rules as sign-up).',
    async run(s, flags, actor) {
      const platformId = platformOf(flags);
      const body = parseInput(UserCreate, {
        email: one(flags, 'email', true),
        password: one(flags, 'password', true),
        given_name: one(flags, 'given-name', true),
        family_name: one(flags, 'family-name', true),
        birthdate: one(flags, 'birthdate', true),
        phone_number: one(flags, 'phone'),
        preferred_username: one(flags, 'preferred-username'), // absent: derived from the name
        email_verified: switchFlag(flags, 'email-verified'),
      });
      return presentUserDetail(await s.admin.users.create(actor, platformId, body));
    },
  },
  ...(['search', 'list'] as const).map((verb): CliCommand => ({
    group: 'user',
    verb,
    usage: '--platform G [--email PART] [--limit N] [--cursor C]',
    flags: ['platform', 'email', 'limit', 'cursor'],
    summary:
      verb === 'search'
        ? 'Users whose email contains PART (any case), oldest first.'
        : 'A page of users, oldest first (--email PART filters).',
    async run(s, flags, actor) {
      const query = parseInput(UserListQuery, { ...pageFlags(flags), email: one(flags, 'email') });
      const page = await s.admin.users.list(actor, platformOf(flags), query);
      return { items: page.items.map(presentUser), next_cursor: page.nextCursor };
    },
  })),
  action(
    'show',
    'One user: claims, email_verified, created/updated, disabled_at, second factors enrolled.',
    async (s, actor, p, sub) => presentUserDetail(await s.admin.users.get(actor, p, sub)),
  ),
  {
    group: 'user',
    verb: 'update',
    usage: `${WHO_USAGE} [--new-email E] [--email-verified true|false] [--given-name A] [--family-name B] [--middle-name M] [--nickname N] [--preferred-username U] [--birthdate YYYY-MM-DD] [--phone +E164] [--street-address S] [--locality L] [--region R] [--postal-code P] [--country CC] [--clear FIELD]...`,
    flags: [...WHO, ...UPDATE_FLAGS],
    summary:
      "Change a user's claims (the account page's rules; a new email is unverified unless --email-verified true).",
    details: [
      '--street-address, --locality, --region, --postal-code, --country: together replace the whole address',
      `--clear ${CLEARABLE.join('|')}: remove that claim (repeatable)`,
    ],
    async run(s, flags, actor) {
      const { platformId, sub } = await userOf(s, flags, actor);
      return presentUserDetail(
        await s.admin.users.update(actor, platformId, sub, parseInput(UserUpdate, updateBody(flags))),
      );
    },
  },
  action(
    'disable',
    'Disable: no sign-in by any first factor, browser sessions end, tokens revoked and refused.',
    async (s, actor, p, sub) => presentUserDetail(await s.admin.users.disable(actor, p, sub)),
  ),
  action('enable', 'Enable a disabled user.', async (s, actor, p, sub) =>
    presentUserDetail(await s.admin.users.enable(actor, p, sub)),
  ),
  action(
    'delete',
    'Delete the user and everything they own (tokens, consents, second factors, picture, mails, throttles).',
    (s, actor, p, sub) => s.admin.users.remove(actor, p, sub),
  ),
  action('unlock', "Clear the sign-in throttles of the user's email.", (s, actor, p, sub) =>
    s.admin.users.unlock(actor, p, sub),
  ),
  action('sign-out', 'Sign out everywhere: every browser session and refresh token.', (s, actor, p, sub) =>
    s.admin.users.signOut(actor, p, sub),
  ),
  action(
    'sessions',
    "The user's live app sessions (refresh-token families), newest first.",
    async (s, actor, p, sub) => ({ items: (await s.admin.users.sessions(actor, p, sub)).map(presentUserSession) }),
  ),
  {
    group: 'user',
    verb: 'revoke-session',
    usage: `${WHO_USAGE} --session ID`,
    flags: [...WHO, 'session'],
    summary: 'Revoke one session (its refresh and access tokens).',
    async run(s, flags, actor) {
      const { platformId, sub } = await userOf(s, flags, actor);
      const { session_id } = parseInput(UserSessionParams, {
        platform_guid: platformId,
        sub,
        session_id: one(flags, 'session', true),
      });
      return s.admin.users.revokeSession(actor, platformId, sub, session_id);
    },
  },
  action('consents', 'Apps the user consented to, most recent first.', async (s, actor, p, sub) => ({
    items: (await s.admin.users.consents(actor, p, sub)).map(presentUserConsent),
  })),
  {
    group: 'user',
    verb: 'revoke-consent',
    usage: `${WHO_USAGE} --client ID`,
    flags: [...WHO, 'client'],
    summary: "Revoke a consent and that app's tokens for the user.",
    async run(s, flags, actor) {
      const { platformId, sub } = await userOf(s, flags, actor);
      const { client_id } = parseInput(UserConsentParams, {
        platform_guid: platformId,
        sub,
        client_id: one(flags, 'client', true),
      });
      return s.admin.users.revokeConsent(actor, platformId, sub, client_id);
    },
  },
  {
    group: 'user',
    verb: 'reset-mfa',
    usage: WHO_USAGE,
    flags: WHO,
    summary: "Remove the user's authenticator app, recovery codes and passkeys (a lost device).",
    async run(s, flags, actor) {
      const { platformId, sub } = await userOf(s, flags, actor);
      const result = await s.admin.users.resetMfa(actor, platformId, sub);
      const { user } = await s.admin.users.get(actor, platformId, sub);
      return { platform_guid: platformId, email: user.email, ...result };
    },
  },
  action(
    'password-reset',
    'Mail the user a password reset link (queued in the outbox; never printed).',
    (s, actor, p, sub) => s.admin.users.sendPasswordReset(actor, p, sub),
  ),
];
