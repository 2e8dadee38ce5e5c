import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

interface Cached { body: string; etag: string }
const bodies = new Map<string, Cached>();

/**
 * Sends a JSON body that depends only on `cacheKey`, serialised once per key, with a strong
 * ETag and an hour of caching (the spec advises clients to cache discovery and JWKS for 1 h).
 */
export function sendCacheableJson(req: Request, res: Response, cacheKey: string, build: () => unknown): void {
  let cached = bodies.get(cacheKey);
  if (!cached) {
    const body = JSON.stringify(build());
    cached = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    if (bodies.size > 20_000) bodies.clear();
    bodies.set(cacheKey, cached);
  }
  res.set({ 'Cache-Control': 'public, max-age=3600', ETag: cached.etag, 'Content-Type': 'application/json; charset=utf-8' });
  if (req.headers['if-none-match'] === cached.etag) {
    res.status(304).end();
    return;
  }
  res.send(cached.body);
}
