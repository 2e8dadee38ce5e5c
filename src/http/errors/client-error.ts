import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { isHostedPagePath, pathOfTarget } from '../surface';
import { errorBody } from './error-handler';

/** What node:http refused, with the status Node itself would answer and our description. */
const REFUSALS: Record<string, { status: number; description: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, description: 'The request line or headers are too large' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, description: 'The chunk extensions of the request body are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, description: 'The request did not arrive in time' },
};
const MALFORMED = { status: 400, description: 'The HTTP request is malformed' };

/** The request target of a request line at the start of what the parser read, if it starts with one. */
const REQUEST_LINE = /^[A-Za-z]+ +(\S+)/;

type ClientError = Error & { code?: string; rawPacket?: Buffer };

/** Renders the hosted pages' error page for a status and an (English) description; errors fall back to JSON. */
export type ErrorPageRenderer = (
  status: number,
  description: string,
  done: (err: Error | null, html?: string) => void,
) => void;

/**
 * node:http's `clientError`: a request it refused before the app ran (a request line or headers
 * over 16 KiB, a malformed request line, a body's broken framing). Node's own answer is a bare
 * status without a body; this one is a complete response in the API's JSON error shape, or the
 * error page when what the parser read starts with a hosted page's request line (docs/decisions.md,
 * "Errors by surface"). Then the connection is closed: the parser cannot resync after an error.
 */
export function clientErrorHandler(renderPage?: ErrorPageRenderer) {
  return (err: ClientError, socket: Duplex): void => {
    // The parser refuses every later chunk too: once answered, those are read and dropped (below).
    if (answered.has(socket)) return;
    // A reset connection hears nothing; a response already under way must not be cut into (as Node does).
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, description } = (err.code && REFUSALS[err.code]) || MALFORMED;
    const json = () =>
      send(socket, status, 'application/json', JSON.stringify(errorBody({ code: 'invalid_request', description })));
    const target = REQUEST_LINE.exec(err.rawPacket?.subarray(0, 8192).toString('latin1') ?? '')?.[1];
    if (!renderPage || target === undefined || !isHostedPagePath(pathOfTarget(target))) return json();
    renderPage(status, description, (renderErr, html) => {
      if (!socket.writable) return socket.destroy();
      if (renderErr || html === undefined) return json();
      send(socket, status, 'text/html', html);
    });
  };
}

const answered = new WeakSet<Duplex>();
/** How long the rest of a refused request is read and dropped before the connection is closed anyway. */
const LINGER_MS = 2_000;

/**
 * A complete response on the socket, then the socket ended (FIN after the response) and closed
 * once the client closes its side. Closing at once while the client is still sending the request
 * (a 40 KB query behind a 431) would reset the connection, and a reset can discard the answer
 * before the client reads it: so what still arrives is read and dropped, for LINGER_MS at most.
 */
function send(socket: Duplex, status: number, type: string, body: string): void {
  answered.add(socket);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('end', () => socket.destroy());
  socket.once('close', () => clearTimeout(linger));
  socket.resume();
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    `Content-Type: ${type}; charset=utf-8`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Referrer-Policy: no-referrer',
    'X-Frame-Options: DENY',
    // The error page: our stylesheet, no script, no form.
    ...(type === 'text/html'
      ? [
          "Content-Security-Policy: default-src 'none'; style-src 'self'; img-src 'self' data: https:; form-action 'none'; frame-ancestors 'none'",
        ]
      : []),
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}
