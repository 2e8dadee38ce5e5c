import express from 'express';
import request from 'supertest';
import { cacheableJson } from '../../src/http/oauth/cacheable-json';

// The discovery and JWKS bodies: serialised once per key, at most maxEntries kept, the least
// recently sent dropped first, so one more platform than the bound costs one rebuild, not all.
describe('cacheableJson', () => {
  function appWith(maxEntries: number) {
    const builds: string[] = [];
    const send = cacheableJson(maxEntries);
    const app = express();
    app.get('/:key', (req, res) =>
      send(req, res, String(req.params.key), () => {
        builds.push(String(req.params.key));
        return { key: req.params.key };
      }),
    );
    return { app, builds };
  }

  it('builds a body once per key and answers a matching If-None-Match with 304', async () => {
    const { app, builds } = appWith(10);
    const first = await request(app).get('/a').expect(200);
    expect(first.body).toEqual({ key: 'a' });
    expect(first.headers['cache-control']).toBe('public, max-age=3600');
    await request(app).get('/a').expect(200);
    await request(app).get('/a').set('If-None-Match', first.headers.etag).expect(304);
    expect(builds).toEqual(['a']);
  });

  it('past maxEntries drops only the least recently sent body', async () => {
    const { app, builds } = appWith(2);
    for (const key of ['a', 'b', 'a', 'c', 'a', 'b']) await request(app).get(`/${key}`).expect(200);
    // c pushed out b (a was sent more recently); b's return pushed out c; a stayed throughout.
    expect(builds).toEqual(['a', 'b', 'c', 'b']);
  });
});
