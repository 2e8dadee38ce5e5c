import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import pinoHttp from 'pino-http';
import type { Logger } from 'pino';

/** Keeps a sane incoming X-Request-Id (from a proxy), else makes one; echoed in the response. */
function genRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && /^[A-Za-z0-9._-]{1,128}$/.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/**
 * One access-log line per request (path only: query strings and headers may carry codes,
 * hints or credentials). Below `info` no line would be written, so only the request id is set.
 */
export function requestLogging(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled('info')) {
    return (req, res, next) => {
      req.id = genRequestId(req, res);
      next();
    };
  }
  return pinoHttp({
    logger,
    genReqId: genRequestId,
    serializers: {
      req: (req) => ({ id: req.id, method: req.method, path: String(req.url).split('?')[0] }),
      res: (res) => ({ statusCode: res.statusCode }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
  });
}
