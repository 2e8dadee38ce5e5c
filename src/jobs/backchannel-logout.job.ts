import type { Logger } from 'pino';
import type { Services } from '../services';
import type { BackchannelDeliveryOptions } from '../services/backchannel-logout.service';
import { startOutboxWorker, type OutboxWorker } from './outbox-worker';

export interface BackchannelLogoutJobOptions extends Partial<BackchannelDeliveryOptions> {
  /** How often the queue is looked at when nothing woke the worker (other instances' sign-outs, retries). */
  pollIntervalMs?: number;
}

export type BackchannelLogoutJob = OutboxWorker;

/** The back-channel logout worker of one instance, run as the mail outbox's is. */
export function startBackchannelLogoutJob(
  s: Services,
  logger: Logger,
  options: BackchannelLogoutJobOptions = {},
): BackchannelLogoutJob {
  const { pollIntervalMs = 5000, ...delivery } = options;
  const batchSize = delivery.batchSize ?? 10;
  return startOutboxWorker({
    deliverDue: () => s.backchannelLogout.deliverDue({ ...delivery, batchSize }),
    batchSize,
    onEnqueued: (wake) => s.backchannelLogout.onEnqueued(wake),
    pollIntervalMs,
    logger,
    name: 'back-channel logout',
  });
}
