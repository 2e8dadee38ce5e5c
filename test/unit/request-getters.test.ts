import express from 'express';
import request from 'supertest';
import { memoizeRequestGetters } from '../../src/http/middleware/request-getters';

// req.query and req.ip are worked out once, but a rewritten URL (the issuer path adds
// platform_guid) is read afresh.
describe('memoized request getters', () => {
  const app = express();
  app.set('query parser', 'simple');
  app.set('trust proxy', 'loopback');
  app.use(memoizeRequestGetters);
  app.use((req, _res, next) => {
    const before = { ...(req.query as Record<string, string>) };
    if (req.path === '/rewrite') req.url = `/seen?${new URLSearchParams({ ...before, added: 'yes' })}`;
    (req as unknown as { before: unknown }).before = before;
    next();
  });
  app.get(['/seen', '/plain'], (req, res) => {
    res.json({
      before: (req as unknown as { before: unknown }).before,
      query: req.query,
      again: req.query === req.query,
      ip: req.ip,
    });
  });

  it('keeps the query while the URL is the same, and reads a rewritten one afresh', async () => {
    const plain = await request(app).get('/plain?a=1').expect(200);
    expect(plain.body).toEqual({ before: { a: '1' }, query: { a: '1' }, again: true, ip: '127.0.0.1' });
    const rewritten = await request(app).get('/rewrite?a=1').expect(200);
    expect(rewritten.body.before).toEqual({ a: '1' });
    expect(rewritten.body.query).toEqual({ a: '1', added: 'yes' });
  });

  it('answers req.ip as Express does, X-Forwarded-For counted as far as trust proxy says', async () => {
    const res = await request(app).get('/plain').set('X-Forwarded-For', '203.0.113.7').expect(200);
    expect(res.body.ip).toBe('203.0.113.7');
  });
});
