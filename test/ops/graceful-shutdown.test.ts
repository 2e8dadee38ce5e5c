import http from 'node:http';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createAppServer } from '../../src/http/server';
import { trackServer } from '../../src/http/drain';
import { createLogger } from '../../src/logger';
import { basic } from '../support/account-flows';
import { buildTestApp, expectOAuthError, TEST_ENV } from '../helpers';
import { buildClient, buildCode, buildPlatform, buildUser } from '../factories';
import { startProvider, type ProviderProcess } from '../support/provider-process';

/**
 * SIGTERM under keep-alive load (docs/decisions.md, "Graceful shutdown"): /readyz turns 503, every
 * response from then on says `Connection: close`, new connections are refused, and the process
 * exits 0 once every request in flight is answered. Refresh rotations are the load because a
 * rotation committed whose answer is lost leaves its client holding a token the server has
 * already replaced: the test presents every client's last token afterwards.
 */

type TestApp = Awaited<ReturnType<typeof buildTestApp>>;
// No reuse grace: a token presented again after its rotation revokes its family, so a lost answer shows.
const NO_GRACE = { REFRESH_REUSE_GRACE_SECONDS: '0' };

interface Outcome {
  writtenBeforeSignal: boolean;
  status?: number;
  connection?: string;
  error?: string;
}

/** One POST on a keep-alive agent; when its bytes were all handed to the OS is compared with the signal's time. */
function post(
  agent: http.Agent,
  url: string,
  body: string,
  authorization: string,
  signalledAt: () => number | undefined,
): Promise<Outcome & { body?: string }> {
  return new Promise((resolve) => {
    let writtenAt = Infinity;
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d) => (text += d))
          .on('end', () => {
            resolve({
              writtenBeforeSignal: writtenAt < (signalledAt() ?? Infinity),
              status: res.statusCode,
              connection: res.headers.connection,
              body: text,
            });
          });
      },
    );
    req.on('finish', () => (writtenAt = performance.now()));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ writtenBeforeSignal: writtenAt < (signalledAt() ?? Infinity), error: err.code ?? err.message }),
    );
    req.end(body);
  });
}

describe('graceful shutdown of the provider process', () => {
  let setup: TestApp;
  let provider: ProviderProcess;
  let dataDir: string;

  beforeAll(async () => {
    setup = await buildTestApp(NO_GRACE);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-drain-'));
    provider = await startProvider({
      NODE_ENV: 'test',
      DEMO_SEED: 'false',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      DATABASE_URL: process.env.TEST_DATABASE_URL!,
      DATA_DIR: dataDir,
      BASE_URL: 'http://drain.test',
      MASTER_KEY: TEST_ENV.MASTER_KEY,
      SESSION_SECRET: TEST_ENV.SESSION_SECRET,
      RATE_LIMIT_SCALE: '0',
      SHUTDOWN_GRACE_SECONDS: '20',
      ...NO_GRACE,
    });
  }, 90_000);

  afterAll(async () => {
    await provider?.stop();
    await setup?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('on SIGTERM under keep-alive load answers every request in flight, loses no rotation and exits 0', async () => {
    const p = await buildPlatform(setup.services);
    const c = await buildClient(setup.services, p.id, { type: 'confidential' });
    const u = await buildUser(setup.services, p.id);
    const LOOPS = 12;
    const tokens: string[] = [];
    for (let i = 0; i < LOOPS; i++) {
      const code = await buildCode(setup.services, {
        platformId: p.id,
        client: c,
        user: u,
        scopes: ['openid', 'offline_access'],
      });
      const res = await request(setup.app)
        .post('/oauth/token')
        .set('Authorization', basic(c))
        .type('form')
        .send({ platform_guid: p.id, grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0] });
      tokens.push(res.body.refresh_token);
    }

    let signalledAt: number | undefined;
    const outcomes: Outcome[] = [];
    const exited = new Promise<number | null>((resolve) => provider.child.once('exit', (code) => resolve(code)));
    const loops = tokens.map(async (_, i) => {
      // One keep-alive connection per client, reused until the server says close or refuses.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      for (;;) {
        const body = new URLSearchParams({
          platform_guid: p.id,
          grant_type: 'refresh_token',
          refresh_token: tokens[i],
        }).toString();
        const o = await post(agent, `${provider.url}/oauth/token`, body, basic(c), () => signalledAt);
        outcomes.push({
          writtenBeforeSignal: o.writtenBeforeSignal,
          status: o.status,
          connection: o.connection,
          error: o.error,
        });
        if (o.status === 200) tokens[i] = JSON.parse(o.body!).refresh_token;
        if (o.error || o.status !== 200) break; // a client would go to another instance now
      }
      agent.destroy();
    });
    await new Promise((r) => setTimeout(r, 1500));
    const answeredBefore = outcomes.length;
    signalledAt = performance.now();
    provider.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await Promise.all(loops);

    expect(answeredBefore).toBeGreaterThan(LOOPS); // there was load
    // Every request the server could have read before the signal was answered, and with success.
    const lost = outcomes.filter((o) => o.writtenBeforeSignal && o.status !== 200);
    expect(lost).toEqual([]);
    // Afterwards: answers, each with 200; or a connection refused (new) or closed (idle) for a request sent later.
    expect(outcomes.filter((o) => o.status !== undefined && o.status !== 200)).toEqual([]);
    expect(outcomes.filter((o) => o.error && !['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(o.error))).toEqual([]);
    // No rotation was committed whose answer the client never got: each client's last token still works.
    for (const token of tokens) {
      const res = await request(setup.app)
        .post('/oauth/token')
        .set('Authorization', basic(c))
        .type('form')
        .send({ platform_guid: p.id, grant_type: 'refresh_token', refresh_token: token });
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
    }
    const logged = provider
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(logged.find((l) => l.msg === 'every in-flight request answered')).toMatchObject({
      waitedFor: { requests: expect.any(Number), connections: expect.any(Number) },
    });
  }, 90_000);
});

describe('draining a server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('turns /readyz to 503 temporarily_unavailable at once, and /healthz stays 200', async () => {
    let draining = false;
    const { app } = createApp({
      config: t.config,
      db: t.database.db,
      sessionPool: t.database.sessionPool,
      logger: createLogger('silent'),
      isDraining: () => draining,
    });
    await request(app).get('/readyz').expect(200);
    draining = true;
    const res = await request(app).get('/readyz');
    expectOAuthError(res, 503, 'temporarily_unavailable');
    expect(res.headers['retry-after']).toBeDefined();
    await request(app).get('/healthz').expect(200);
  });

  it('answers the request in flight with Connection: close, refuses new connections, and resolves once it is answered', async () => {
    const server = createAppServer(t.app);
    const tracked = trackServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (p: string) =>
      new Promise<{ status?: number; connection?: string; error?: string }>((resolve) => {
        http
          .get({ host: '127.0.0.1', port, path: p, agent }, (res) => {
            res.resume().on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
          })
          .on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code }));
      });
    expect(await get('/healthz')).toEqual({ status: 200, connection: 'keep-alive' });
    // A request the server has read and not yet answered when draining begins.
    let drained: ReturnType<typeof tracked.drain> | undefined;
    server.once('request', () => {
      drained = tracked.drain(10_000);
    }); // after the app's listener began the answer
    const inFlight = get('/readyz');
    expect(await inFlight).toEqual({ status: 200, connection: 'close' });
    await expect(drained).resolves.toMatchObject({ drained: true, waitedFor: { requests: 1 } });
    const fresh = await new Promise<string | undefined>((resolve) => {
      http
        .get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, () => resolve(undefined))
        .on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
    });
    expect(fresh).toBe('ECONNREFUSED');
    agent.destroy();
  });
});
