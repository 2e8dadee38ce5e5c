import { Router } from 'express';
import type { Db } from '../../db';

/**
 * /healthz: the process answers. /readyz: the database answers a real query on a real table
 * (DESIGN §13) — `select 1` alone passed while the app could not see its tables.
 */
export function healthRouter(db: Db): Router {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
    res.set('Cache-Control', 'no-store');
    try {
      await withTimeout(db.raw('select 1 from platforms limit 1'), 2000);
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ error: 'temporarily_unavailable', error_description: 'The database is not reachable' });
    }
  });
  return r;
}

function withTimeout<T>(p: PromiseLike<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    Promise.resolve(p).then(
      (v) => { clearTimeout(timer); resolve(v); },
      (e) => { clearTimeout(timer); reject(e); },
    );
  });
}
