import { Router } from 'express';
import { OAuthError } from '../../errors';
import { sendError } from '../errors/error-handler';

/**
 * /healthz: the process answers, and says which release it is. /readyz: the process is not
 * shutting down and the database answers a real query on a real table within 2 s
 * (services/maintenance.service.ts databaseReady).
 */
export function healthRouter(
  version: string,
  databaseReady: (timeoutMs: number) => Promise<void>,
  isDraining: () => boolean = () => false,
): Router {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok', version });
  });
  r.get('/readyz', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    // Turned at once, so a load balancer stops sending here while in-flight requests finish.
    if (isDraining())
      throw new OAuthError('temporarily_unavailable', 'The server is shutting down', {
        headers: { 'Retry-After': '5' },
      });
    try {
      await databaseReady(2000);
      res.json({ status: 'ready' });
    } catch {
      // Answered, not thrown: a probe failing every few seconds is not an error log line each time.
      sendError(req, res, new OAuthError('temporarily_unavailable', 'The database is not reachable'));
    }
  });
  return r;
}
