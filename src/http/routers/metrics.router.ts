import { Router, type Request } from 'express';
import type { Registry } from 'prom-client';
import { safeEqual } from '../../crypto/digest';
import { invalidToken } from '../../errors';

/** RFC 6750 §2.1 bearer, compared in constant time; anything else is 401 in the spec's error shape. */
function requireMetricsToken(req: Request, token: string) {
  const match = /^Bearer (\S+)$/.exec(req.get('authorization')?.trim() ?? '');
  if (!match || !safeEqual(match[1], token)) throw invalidToken('GET /metrics needs "Authorization: Bearer <METRICS_TOKEN>"');
}

/**
 * GET /metrics on the main port (DESIGN §13), only when METRICS_TOKEN is set: the series tell
 * an outsider how busy the provider is and how often sign-ins fail, so they are not public.
 */
export function metricsRouter(registry: Registry, token: string): Router {
  const r = Router();
  r.get('/metrics', async (req, res) => {
    requireMetricsToken(req, token);
    const body = await registry.metrics();
    res.set('Cache-Control', 'no-store').type(registry.contentType).send(body);
  });
  return r;
}
