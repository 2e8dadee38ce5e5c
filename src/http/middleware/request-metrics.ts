import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler, Response } from 'express';
import type { Metrics } from '../../services/metrics';

const STARTED = Symbol('metricsStartedAt');
type Timed = Response & { [STARTED]?: number };

/**
 * The route label is the pattern of the route that answered (`/oauth/token`,
 * `/interaction/:uid/...`), never the URL: a URL label would let any caller mint series without
 * bound. Nothing matched (static files, 404s, limits and parsers before any route): `unmatched`.
 */
function routeOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : 'unmatched';
}

/**
 * One histogram observation per finished request. Hot path: no closure per request,
 * the start time rides on the response and one shared listener reads it.
 */
export function requestMetrics(metrics: Metrics): RequestHandler {
  const histogram = metrics.httpRequestSeconds;
  function finished(this: Timed) {
    const started = this[STARTED];
    if (started === undefined) return;
    const req = this.req;
    histogram.observe(
      { method: req.method, route: routeOf(req), status: String(this.statusCode) },
      (performance.now() - started) / 1000,
    );
  }
  return (_req, res, next) => {
    (res as Timed)[STARTED] = performance.now();
    res.on('finish', finished);
    next();
  };
}
