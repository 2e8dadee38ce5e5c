import { invalidRequest } from '../../errors';
import type { ThrottleEntry } from '../../services/attempt-throttle.service';
import { MAIL_STATUSES, type MailStatus } from '../../repositories/mail-outbox.repository';
import { presentMail } from '../../presenters/mail.presenter';
import type { CliCommand } from '../command-table';
import { one, switchFlag } from '../flags';

/** Sign-in and sign-up throttle keys as operators read them (snake_case, seconds). */
const presentThrottle = (e: ThrottleEntry) => ({
  kind: e.kind,
  platform_guid: e.platformId,
  email_sha256: e.emailSha256,
  source: e.source,
  failures: e.failures,
  locks: e.locks,
  locked_until: e.lockedUntil?.toISOString() ?? null,
  locked_seconds: e.lockedSeconds,
});

/** Throttles, the mail outbox and MASTER_KEY rotation. */
export const operationsCommands: CliCommand[] = [
  {
    group: 'throttle', verb: 'list', usage: '[--platform G] [--email E] [--source IP] [--locked]', flags: ['platform', 'email', 'source', 'locked'],
    summary: 'Sign-in and sign-up throttles: failures, locks, time left.',
    async run(s, flags) {
      const filter = { platformId: one(flags, 'platform'), email: one(flags, 'email'), source: one(flags, 'source') };
      if (filter.platformId !== undefined) await s.platforms.requirePlatform(filter.platformId);
      const entries = await s.throttle.listThrottles({ ...filter, lockedOnly: switchFlag(flags, 'locked') });
      return { throttles: entries.map(presentThrottle) };
    },
  },
  {
    group: 'throttle', verb: 'clear', usage: '--platform G (--email E | --source IP | --all)', flags: ['platform', 'email', 'source', 'all'],
    summary: 'Unlock: clear the throttles of an email, a source address, or the whole platform.',
    async run(s, flags) {
      const filter = { platformId: one(flags, 'platform', true), email: one(flags, 'email'), source: one(flags, 'source') };
      await s.platforms.requirePlatform(filter.platformId);
      if (!filter.email && !filter.source && !switchFlag(flags, 'all')) throw invalidRequest('throttle clear needs --email, --source or --all');
      return { platform_guid: filter.platformId, cleared: await s.throttle.clearThrottles(filter) };
    },
  },
  {
    group: 'mail', verb: 'list', usage: '[--status queued|sending|sent|dead] [--platform G] [--limit N]', flags: ['status', 'platform', 'limit'],
    summary: 'The mail outbox: counts per status and the newest mails (never their bodies).',
    async run(s, flags) {
      const status = one(flags, 'status');
      if (status !== undefined && !MAIL_STATUSES.includes(status as MailStatus)) throw invalidRequest(`--status must be one of ${MAIL_STATUSES.join(', ')}`);
      const platformId = one(flags, 'platform');
      if (platformId !== undefined) await s.platforms.requirePlatform(platformId);
      const limit = Number(one(flags, 'limit') ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidRequest('--limit must be an integer from 1 to 1000');
      const { mails, counts } = await s.mailOutbox.list({ status: status as MailStatus | undefined, platformId }, limit);
      return { counts, mails: mails.map(presentMail) };
    },
  },
  {
    group: 'mail', verb: 'retry', usage: '(--id ID | --all-dead [--platform G])', flags: ['id', 'all-dead', 'platform'],
    summary: 'Queue a dead mail (or all of them) again.',
    async run(s, flags) {
      const id = one(flags, 'id');
      const allDead = switchFlag(flags, 'all-dead');
      const platformId = one(flags, 'platform');
      if (Boolean(id) === allDead) throw invalidRequest('mail retry needs --id ID or --all-dead');
      if (platformId !== undefined) await s.platforms.requirePlatform(platformId);
      const rows = await s.mailOutbox.retry(id ? { id } : { allDead: true, platformId });
      return { requeued: rows.length, mails: rows.map(presentMail) };
    },
  },
  {
    group: 'master-key', verb: 'reseal', usage: '', flags: [],
    summary: 'Reseal every secret under MASTER_KEY (MASTER_KEY_PREVIOUS opens the old ones).',
    run: async (s) => ({ resealed: await s.masterKey.resealAll() }),
  },
];
