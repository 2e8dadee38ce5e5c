import { parseInput } from '../../services/admin/parse-input';
import { PageQuery } from '../../services/admin/schemas/common.schemas';
import { KeyParams, KeyRotate } from '../../services/admin/schemas/keys.schemas';
import { presentKey, presentKeyRotated } from '../../presenters/admin/key.presenter';
import type { CliCommand } from '../command-table';
import { one, pageFlags } from '../flags';

// The platform is passed as given: the service answers `unknown platform "G"` for anything that is not one.
export const keyCommands: CliCommand[] = [
  {
    group: 'key', verb: 'list', usage: '--platform G [--limit N] [--cursor C]', flags: ['platform', 'limit', 'cursor'],
    summary: 'The platform\'s signing keys, newest first: kid, status (active, retiring, retired), dates; never the key material.',
    details: ['retiring: rotated out, verifies the tokens it signed until they expire; retired: verifies nothing'],
    async run(s, flags, actor) {
      const page = await s.admin.keys.list(actor, one(flags, 'platform', true), parseInput(PageQuery, pageFlags(flags)));
      return { items: page.items.map(presentKey), next_cursor: page.nextCursor };
    },
  },
  {
    group: 'key', verb: 'rotate', usage: '--platform G [--alg HS512|RS256|ES256|EdDSA]', flags: ['platform', 'alg'],
    summary: 'Make a new active signing key; the old one stays published for its tokens.',
    details: ['--alg HS512 (default, every platform); RS256, ES256, EdDSA: standard platforms, one active key each'],
    async run(s, flags, actor) {
      const platformId = one(flags, 'platform', true);
      const { alg } = parseInput(KeyRotate, { alg: one(flags, 'alg') });
      return presentKeyRotated(platformId, await s.admin.keys.rotate(actor, platformId, alg));
    },
  },
  {
    group: 'key', verb: 'retire', usage: '--platform G --kid KID', flags: ['platform', 'kid'],
    summary: 'Retire a rotated-out key now: the tokens it signed stop verifying and the JWKS drops it.',
    details: ['The active key cannot be retired: rotate first.'],
    async run(s, flags, actor) {
      const platformId = one(flags, 'platform', true);
      const { kid } = parseInput(KeyParams.pick({ kid: true }), { kid: one(flags, 'kid', true) });
      return presentKey(await s.admin.keys.retire(actor, platformId, kid));
    },
  },
];
