import { parseInput } from '../../services/admin/parse-input';
import { Uuid } from '../../wire/admin/common.schemas';
import type { AdminTokenRow } from '../../repositories/admin-token.repository';
import type { CliCommand } from '../command-table';
import { one } from '../flags';

const presentToken = (t: AdminTokenRow) => ({
  id: t.id,
  name: t.name,
  platform_guid: t.platformId,
  created_at: t.createdAt.toISOString(),
  last_used_at: t.lastUsedAt?.toISOString() ?? null,
  revoked_at: t.revokedAt?.toISOString() ?? null,
});

export const tokenCommands: CliCommand[] = [
  {
    group: 'token',
    verb: 'create',
    usage: '--name NAME [--platform G]',
    flags: ['name', 'platform'],
    summary: 'Create an admin API token (lk_admin_…), shown once: global, or limited to one platform.',
    details: ['Use it as Authorization: Bearer TOKEN on /admin/api/v1; only its SHA-256 digest is stored.'],
    async run(s, flags, actor) {
      const platform = one(flags, 'platform');
      const created = await s.admin.tokens.create(actor, {
        name: one(flags, 'name', true),
        platformId: platform === undefined ? null : parseInput(Uuid, platform),
      });
      return { ...presentToken(created), token: created.token };
    },
  },
  {
    group: 'token',
    verb: 'list',
    usage: '',
    flags: [],
    summary: 'Every admin token (never the token itself).',
    run: async (s, _flags, actor) => ({ tokens: (await s.admin.tokens.list(actor)).map(presentToken) }),
  },
  {
    group: 'token',
    verb: 'revoke',
    usage: '--id ID',
    flags: ['id'],
    summary: 'Revoke an admin token: it stops working at once.',
    run: async (s, flags, actor) => presentToken(await s.admin.tokens.revoke(actor, one(flags, 'id', true))),
  },
];
