import type { Services } from '../services';
import { DEFAULT_DELIVERY, type DeliveryOptions } from '../services/mail-outbox.service';

export interface MailOutboxJobOptions extends Partial<DeliveryOptions> {
  /** How often the outbox is looked at when nothing woke the worker (mails of other instances, retries). */
  pollIntervalMs?: number;
}

export interface MailOutboxJob {
  /** Runs a round now (or right after the current one). */
  wake(): void;
  /** Stops polling and waits for the mails being sent to be recorded. */
  stop(): Promise<void>;
}

/**
 * The outbox worker of one instance (DESIGN §13). Runs a round at start (mails committed before a
 * crash), after each mail this process enqueues, and every poll interval; a full batch is
 * followed at once by another round. Safe on every instance at once (claims SKIP LOCKED).
 */
export function startMailOutboxJob(s: Services, options: MailOutboxJobOptions = {}): MailOutboxJob {
  const { pollIntervalMs = 5000, ...rest } = options;
  const delivery: DeliveryOptions = { ...DEFAULT_DELIVERY, ...rest };
  let stopped = false;
  let again = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(wake, pollIntervalMs).unref();
  };

  async function rounds() {
    do {
      again = false;
      try {
        const round = await s.mailOutbox.deliverDue(delivery);
        if (round.claimed === delivery.batchSize) again = true;
      } catch (err) {
        s.deps.logger.warn({ err: (err as Error).message }, 'mail outbox round failed; will retry');
      }
    } while (again && !stopped);
  }

  function wake() {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = rounds().finally(() => {
      running = undefined;
      if (again && !stopped) wake(); // woken after the last round looked
      else schedule();
    });
  }

  const unsubscribe = s.mailOutbox.onEnqueued(wake);
  wake();
  return {
    wake,
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      await running;
    },
  };
}
