import type { MailOutboxRow } from '../repositories/mail-outbox.repository';

/** An outbox row as operators read it (admin CLI, later the admin API): never the body. */
export const presentMail = (m: MailOutboxRow) => ({
  id: m.id,
  platform_guid: m.platformId,
  kind: m.kind,
  to: m.recipient,
  subject: m.subject,
  status: m.status,
  attempts: m.attempts,
  // queued: the next try; sending: when the claim's lease ends.
  next_attempt_at: m.status === 'queued' || m.status === 'sending' ? m.nextAttemptAt.toISOString() : null,
  last_error: m.lastError,
  created_at: m.createdAt.toISOString(),
  sent_at: m.sentAt?.toISOString() ?? null,
});
