import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { BoundedLru } from '../../services/bounded-lru';

interface Cached {
  body: Buffer;
  etag: string;
  headers: Record<string, string | number>;
}

/** What an entry costs beside its body: the key, the headers object, the cache's node. */
const ENTRY_OVERHEAD_BYTES = 512;

/**
 * Sends JSON bodies that depend only on a cache key (a platform's discovery document or JWKS),
 * each serialised once, with a strong ETag and an hour of caching (the spec advises clients to
 * cache discovery and JWKS for 1 h). Written straight to the socket: the body and its headers
 * never change, so none of res.send's per-call work (type, length, freshness) is needed. At most
 * `maxEntries` bodies, the least recently sent dropped first, so traffic over more platforms than
 * that costs a rebuild per miss, not the whole cache.
 */
export function cacheableJson(maxEntries: number) {
  const bodies = new BoundedLru<string, Cached>({
    maxEntries,
    maxBytes: maxEntries * 8 * 1024,
    sizeOf: (entry, key) => entry.body.length + key.length + ENTRY_OVERHEAD_BYTES,
  });
  return (req: Request, res: Response, cacheKey: string, build: () => unknown): void => {
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
      bodies.set(cacheKey, cached);
    }
    if (req.headers['if-none-match'] === cached.etag) {
      res.writeHead(304, { 'Cache-Control': 'public, max-age=3600', ETag: cached.etag }).end();
      return;
    }
    res.writeHead(200, cached.headers).end(cached.body);
  };
}
