import { invalidRequest } from '../../errors';
import { MAIL_STATUSES, type MailStatus } from '../../domain/mail';
import { parseInput } from '../../services/admin/parse-input';
import { ThrottleClearQuery, ThrottleQuery } from '../../wire/admin/throttles.schemas';
import { presentMail } from '../../presenters/mail.presenter';
import { presentThrottle } from '../../presenters/admin/throttle.presenter';
import type { CliCommand } from '../command-table';
import { one, switchFlag } from '../flags';

/** Throttles, the mail outbox (over the admin services: scoped like the API, changes audited) and MASTER_KEY rotation. */
export const operationsCommands: CliCommand[] = [
  {
    group: 'throttle',
    verb: 'list',
    usage: '[--platform G] [--email E] [--source IP] [--locked]',
    flags: ['platform', 'email', 'source', 'locked'],
    summary: 'Sign-in and sign-up throttles: failures, locks, time left.',
    details: ["Without --platform: every platform's. Emails are shown only as their SHA-256."],
    async run(s, flags, actor) {
      const query = parseInput(ThrottleQuery, { email: one(flags, 'email'), source: one(flags, 'source') });
      const entries = await s.admin.throttles.list(actor, one(flags, 'platform') ?? null, {
        ...query,
        lockedOnly: switchFlag(flags, 'locked'),
      });
      return { throttles: entries.map(presentThrottle) };
    },
  },
  {
    group: 'throttle',
    verb: 'clear',
    usage: '--platform G (--email E | --source IP | --all)',
    flags: ['platform', 'email', 'source', 'all'],
    summary: 'Unlock: clear the throttles of an email, a source address, or the whole platform (audited).',
    async run(s, flags, actor) {
      const platformId = one(flags, 'platform', true);
      const raw = {
        email: one(flags, 'email'),
        source: one(flags, 'source'),
        all: switchFlag(flags, 'all') ? 'true' : undefined,
      };
      if (!raw.email && !raw.source && !raw.all)
        throw invalidRequest('throttle clear needs --email, --source or --all');
      const query = parseInput(ThrottleClearQuery, raw);
      return {
        platform_guid: platformId,
        cleared: await s.admin.throttles.clear(actor, platformId, { email: query.email, source: query.source }),
      };
    },
  },
  {
    group: 'mail',
    verb: 'list',
    usage: '[--status queued|sending|sent|dead] [--platform G] [--limit N] [--cursor C]',
    flags: ['status', 'platform', 'limit', 'cursor'],
    summary: 'The mail outbox: counts per status and the newest mails (never their bodies); next_cursor continues.',
    async run(s, flags, actor) {
      const status = one(flags, 'status');
      if (status !== undefined && !MAIL_STATUSES.includes(status as MailStatus))
        throw invalidRequest(`--status must be one of ${MAIL_STATUSES.join(', ')}`);
      const limit = Number(one(flags, 'limit') ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw invalidRequest('--limit must be an integer from 1 to 1000');
      const page = await s.admin.mail.listPage(actor, one(flags, 'platform') ?? null, {
        status: status as MailStatus | undefined,
        limit,
        cursor: one(flags, 'cursor'),
      });
      return { counts: page.counts, mails: page.items.map(presentMail), next_cursor: page.nextCursor };
    },
  },
  {
    group: 'mail',
    verb: 'retry',
    usage: '(--id ID | --all-dead [--platform G])',
    flags: ['id', 'all-dead', 'platform'],
    summary: 'Queue a dead mail (or all of them) again (audited).',
    async run(s, flags, actor) {
      const id = one(flags, 'id');
      const allDead = switchFlag(flags, 'all-dead');
      if (Boolean(id) === allDead) throw invalidRequest('mail retry needs --id ID or --all-dead');
      const rows = await s.admin.mail.requeue(actor, one(flags, 'platform') ?? null, id ? { id } : { allDead: true });
      return { requeued: rows.length, mails: rows.map(presentMail) };
    },
  },
  {
    group: 'master-key',
    verb: 'reseal',
    usage: '',
    flags: [],
    summary: 'Reseal every secret under MASTER_KEY (MASTER_KEY_PREVIOUS opens the old ones).',
    run: async (s) => ({ resealed: await s.masterKey.resealAll() }),
  },
];
