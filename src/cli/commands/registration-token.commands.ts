import { parseInput } from '../../services/admin/parse-input';
import { PageQuery, PlatformParams } from '../../wire/admin/common.schemas';
import { RegistrationTokenCreate, RegistrationTokenParams } from '../../wire/admin/registration-tokens.schemas';
import { presentRegistrationToken } from '../../presenters/admin/registration-token.presenter';
import type { CliCommand } from '../command-table';
import { one, pageFlags } from '../flags';

const platformOf = (flags: Parameters<CliCommand['run']>[1]) =>
  parseInput(PlatformParams, { platform_guid: one(flags, 'platform', true) }).platform_guid;

/** A number flag as the schema sees it: absent stays absent, anything else is checked there. */
const numberFlag = (value: string | undefined) => (value === undefined ? undefined : Number(value));

export const registrationTokenCommands: CliCommand[] = [
  {
    group: 'registration-token',
    verb: 'create',
    usage: '--platform G [--max-uses N] [--expires-in SECONDS]',
    flags: ['platform', 'max-uses', 'expires-in'],
    summary: 'An initial access token for dynamic client registration (RFC 7591), shown once.',
    details: [
      'For a standard platform with --registration token: the software sends Authorization: Bearer TOKEN to {issuer}/oauth/register',
      '--max-uses N: how many clients it may register (unlimited if left out); --expires-in: seconds until it expires (never if left out)',
      'Only its SHA-256 digest is stored.',
    ],
    async run(s, flags, actor) {
      const input = parseInput(
        RegistrationTokenCreate,
        Object.fromEntries(
          Object.entries({
            max_uses: numberFlag(one(flags, 'max-uses')),
            expires_in: numberFlag(one(flags, 'expires-in')),
          }).filter(([, v]) => v !== undefined),
        ),
      );
      const { registrationToken, token } = await s.admin.registrationTokens.create(actor, platformOf(flags), input);
      return { ...presentRegistrationToken(registrationToken), token };
    },
  },
  {
    group: 'registration-token',
    verb: 'list',
    usage: '--platform G [--limit N] [--cursor C]',
    flags: ['platform', 'limit', 'cursor'],
    summary: "The platform's registration tokens, newest first, with their status (never the tokens).",
    async run(s, flags, actor) {
      const page = await s.admin.registrationTokens.list(
        actor,
        platformOf(flags),
        parseInput(PageQuery, pageFlags(flags)),
      );
      return { items: page.items.map(presentRegistrationToken), next_cursor: page.nextCursor };
    },
  },
  {
    group: 'registration-token',
    verb: 'revoke',
    usage: '--platform G --id ID',
    flags: ['platform', 'id'],
    summary: 'Revoke a registration token: it registers nothing from now (its clients stay).',
    async run(s, flags, actor) {
      const { platform_guid, token_id } = parseInput(RegistrationTokenParams, {
        platform_guid: one(flags, 'platform', true),
        token_id: one(flags, 'id', true),
      });
      return presentRegistrationToken(await s.admin.registrationTokens.revoke(actor, platform_guid, token_id));
    },
  },
];
