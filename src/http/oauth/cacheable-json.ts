import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

interface Cached {
  body: Buffer;
  etag: string;
  headers: Record<string, string | number>;
}
const bodies = new Map<string, Cached>();

/**
 * Sends a JSON body that depends only on `cacheKey`, serialised once per key, with a strong
 * ETag and an hour of caching (the spec advises clients to cache discovery and JWKS for 1 h).
 * Written straight to the socket: the body and its headers never change, so none of
 * res.send's per-call work (type, length, freshness) is needed.
 */
export function sendCacheableJson(req: Request, res: Response, cacheKey: string, build: () => unknown): void {
  let cached = bodies.get(cacheKey);
  if (!cached) {
    const body = Buffer.from(JSON.stringify(build()));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    cached = {
      body,
      etag,
      headers: {
        'Cache-Control': 'public, max-age=3600',
        ETag: etag,
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': body.length,
      },
    };
    if (bodies.size > 20_000) bodies.clear();
    bodies.set(cacheKey, cached);
  }
  if (req.headers['if-none-match'] === cached.etag) {
    res.writeHead(304, { 'Cache-Control': 'public, max-age=3600', ETag: cached.etag }).end();
    return;
  }
  res.writeHead(200, cached.headers).end(cached.body);
}
