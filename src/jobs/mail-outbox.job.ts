import type { Logger } from 'pino';
import type { Services } from '../services';
import { DEFAULT_DELIVERY, type DeliveryOptions } from '../services/mail-outbox.service';
import { startOutboxWorker, type OutboxWorker } from './outbox-worker';

export interface MailOutboxJobOptions extends Partial<DeliveryOptions> {
  /** How often the outbox is looked at when nothing woke the worker (mails of other instances, retries). */
  pollIntervalMs?: number;
}

export type MailOutboxJob = OutboxWorker;

/** The mail outbox worker of one instance. */
export function startMailOutboxJob(s: Services, logger: Logger, options: MailOutboxJobOptions = {}): MailOutboxJob {
  const { pollIntervalMs = 5000, ...rest } = options;
  const delivery: DeliveryOptions = { ...DEFAULT_DELIVERY, ...rest };
  return startOutboxWorker({
    deliverDue: () => s.mailOutbox.deliverDue(delivery),
    batchSize: delivery.batchSize,
    onEnqueued: (wake) => s.mailOutbox.onEnqueued(wake),
    pollIntervalMs,
    logger,
    name: 'mail outbox',
  });
}
