import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A client's web server on 127.0.0.1 over https, with a self-signed certificate made for the run
 * (`caFile` is its PEM, for OUTBOUND_CA_FILE; `ca` the same text): it serves Client ID Metadata
 * Documents at fresh paths and counts the requests per path.
 */
export async function startDocumentServer() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cimd-'));
  const [key, caFile] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      caFile,
    ],
    { stdio: 'ignore' },
  );
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const ca = readFileSync(caFile, 'utf8');
  const server = https.createServer({ key: readFileSync(key), cert: ca }, (req, res) => {
    const at = req.url ?? '';
    hits.set(at, (hits.get(at) ?? 0) + 1);
    (routes.get(at) ?? ((_q, r) => r.writeHead(404).end()))(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let n = 0;
  return {
    origin,
    caFile,
    ca,
    /** Requests for a path, published or not. */
    fetchesOf: (at: string) => hits.get(at) ?? 0,
    /** A fresh path with its handler, and the client identifier URL naming it. */
    publish(handler: Handler): { url: string; fetches: () => number } {
      const at = `/clients/${++n}/metadata.json`;
      routes.set(at, handler);
      return { url: origin + at, fetches: () => hits.get(at) ?? 0 };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const json =
  (body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
