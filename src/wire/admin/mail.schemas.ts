import { z } from 'zod';
import { MAIL_STATUSES } from '../../domain/mail';
import { pageOf, PageQuery, PlatformParams, Timestamp, Uuid } from './common.schemas';

const MailStatus = z.enum(MAIL_STATUSES);

export const Mail = z
  .object({
    id: Uuid,
    platform_guid: Uuid.nullable(),
    kind: z.string().meta({ description: 'What it is: verify_email, reset_password, …' }),
    to: z.string(),
    subject: z.string(),
    status: MailStatus.meta({
      description: 'queued (waiting for a try), sending (claimed by a worker), sent, dead (given up: retry it)',
    }),
    attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable().meta({ description: 'queued: the next try; sending: when the claim lapses' }),
    last_error: z.string().nullable(),
    created_at: Timestamp,
    sent_at: Timestamp.nullable(),
  })
  .meta({ id: 'Mail', description: 'An outbox mail: never its body' });

export const MailCounts = z
  .object({ queued: z.number().int(), sending: z.number().int(), sent: z.number().int(), dead: z.number().int() })
  .meta({ id: 'MailCounts', description: 'Mails per status (of the platform, or of every platform)' });

export const MailPage = pageOf(Mail, 'MailPage').extend({ counts: MailCounts }).meta({ id: 'MailPage' });

export const MailQuery = PageQuery.extend({
  status: MailStatus.optional().meta({ description: 'Only mails in this status' }),
}).strict();

export const MailAllQuery = MailQuery.extend({
  platform_guid: Uuid.optional().meta({ description: "Only this platform's mails" }),
}).strict();

export const MailParams = PlatformParams.extend({ mail_id: Uuid.meta({ description: 'The mail' }) });

export const MailRetried = z
  .object({
    requeued: z.number().int(),
    mails: z.array(Mail).meta({ description: 'The mails queued again (up to 200 listed)' }),
  })
  .meta({ id: 'MailRetried' });
