import { Router } from 'express';

/**
 * /healthz: the process answers. /readyz: the database answers a real query on a real table
 * within 2 s (DESIGN §13; services/maintenance.service.ts databaseReady).
 */
export function healthRouter(databaseReady: (timeoutMs: number) => Promise<void>): Router {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
    res.set('Cache-Control', 'no-store');
    try {
      await databaseReady(2000);
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ error: 'temporarily_unavailable', error_description: 'The database is not reachable' });
    }
  });
  return r;
}
