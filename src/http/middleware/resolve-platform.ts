import type { RequestHandler } from 'express';
import { invalidRequest } from '../../errors';
import type { Services } from '../../services';

/**
 * Finds the platform of the request: query for GET, body or query for POST; both present and
 * different → invalid_request. Platforms are cached by services.platforms.
 */
export function resolvePlatform(s: Services, options: { optional?: boolean } = {}): RequestHandler {
  return async (req, res, next) => {
    const fromQuery = req.query?.platform_guid;
    const fromBody =
      req.method === 'POST' ? (req.body as Record<string, unknown> | undefined)?.platform_guid : undefined;
    if (Array.isArray(fromQuery) || Array.isArray(fromBody))
      throw invalidRequest('parameter "platform_guid" must not be repeated');
    if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
      throw invalidRequest('platform_guid in the query and the body differ');
    }
    const guid = fromBody ?? fromQuery;
    if (guid === undefined && options.optional) return next();
    if (typeof guid !== 'string' || guid === '') throw invalidRequest('missing required parameter "platform_guid"');
    res.locals.platform = await s.platforms.requirePlatform(guid); // cached in the service (the one platform cache)
    next();
  };
}
