import { parseInput } from '../../services/admin/parse-input';
import { AuditAllQuery } from '../../wire/admin/audit.schemas';
import { PlatformParams } from '../../wire/admin/common.schemas';
import { presentAuditEvent } from '../../presenters/admin/audit-event.presenter';
import type { CliCommand } from '../command-table';
import { one, pageFlags } from '../flags';

export const auditCommands: CliCommand[] = [
  {
    group: 'audit',
    verb: 'list',
    usage:
      '[--platform G] [--kind K] [--subject S] [--client C] [--actor-type T] [--since T] [--until T] [--limit N] [--cursor C]',
    flags: ['platform', 'kind', 'subject', 'client', 'actor-type', 'since', 'until', 'limit', 'cursor'],
    summary: 'Audit events, newest first (a page; next_cursor continues).',
    details: [
      "--platform: that platform's events only; without it, every event (also those of no platform)",
      '--kind e.g. sign_in.failed, key.rotated; --actor-type user, admin_token, operator, cli, system',
      '--since (inclusive) and --until (exclusive): ISO 8601 times, e.g. 2026-11-24T10:00:00Z',
    ],
    async run(s, flags, actor) {
      const platform = one(flags, 'platform');
      const platformId =
        platform === undefined ? null : parseInput(PlatformParams, { platform_guid: platform }).platform_guid;
      const query = parseInput(AuditAllQuery, {
        kind: one(flags, 'kind'),
        subject: one(flags, 'subject'),
        client_id: one(flags, 'client'),
        actor_type: one(flags, 'actor-type'),
        since: one(flags, 'since'),
        until: one(flags, 'until'),
        ...pageFlags(flags),
      });
      const page = await s.admin.audit.list(actor, platformId, query);
      return { items: page.items.map(presentAuditEvent), next_cursor: page.nextCursor };
    },
  },
];
