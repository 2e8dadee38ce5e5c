import { Router } from 'express';
import type { Registry } from 'prom-client';
import { requireMetricsToken } from '../middleware/metrics-token';

/**
 * GET /metrics on the main port, only when METRICS_TOKEN is set: the series tell
 * an outsider how busy the provider is and how often sign-ins fail, so they are not public.
 */
export function metricsRouter(registry: Registry, token: string): Router {
  const r = Router();
  r.get('/metrics', requireMetricsToken(token), async (_req, res) => {
    const body = await registry.metrics();
    res.set('Cache-Control', 'no-store').type(registry.contentType).send(body);
  });
  return r;
}
