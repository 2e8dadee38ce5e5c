import type { Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import { buildTestApp } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';
import { proxyPlan, startTcpProxy } from '../support/tcp-proxy';

// Postgres "stops" mid-load without touching the server other tests use: the app under test
// reaches the database through a TCP proxy that the test cuts and restores.
type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
type Phase = 'up' | 'down' | 'recovering' | 'back';
interface Outcome {
  ended: number;
  action: string;
  phase: Phase;
  status: number;
  type: string;
  body: any;
  retryAfter: string | null;
  code?: string;
}

let direct: TestApp; // straight to the database: fixtures and the final checks
let proxied: TestApp; // the provider under test, through the proxy
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let server: Server;
let base: string;
const crashes: unknown[] = [];
const onCrash = (err: unknown) => crashes.push(err);

beforeAll(async () => {
  process.on('unhandledRejection', onCrash);
  process.on('uncaughtException', onCrash);
  direct = await buildTestApp();
  const plan = proxyPlan(process.env.TEST_DATABASE_URL!);
  proxy = await startTcpProxy(plan.target);
  proxied = await buildTestApp({ DATABASE_URL: plan.urlVia(proxy.port) });
  server = proxied.app.listen(0);
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  process.off('unhandledRejection', onCrash);
  process.off('uncaughtException', onCrash);
  await new Promise((resolve) => server.close(resolve));
  await proxied.close();
  await proxy.close();
  await direct.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntilReady(timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if ((await fetch(`${base}/readyz`)).status === 200) return Date.now() - started;
    await sleep(100);
  }
  throw new Error(`not ready ${timeoutMs} ms after the database came back`);
}

describe('database outage', () => {
  it('answers 503 while Postgres is gone, fails /readyz, recovers by itself, and half-writes nothing', async () => {
    const p = await buildPlatform(direct.services);
    const c = await buildClient(direct.services, p.id);
    const u = await buildUser(direct.services, p.id);
    const auth = `Basic ${Buffer.from(`${c.id}:${encodeURIComponent(c.secret!)}`).toString('base64')}`;
    const usedCodes: string[] = [];
    const refreshTokens: string[] = [];
    const accessTokens: string[] = [];
    const outcomes: Outcome[] = [];
    let phase: Phase = 'up';
    let running = true;

    const call = async (action: string, path: string, init: RequestInit = {}, code?: string) => {
      const started = phase;
      const res = await fetch(`${base}${path}`, { redirect: 'manual', ...init });
      const type = res.headers.get('content-type') ?? '';
      const text = await res.text();
      const body = type.startsWith('application/json') && text ? JSON.parse(text) : text;
      outcomes.push({
        ended: Date.now(),
        action,
        phase: started,
        status: res.status,
        type,
        body,
        retryAfter: res.headers.get('retry-after'),
        code,
      });
      return { status: res.status, body };
    };
    const tokenRequest = (body: Record<string, string>) => ({
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ platform_guid: p.id, ...body }).toString(),
    });

    const actions = [
      async () => {
        const code = await buildCode(direct.services, { platformId: p.id, client: c, user: u });
        usedCodes.push(code);
        const res = await call(
          'exchange',
          '/oauth/token',
          tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0] }),
          code,
        );
        if (res.status === 200) {
          refreshTokens.push(res.body.refresh_token);
          accessTokens.push(res.body.access_token);
        }
      },
      async () => {
        if (!refreshTokens.length) return;
        // One holder per token at a time, as one client: a replay after the successor was itself
        // rotated is invalid_grant, which concurrent holders of one token could cause.
        // A 503 puts the token back; if its rotation did commit, the retry is a grace-window replay.
        const [token] = refreshTokens.splice(Math.floor(Math.random() * refreshTokens.length), 1);
        const res = await call(
          'refresh',
          '/oauth/token',
          tokenRequest({ grant_type: 'refresh_token', refresh_token: token }),
        );
        refreshTokens.push(res.status === 200 ? res.body.refresh_token : token);
      },
      async () => {
        if (!accessTokens.length) return;
        await call('userinfo', `/oauth/userinfo?platform_guid=${p.id}`, {
          headers: { authorization: `Bearer ${accessTokens[accessTokens.length - 1]}` },
        });
      },
      async () => {
        const q = new URLSearchParams({
          platform_guid: p.id,
          client_id: c.id,
          redirect_uri: c.redirectUris[0],
          response_type: 'code',
          scope: 'openid',
        });
        await call('authorize', `/oauth/authorize?${q}`, { headers: { accept: 'text/html' } });
      },
    ];
    const worker = async () => {
      for (let i = 0; running; i++) await actions[i % actions.length]();
    };

    const workers = Array.from({ length: 6 }, (_, i) => sleep(i * 7).then(worker));
    // Up: until a few exchanges have gone through (the embedded database is much slower).
    for (
      let waited = 0;
      waited < 10_000 && outcomes.filter((o) => o.action === 'exchange' && o.status === 200).length < 6;
      waited += 50
    )
      await sleep(50);
    await proxy.cut();
    phase = 'down';
    // Down long enough for a dozen answers (a loaded machine answers slower; the count, not the clock, decides).
    const downAnswers = () => outcomes.filter((o) => o.phase === 'down' && o.action !== 'userinfo').length;
    for (let waited = 0; waited < 1200 || (waited < 20_000 && downAnswers() < 12); waited += 50) await sleep(50);
    const readyDown = await fetch(`${base}/readyz`);
    expect(readyDown.status).toBe(503);
    expect(await readyDown.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    phase = 'recovering'; // requests from here on may land either side of the return
    const restoredAt = Date.now();
    await proxy.restore();
    const recoveredIn = await waitUntilReady(15_000);
    phase = 'back';
    for (let waited = 0; waited < 10_000 && outcomes.filter((o) => o.phase === 'back').length < 12; waited += 100)
      await sleep(100);
    running = false;
    await Promise.all(workers);

    // No crash, no 5xx other than 503, and each phase answered as it should.
    expect(crashes).toEqual([]);
    const by = (ph: Phase) => outcomes.filter((o) => o.phase === ph);
    const summary = (list: Outcome[]) => [...new Set(list.map((o) => `${o.action} ${o.status}`))].sort();
    expect(outcomes.filter((o) => o.status >= 500 && o.status !== 503)).toEqual([]);
    expect(by('up').length).toBeGreaterThan(3);
    expect(summary(by('up'))).toEqual(expect.arrayContaining(['exchange 200']));
    expect(summary(by('up')).every((s) => / (200|303|503)$/.test(s))).toBe(true); // 503: in flight when the cut came

    // Answered while the database was away (a request still waiting when it came back may succeed).
    const down = by('down').filter((o) => o.ended < restoredAt && o.action !== 'userinfo'); // userinfo may be answered from its cache
    expect(down.length).toBeGreaterThan(10);
    for (const o of down) {
      expect({ action: o.action, status: o.status }).toEqual({ action: o.action, status: 503 });
      if (o.action === 'authorize') {
        expect(o.type).toMatch(/^text\/html/); // a browser route: the error page
      } else {
        expect(o.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
        expect(o.retryAfter).toBe('5');
      }
    }
    const back = by('back');
    expect(back.length).toBeGreaterThanOrEqual(12);
    expect(summary(back).every((s) => / (200|303)$/.test(s))).toBe(true);
    expect(recoveredIn).toBeLessThan(15_000);

    // Nothing half-written: a code is consumed exactly when its family exists, and every family has
    // exactly one unrotated head (a rotation swaps and inserts in one statement). Access tokens have
    // no row: they live by the family.
    const db = direct.database.db;
    const codes = await db('authorization_codes').where({ client_id: c.id }).select('id', 'consumed_at');
    expect(codes).toHaveLength(usedCodes.length);
    const families = await db('refresh_token_families')
      .where({ client_id: c.id })
      .select('id', 'code_id', 'revoked_at');
    for (const code of codes) {
      const issued = families.filter((f) => f.code_id === code.id).length;
      expect({
        code: code.id,
        consumed: code.consumed_at !== null,
        families: issued,
      }).toEqual({ code: code.id, consumed: issued === 1, families: issued });
    }
    const exchanged200 = outcomes.filter((o) => o.action === 'exchange' && o.status === 200).length;
    expect(families.length).toBeGreaterThanOrEqual(exchanged200);
    for (const f of families) {
      const rts = await db('refresh_tokens').where({ family_id: f.id }).select('rotated_at');
      expect({
        family: f.id,
        revoked: f.revoked_at,
        heads: rts.filter((r) => r.rotated_at === null).length,
      }).toEqual({ family: f.id, revoked: null, heads: 1 });
    }
  }, 60_000);

  it('answers 503 within the connect timeout when the database host accepts connections but never answers', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket)); // a host that is gone without refusing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const hung = await buildTestApp({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/none`,
    });
    // A real browser session (made while the database answered), so the hung app must read the store.
    const p = await buildPlatform(direct.services);
    const c = await buildClient(direct.services, p.id);
    const start = await request(direct.app).get(
      `/oauth/authorize?${new URLSearchParams({ platform_guid: p.id, client_id: c.id, redirect_uri: c.redirectUris[0], response_type: 'code', scope: 'openid' })}`,
    );
    const cookie = String(start.headers['set-cookie']?.[0]).split(';')[0];
    try {
      const started = Date.now();
      const [ready, token, page] = await Promise.all([
        request(hung.app).get('/readyz'),
        request(hung.app).post('/oauth/token').type('form').send({
          platform_guid: '00000000-0000-4000-8000-000000000000',
          grant_type: 'refresh_token',
          refresh_token: 'rt_x',
        }),
        request(hung.app).get(start.headers.location).set('Cookie', cookie).set('Accept', 'text/html'), // reads the session store
      ]);
      expect([ready.status, token.status, page.status]).toEqual([503, 503, 503]);
      expect(token.body.error).toBe('temporarily_unavailable');
      expect(page.type).toBe('text/html');
      expect(Date.now() - started).toBeLessThan(9_000); // the 5 s connect timeout, not the OS's minutes
    } finally {
      await hung.close().catch(() => {});
      sockets.forEach((s) => s.destroy());
      silent.close();
    }
  }, 30_000);
});
