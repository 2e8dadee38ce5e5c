import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server on its own origin (its own port on 127.0.0.1) that records the URLs that reach it: an app elsewhere. */
export async function recordingServer() {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('received');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { base, seen, close };
}

export type RecordingServer = Awaited<ReturnType<typeof recordingServer>>;
