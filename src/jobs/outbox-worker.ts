import type { Logger } from 'pino';

export interface OutboxWorker {
  /** Runs a round now (or right after the current one). */
  wake(): void;
  /** Stops polling and waits for the items being sent to be recorded. */
  stop(): Promise<void>;
}

export interface OutboxWorkerOptions {
  /** Claims and sends one batch; says how many it claimed. */
  deliverDue: () => Promise<{ claimed: number }>;
  batchSize: number;
  /** Subscribes to "this process enqueued something"; returns the unsubscribe. */
  onEnqueued: (wake: () => void) => () => void;
  /** How often the outbox is looked at when nothing woke the worker (other instances' items, retries). */
  pollIntervalMs: number;
  logger: Logger;
  /** Names the outbox in the log line of a failed round. */
  name: string;
}

/**
 * One instance's worker over a durable outbox: mail and back-channel logout. Runs
 * a round at start (items committed before a crash), after each item this process enqueues, and
 * every poll interval; a full batch is followed at once by another round. Safe on every instance at
 * once: the outbox claims its rows with SKIP LOCKED.
 */
export function startOutboxWorker(o: OutboxWorkerOptions): OutboxWorker {
  let stopped = false;
  let again = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(wake, o.pollIntervalMs).unref();
  };

  async function rounds() {
    do {
      again = false;
      try {
        const round = await o.deliverDue();
        if (round.claimed === o.batchSize) again = true;
      } catch (err) {
        o.logger.warn({ err: (err as Error).message }, `${o.name} round failed; will retry`);
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
      if (again && !stopped)
        wake(); // woken after the last round looked
      else schedule();
    });
  }

  const unsubscribe = o.onEnqueued(wake);
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
