import type { RequestHandler } from 'express';
import { safeEqual } from '../../crypto/digest';
import { invalidToken } from '../../errors';

/** RFC 6750 §2.1 bearer, compared in constant time; anything else is 401 in the spec's error shape. */
export function requireMetricsToken(token: string): RequestHandler {
  return (req, _res, next) => {
    const match = /^Bearer (\S+)$/.exec(req.get('authorization')?.trim() ?? '');
    if (!match || !safeEqual(match[1], token))
      throw invalidToken('GET /metrics needs "Authorization: Bearer <METRICS_TOKEN>"');
    next();
  };
}
