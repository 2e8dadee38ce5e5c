import type { Services } from '../services';
import type { BackchannelDeliveryOptions } from '../services/backchannel-logout.service';

export interface BackchannelLogoutJobOptions extends Partial<BackchannelDeliveryOptions> {
  /** How often the queue is looked at when nothing woke the worker (other instances' sign-outs, retries). */
  pollIntervalMs?: number;
}

export interface BackchannelLogoutJob {
  /** Runs a round now (or right after the current one). */
  wake(): void;
  /** Stops polling and waits for the deliveries being sent to be recorded. */
  stop(): Promise<void>;
}

/**
 * The back-channel logout worker of one instance (DESIGN §16), run as the mail outbox's is: a
 * round at start (sign-outs committed before a crash), after each sign-out this process enqueues,
 * and every poll interval; a full batch is followed at once by another round. Safe on every
 * instance at once (claims SKIP LOCKED).
 */
export function startBackchannelLogoutJob(s: Services, options: BackchannelLogoutJobOptions = {}): BackchannelLogoutJob {
  const { pollIntervalMs = 5000, ...delivery } = options;
  const batchSize = delivery.batchSize ?? 10;
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
        const round = await s.backchannelLogout.deliverDue({ ...delivery, batchSize });
        if (round.claimed === batchSize) again = true;
      } catch (err) {
        s.deps.logger.warn({ err: (err as Error).message }, 'back-channel logout round failed; will retry');
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

  const unsubscribe = s.backchannelLogout.onEnqueued(wake);
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
