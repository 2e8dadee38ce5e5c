import { parseInput } from '../../services/admin/parse-input';
import { PageQuery } from '../../wire/admin/common.schemas';
import { KeyParams, KeyRotate } from '../../wire/admin/keys.schemas';
import { presentKey, presentKeyRotated } from '../../presenters/admin/key.presenter';
import type { CliCommand } from '../command-table';
import { one, pageFlags, switchFlag } from '../flags';

// The platform is passed as given: the service answers `unknown platform "G"` for anything that is not one.
export const keyCommands: CliCommand[] = [
  {
    group: 'key',
    verb: 'list',
    usage: '--platform G [--limit N] [--cursor C]',
    flags: ['platform', 'limit', 'cursor'],
    summary:
      "The platform's signing keys, newest first: kid, status (next, active, retiring, retired), dates; never the key material.",
    details: [
      'next: published in the JWKS, signs from activates_at; retiring: rotated out, verifies the tokens it signed until they expire (retired_at); retired: verifies nothing',
    ],
    async run(s, flags, actor) {
      const page = await s.admin.keys.list(
        actor,
        one(flags, 'platform', true),
        parseInput(PageQuery, pageFlags(flags)),
      );
      return { items: page.items.map(presentKey), next_cursor: page.nextCursor };
    },
  },
  {
    group: 'key',
    verb: 'rotate',
    usage: '--platform G [--alg HS512|RS256|ES256|EdDSA] [--immediately]',
    flags: ['platform', 'alg', 'immediately'],
    summary: 'Make a new signing key; the old one stays published for its tokens.',
    details: [
      '--alg HS512 (default, every platform): the new key signs at once',
      '--alg RS256|ES256|EdDSA (standard platforms, one signing key each): the new key is published in the JWKS at once and signs after SIGNING_KEY_PUBLICATION_SECONDS (activates_at)',
      '--immediately: RS256/ES256/EdDSA: the new key signs at once (a compromised key; then `admin key retire --kid OLD` to refuse its tokens)',
    ],
    async run(s, flags, actor) {
      const platformId = one(flags, 'platform', true);
      const { alg, immediately } = parseInput(KeyRotate, {
        alg: one(flags, 'alg'),
        ...(switchFlag(flags, 'immediately') ? { immediately: true } : {}),
      });
      return presentKeyRotated(platformId, await s.admin.keys.rotate(actor, platformId, alg, { immediately }));
    },
  },
  {
    group: 'key',
    verb: 'retire',
    usage: '--platform G --kid KID',
    flags: ['platform', 'kid'],
    summary: 'Retire a rotated-out key now: the tokens it signed stop verifying and the JWKS drops it.',
    details: [
      'The active key cannot be retired: rotate first. A next key: the rotation is called off (it never signed).',
    ],
    async run(s, flags, actor) {
      const platformId = one(flags, 'platform', true);
      const { kid } = parseInput(KeyParams.pick({ kid: true }), { kid: one(flags, 'kid', true) });
      return presentKey(await s.admin.keys.retire(actor, platformId, kid));
    },
  },
];
