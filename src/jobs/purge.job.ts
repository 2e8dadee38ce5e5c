import type { Services } from '../services';

/** Runs the purge of expired rows every interval; safe on every instance at once (plain DELETEs). */
export function startPurgeJob(s: Services, intervalSeconds: number) {
  const run = async () => {
    try {
      const removed = await s.maintenance.purgeExpired();
      if (Object.values(removed).some((n) => n > 0)) s.deps.logger.info({ removed }, 'purged expired rows');
    } catch (err) {
      s.deps.logger.warn({ err: (err as Error).message }, 'purge failed; will retry');
    }
  };
  const timer = setInterval(run, intervalSeconds * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer), run };
}
