import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { OAuthError } from '../../errors';
import { clientErrorHandler } from '../errors/client-error';
import { errorBody } from '../errors/error-handler';

/**
 * METRICS_PORT: a second HTTP server that serves GET /metrics and nothing else,
 * without a token, for a scraper on a private network. Not Express: no routes, sessions or
 * limits to share. The caller listens and closes it.
 */
export function createMetricsServer(registry: Registry, logger: Logger): Server {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      answerJsonError(res, new OAuthError('not_found', 'Only GET /metrics is served on this port'));
      return;
    }
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        logger.error({ err }, 'metrics collection failed');
        answerJsonError(res, new OAuthError('server_error', 'The metrics could not be collected'));
      },
    );
  });
  server.on('clientError', clientErrorHandler()); // JSON, as on the main port (no pages here)
  return server;
}

/** The app's JSON error on a bare node:http response (no Express here). */
function answerJsonError(res: ServerResponse, error: OAuthError): void {
  res.writeHead(error.status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(errorBody(error)));
}
