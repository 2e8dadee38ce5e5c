import type { Logger } from 'pino';
import type { Services } from '../services';

/**
 * Runs the purge of expired rows every interval, and of audit events older than
 * AUDIT_RETENTION_DAYS; safe on every instance at once (plain DELETEs, SKIP LOCKED).
 */
export function startPurgeJob(s: Services, logger: Logger, intervalSeconds: number) {
  const run = async () => {
    try {
      const removed = { ...(await s.maintenance.purgeExpired()), auditEvents: await s.audit.purge() };
      if (Object.values(removed).some((n) => n > 0)) logger.info({ removed }, 'purged expired rows');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'purge failed; will retry');
    }
  };
  const timer = setInterval(run, intervalSeconds * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer), run };
}
