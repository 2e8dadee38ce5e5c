import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { clientErrorHandler } from '../errors/client-error';

/**
 * METRICS_PORT (DESIGN §13): a second HTTP server that serves GET /metrics and nothing else,
 * without a token, for a scraper on a private network. Not Express: no routes, sessions or
 * limits to share. The caller listens and closes it.
 */
export function createMetricsServer(registry: Registry, logger: Logger): Server {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify({ error: 'not_found', error_description: 'Only GET /metrics is served on this port' }));
      return;
    }
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        logger.error({ err }, 'metrics collection failed');
        res.writeHead(500, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
        res.end(JSON.stringify({ error: 'server_error', error_description: 'The metrics could not be collected' }));
      },
    );
  });
  server.on('clientError', clientErrorHandler()); // JSON, as on the main port (no pages here)
  return server;
}
