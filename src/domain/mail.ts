/** Where a mail in the outbox stands: waiting, leased by a worker, delivered, or given up on. */
export const MAIL_STATUSES = ['queued', 'sending', 'sent', 'dead'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];
