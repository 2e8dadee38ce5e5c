import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { buildTestApp, expectOAuthError } from '../helpers';

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

describe('errors and health', () => {
  it('answers unknown /oauth routes with a JSON 404 in the spec format', async () => {
    const res = await request(t.app).get('/oauth/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', error_description: expect.any(String) });
    const post = await request(t.app).post('/oauth/unknown').type('form').send('a=1');
    expect(post.status).toBe(404);
    expect(post.body.error).toBe('not_found');
  });

  it('answers a malformed form body with invalid_request, not a 5xx', async () => {
    const res = await request(t.app)
      .post('/oauth/jwks')
      .set('Content-Type', 'application/x-www-form-urlencoded; charset=klingon')
      .send('platform_guid=x');
    expect(res.status).toBeLessThan(500);
    expect(res.body.error).toBeDefined();
  });

  it('reports health, with the release of package.json, and readiness', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    await request(t.app).get('/healthz').expect(200, { status: 'ok', version });
    await request(t.app).get('/readyz').expect(200, { status: 'ready' });
  });

  it('fails /readyz with 503 when the database is unreachable', async () => {
    const down = await buildTestApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    try {
      const res = await request(down.app).get('/readyz');
      expectOAuthError(res, 503, 'temporarily_unavailable');
      await request(down.app).get('/healthz').expect(200);
      const discovery = await request(down.app).get(
        '/.well-known/openid-configuration?platform_guid=00000000-0000-4000-8000-000000000000',
      );
      expectOAuthError(discovery, 503, 'temporarily_unavailable');
    } finally {
      await down.close();
    }
  });
});
