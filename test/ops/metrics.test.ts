import type { AddressInfo } from 'node:net';
import knex from 'knex';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createMetricsServer } from '../../src/http/ops/metrics-server';
import { createMetrics } from '../../src/services/metrics';
import { buildTestApp, expectOAuthError, TEST_ENV } from '../helpers';
import { buildClient, buildPlatform, buildUser } from '../factories';
import { browser } from '../support/browser';
import { authorizeQuery, exchange, refresh, signInThrough } from '../support/account-flows';

const TOKEN = 'a-metrics-token-for-the-tests';
let offsetMs = 0; // moved past REFRESH_REUSE_GRACE_SECONDS for the reuse detection
let t: Awaited<ReturnType<typeof buildTestApp>>;
let bare: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp({ METRICS_TOKEN: TOKEN }, () => new Date(Date.now() + offsetMs));
  bare = await buildTestApp();
});
afterAll(async () => {
  await t.close();
  await bare.close();
});

const scrape = async (app = t) => {
  const res = await request(app.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
  return res.text;
};

/** The value of one series in Prometheus text format; undefined when absent. Labels in any order. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}
const value = (text: string, name: string, labels: Record<string, string> = {}) => sample(text, name, labels) ?? 0;

describe('GET /metrics', () => {
  it('is 404 on the main port when METRICS_TOKEN is unset, whatever the caller sends', async () => {
    const res = await request(bare.app)
      .get('/metrics')
      .set('Accept', 'application/json')
      .set('Authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    // Nobody can scrape it, so Node's process metrics are not even collected.
    expect(bare.services.deps.metrics.registry.getSingleMetric('process_cpu_user_seconds_total')).toBeUndefined();
  });

  it('is 401 invalid_token without the bearer token or with a wrong one', async () => {
    expectOAuthError(await request(t.app).get('/metrics'), 401, 'invalid_token');
    expectOAuthError(
      await request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}x`),
      401,
      'invalid_token',
    );
    expectOAuthError(
      await request(t.app)
        .get('/metrics')
        .set('Authorization', `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`),
      401,
      'invalid_token',
    );
  });

  it('answers Prometheus text with the token: every provider series and the process metrics', async () => {
    const res = await request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    for (const [name, type] of [
      ['latchkey_http_request_duration_seconds', 'histogram'],
      ['latchkey_sign_ins_total', 'counter'],
      ['latchkey_lockouts_total', 'counter'],
      ['latchkey_tokens_issued_total', 'counter'],
      ['latchkey_refresh_token_reuse_detected_total', 'counter'],
      ['latchkey_rate_limit_hits_total', 'counter'],
      ['latchkey_rate_limit_counts_total', 'counter'],
      ['latchkey_rate_limit_flush_duration_seconds', 'histogram'],
      ['latchkey_mail_outbox_mails', 'gauge'],
      ['latchkey_db_pool_connections', 'gauge'],
      ['latchkey_db_pool_waiting_requests', 'gauge'],
      ['latchkey_db_pool_max_connections', 'gauge'],
      ['process_cpu_user_seconds_total', 'counter'],
    ])
      expect(res.text).toContain(`# TYPE ${name} ${type}\n`);
    for (const pool of ['main', 'sessions']) {
      expect(sample(res.text, 'latchkey_db_pool_connections', { pool, state: 'used' })).toBeGreaterThanOrEqual(0);
      expect(sample(res.text, 'latchkey_db_pool_connections', { pool, state: 'idle' })).toBeGreaterThanOrEqual(0);
      expect(sample(res.text, 'latchkey_db_pool_waiting_requests', { pool })).toBeGreaterThanOrEqual(0);
    }
    expect(sample(res.text, 'latchkey_db_pool_max_connections', { pool: 'main' })).toBe(5); // buildTestApp's poolMax
    for (const status of ['queued', 'sending', 'sent', 'dead'])
      expect(sample(res.text, 'latchkey_mail_outbox_mails', { status })).toBeGreaterThanOrEqual(0);
  });

  it('counts a code flow: sign-ins, a failed sign-in, tokens per grant, requests per route, a refresh reuse', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const u = await buildUser(t.services, p.id);
    const before = await scrape();

    const wrong = browser(t.app);
    await wrong.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    expect((await wrong.submit('/signin', { email: u.email, password: 'not the password' })).res.status).toBe(400);
    const tokens = await exchange(t.app, p, c, await signInThrough(browser(t.app), p, c, u.email));
    const rotated = await refresh(t.app, p, c, tokens.refresh_token!);
    expect(rotated.status).toBe(200);
    offsetMs = 11_000; // past the 10 s grace window: presenting the rotated token again is reuse
    try {
      expectOAuthError(await refresh(t.app, p, c, tokens.refresh_token!), 400, 'invalid_grant');
    } finally {
      offsetMs = 0;
    }

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) =>
      value(after, name, labels) - value(before, name, labels);
    expect(moved('latchkey_sign_ins_total', { result: 'success' })).toBe(1);
    expect(moved('latchkey_sign_ins_total', { result: 'failure' })).toBe(1);
    expect(moved('latchkey_tokens_issued_total', { grant: 'authorization_code' })).toBe(1);
    expect(moved('latchkey_tokens_issued_total', { grant: 'refresh_token' })).toBe(1);
    expect(moved('latchkey_refresh_token_reuse_detected_total')).toBe(1);
    const token = { method: 'POST', route: '/oauth/token' };
    expect(moved('latchkey_http_request_duration_seconds_count', { ...token, status: '200' })).toBe(2);
    expect(moved('latchkey_http_request_duration_seconds_count', { ...token, status: '400' })).toBe(1);
    expect(moved('latchkey_http_request_duration_seconds_bucket', { ...token, status: '200', le: '+Inf' })).toBe(2);
    expect(moved('latchkey_http_request_duration_seconds_sum', { ...token, status: '200' })).toBeGreaterThan(0);
    expect(
      moved('latchkey_http_request_duration_seconds_count', { method: 'GET', route: '/oauth/authorize' }),
    ).toBeGreaterThanOrEqual(1);
    // Route patterns, never URLs: no platform or client id ever lands in a label.
    expect(after).not.toContain(p.id);
    expect(after).not.toContain(c.id);
  });

  it('labels a request no route answered "unmatched", never by its URL', async () => {
    const before = await scrape();
    const probe = `/no-such-page-${Date.now()}`;
    await request(t.app).get(probe).set('Accept', 'application/json').expect(404);
    await request(t.app).get(`/oauth${probe}`).expect(404);
    const after = await scrape();
    const labels = { method: 'GET', route: 'unmatched', status: '404' };
    expect(
      value(after, 'latchkey_http_request_duration_seconds_count', labels) -
        value(before, 'latchkey_http_request_duration_seconds_count', labels),
    ).toBe(2);
    expect(after).not.toContain(probe);
  });

  it('counts lockouts and the sign-ins refused while locked', async () => {
    const p = await buildPlatform(t.services);
    const c = await buildClient(t.services, p.id);
    const u = await buildUser(t.services, p.id);
    const before = await scrape();
    const b = browser(t.app);
    await b.get(`/oauth/authorize?${authorizeQuery(p, c)}`);
    for (let i = 0; i < 6; i++) await b.submit('/signin', { email: u.email, password: `wrong password ${i}` }); // the 5th locks, the 6th is refused unchecked
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      value(after, name, labels) - value(before, name, labels);
    expect(moved('latchkey_sign_ins_total', { result: 'failure' })).toBe(5);
    expect(moved('latchkey_lockouts_total', { throttle: 'sign_in' })).toBe(1);
    expect(moved('latchkey_sign_ins_total', { result: 'locked' })).toBe(1);
  });

  it('counts rate-limit hits per limit', async () => {
    const limited = await buildTestApp({ METRICS_TOKEN: TOKEN, RATE_LIMIT_SCALE: '0.01' }); // discovery: 1 a minute
    try {
      const p = await buildPlatform(limited.services);
      const discovery = `/.well-known/openid-configuration?platform_guid=${p.id}`;
      await request(limited.app).get(discovery).expect(200);
      await request(limited.app).get(discovery).expect(429);
      const text = await scrape(limited);
      expect(value(text, 'latchkey_rate_limit_hits_total', { limit: 'discovery' })).toBe(1);
      expect(
        value(text, 'latchkey_http_request_duration_seconds_count', {
          method: 'GET',
          route: '/.well-known/openid-configuration',
          status: '429',
        }),
      ).toBe(1);
    } finally {
      await limited.close();
    }
  });
});

describe('a scrape while the database is away', () => {
  it('still answers, without the mail gauge, and the pool gauges say so', async () => {
    const unreachable = knex({
      client: 'pg',
      connection: 'postgres://nobody@127.0.0.1:1/none',
      pool: { min: 0, max: 3 },
    });
    try {
      const text = await createMetrics({ db: unreachable }).registry.metrics();
      expect(sample(text, 'latchkey_mail_outbox_mails', { status: 'queued' })).toBeUndefined();
      expect(sample(text, 'latchkey_db_pool_max_connections', { pool: 'main' })).toBe(3);
      expect(sample(text, 'latchkey_sign_ins_total', { result: 'success' })).toBe(0);
    } finally {
      await unreachable.destroy();
    }
  });
});

describe('METRICS_PORT', () => {
  it('serves GET /metrics alone, without a token, on its own server', async () => {
    const server = createMetricsServer(t.services.deps.metrics.registry, createLogger('silent'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await res.text()).toContain('# TYPE latchkey_sign_ins_total counter');
      for (const path of ['/', '/oauth/token', '/metricsx', '/.well-known/openid-configuration']) {
        const other = await fetch(`${base}${path}`);
        expect(other.status).toBe(404);
        expect(await other.json()).toMatchObject({ error: 'not_found' });
      }
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is refused on PORT itself, and a METRICS_TOKEN shorter than 16 characters is refused', () => {
    expect(() => loadConfig({ ...TEST_ENV, PORT: '3000', METRICS_PORT: '3000' })).toThrow(
      /METRICS_PORT: must differ from PORT/,
    );
    expect(() => loadConfig({ ...TEST_ENV, METRICS_TOKEN: 'short' })).toThrow(
      /METRICS_TOKEN: must be at least 16 characters/,
    );
    expect(loadConfig({ ...TEST_ENV, METRICS_PORT: '9464', METRICS_TOKEN: TOKEN })).toMatchObject({
      metricsPort: 9464,
      metricsToken: TOKEN,
    });
  });
});
