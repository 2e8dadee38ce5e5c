import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface DrainResult {
  /** Every request was answered and every connection closed before the grace ran out. */
  drained: boolean;
  /** Requests in flight and connections open when draining began. */
  waitedFor: { requests: number; connections: number };
  /** What the end of the grace cut (both 0 when drained). */
  cut: { requests: number; connections: number };
  ms: number;
}

/**
 * Graceful shutdown of one HTTP server (docs/decisions.md, "Graceful shutdown"): it counts the
 * requests in flight and the open connections, and `drain` stops listening (new connections are
 * refused), answers every later response with `Connection: close` (so a keep-alive client stops
 * sending on that connection and Node closes it after the answer), closes idle connections as
 * they become idle, and resolves once the last request is answered, or when the grace runs out,
 * closing what is left.
 */
export function trackServer(server: Server) {
  const inFlight = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let draining = false;

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // Before the app's own listener: the flag must be set before a response's headers are written.
  server.prependListener('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    if (draining) res.shouldKeepAlive = false;
  });

  return {
    isDraining: () => draining,
    drain(graceMs: number): Promise<DrainResult> {
      draining = true;
      const started = Date.now();
      const waitedFor = { requests: inFlight.size, connections: sockets.size };
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      return new Promise((resolve) => {
        let sweep: NodeJS.Timeout | undefined;
        let finished = false;
        const finish = (drained: boolean) => {
          if (finished) return;
          finished = true;
          clearInterval(sweep);
          clearTimeout(grace);
          const cut = drained
            ? { requests: 0, connections: 0 }
            : { requests: inFlight.size, connections: sockets.size };
          if (!drained) server.closeAllConnections();
          resolve({ drained, waitedFor, cut, ms: Date.now() - started });
        };
        const grace = setTimeout(() => finish(false), graceMs);
        // One turn of the event loop first: a request whose bytes had arrived with the signal is
        // read and in flight by then, not dropped with its "idle" connection. Then close closes
        // the idle connections; those that go idle later (their response had gone out before
        // draining began, so it did not say close) are swept as they appear.
        setImmediate(() => {
          server.close(() => finish(true));
          sweep = setInterval(() => server.closeIdleConnections(), 50);
        });
      });
    },
  };
}

export type TrackedServer = ReturnType<typeof trackServer>;
