import type { RequestHandler } from 'express';
import type { Services } from '../../services';

export type RateLimitFactory = (endpoint: string) => RequestHandler;

/** Per-endpoint limiter factory (spec Limits; DESIGN §8). */
export function createRateLimits(_s: Services): RateLimitFactory {
  return () => (_req, _res, next) => next();
}
