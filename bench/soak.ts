// Memory soak: `npm run soak` (SOAK_MINUTES, default 15). Latchkey (dist/main.js on a fresh
// Postgres database, as in `npm run bench`) under a steady, realistic mix for the whole time:
// clients that refresh their tokens and call userinfo and introspection with each new access
// token, relying parties reading discovery and JWKS, and fresh browser sign-ins. The provider's
// RSS is sampled every SOAK_SAMPLE_SECONDS; the report gives the series, the slope after the
// warm-up, and whether it is flat: the mean of the last three minutes within 10 % of the mean of
// the first three after the warm-up. Written to bench/results/soak-latest.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { form, request } from './lib/http';
import { installSignalHandlers, rssMB, stopAll } from './lib/proc';
import { environmentLine, positiveNumber } from './lib/env';
import { ROOT, startOurs } from './ours';

const MINUTES = positiveNumber('SOAK_MINUTES', 15);
const RATE = positiveNumber('SOAK_RATE', 150); // requests per second, the whole mix
const CLIENTS = Math.round(positiveNumber('SOAK_CLIENTS', 40)); // token holders refreshing in turn
const SAMPLE_SECONDS = positiveNumber('SOAK_SAMPLE_SECONDS', 10);
const WARMUP_MINUTES = Math.min(2, MINUTES / 5);
const WINDOW_MINUTES = Math.min(3, (MINUTES - WARMUP_MINUTES) / 3);
const log = (msg: string) => console.error(msg);

/** Least squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den ? num / den : 0;
}

const mean = (ys: number[]) => (ys.length ? ys.reduce((s, y) => s + y, 0) / ys.length : NaN);

async function main() {
  installSignalHandlers();
  log(`soak: ${MINUTES} min at ${RATE} req/s, ${CLIENTS} refreshing clients, RSS every ${SAMPLE_SECONDS} s`);
  // Process metrics too, to tell the heap from native memory (argon2's blocks, buffers) in the series.
  const METRICS_TOKEN = 'soak-metrics-token-0123456789';
  const ours = await startOurs({ tag: 'soak', extraEnv: { RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn', METRICS_TOKEN } });
  const driver = ours.driver!;
  const tenant = { platform_guid: ours.platformGuid };
  const auth = driver.basic;
  const tokenUrl = `${ours.base}/oauth/token`;
  log('minting refresh tokens…');
  const clients = (await driver.mintRefreshTokens(CLIENTS)).map((refreshToken) => ({
    refreshToken,
    accessToken: '',
    refreshing: false,
  }));

  const counts = { sent: 0, ok: 0, failed: 0 };
  const failures = new Map<string, number>();
  const send = async (what: string, run: () => Promise<{ status: number; body: string }>) => {
    counts.sent++;
    try {
      const r = await run();
      if (r.status === 200) counts.ok++;
      else throw new Error(`HTTP ${r.status}`);
      return r;
    } catch (err) {
      counts.failed++;
      const key = `${what}: ${(err as Error).message.slice(0, 80)}`;
      failures.set(key, (failures.get(key) ?? 0) + 1);
      return undefined;
    }
  };
  const post = (url: string, body: Record<string, string>) =>
    request(url, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ ...body, ...tenant }),
    });

  // The mix, by weight: a refresh, then its new access token used for userinfo and introspection.
  let turn = 0;
  const mix: [number, () => Promise<unknown>][] = [
    [
      20,
      async () => {
        // A client refreshes once at a time, as a real one does: its turn passes while its last
        // refresh is unanswered (presenting the same token twice at once is reuse, refused by design).
        const c = clients[turn++ % clients.length];
        if (c.refreshing) return;
        c.refreshing = true;
        try {
          const r = await send('refresh', () =>
            post(tokenUrl, { grant_type: 'refresh_token', refresh_token: c.refreshToken }),
          );
          if (r)
            Object.assign(c, {
              refreshToken: JSON.parse(r.body).refresh_token,
              accessToken: JSON.parse(r.body).access_token,
            });
        } finally {
          c.refreshing = false;
        }
      },
    ],
    [
      40,
      () => {
        const c = clients[Math.floor(Math.random() * clients.length)];
        return c.accessToken
          ? send('userinfo', () =>
              request(`${ours.base}/oauth/userinfo`, { headers: { authorization: `Bearer ${c.accessToken}` } }),
            )
          : Promise.resolve();
      },
    ],
    [
      15,
      () => {
        const c = clients[Math.floor(Math.random() * clients.length)];
        return c.accessToken
          ? send('introspection', () => post(`${ours.base}/oauth/introspect`, { token: c.accessToken }))
          : Promise.resolve();
      },
    ],
    [
      12,
      () =>
        send('discovery', () =>
          request(`${ours.base}/.well-known/openid-configuration?platform_guid=${ours.platformGuid}`),
        ),
    ],
    [12, () => send('jwks', () => request(`${ours.base}/oauth/jwks?platform_guid=${ours.platformGuid}`))],
    [
      1,
      () =>
        send('sign-in', async () => {
          await driver.fullSignIn();
          return { status: 200, body: '' };
        }),
    ],
  ];
  const totalWeight = mix.reduce((s, [w]) => s + w, 0);
  const pick = () => {
    let r = Math.random() * totalWeight;
    for (const [w, run] of mix) if ((r -= w) < 0) return run;
    return mix[0][1];
  };

  const started = Date.now();
  const samples: { minute: number; rssMB: number; heapMB: number; externalMB: number; tokenCacheMB: number }[] = [];
  const metric = (text: string, name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  const sample = async () => {
    const mb = rssMB(ours.pid);
    const text = (
      await request(`${ours.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).catch(() => ({
        body: '',
      }))
    ).body;
    if (mb !== null) {
      samples.push({
        minute: (Date.now() - started) / 60_000,
        rssMB: mb,
        heapMB: metric(text, 'nodejs_heap_size_used_bytes'),
        externalMB: metric(text, 'nodejs_external_memory_bytes'),
        tokenCacheMB: metric(text, 'latchkey_access_token_cache_bytes'),
      });
    }
  };
  await sample();
  const sampler = setInterval(() => void sample(), SAMPLE_SECONDS * 1000);
  const progress = setInterval(
    () =>
      log(
        `  ${((Date.now() - started) / 60_000).toFixed(1)} min: ${counts.sent} sent, ${counts.failed} failed, RSS ${samples.at(-1)?.rssMB.toFixed(1)} MB`,
      ),
    60_000,
  );
  // Paced: every 100 ms a tenth of the rate, never more in flight than 4× the rate allows.
  const inFlight = new Set<Promise<unknown>>();
  const pacer = setInterval(() => {
    for (let i = 0; i < RATE / 10 && inFlight.size < RATE * 4; i++) {
      const p = pick()().catch(() => {});
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  }, 100);
  await new Promise((r) => setTimeout(r, MINUTES * 60_000));
  clearInterval(pacer);
  await Promise.all(inFlight);
  await sample();
  clearInterval(sampler);
  clearInterval(progress);
  await stopAll();

  const steady = samples.filter((s) => s.minute >= WARMUP_MINUTES);
  const first = steady.filter((s) => s.minute < WARMUP_MINUTES + WINDOW_MINUTES).map((s) => s.rssMB);
  const last = steady.filter((s) => s.minute >= MINUTES - WINDOW_MINUTES).map((s) => s.rssMB);
  const perMinute = slope(steady.map((s) => ({ x: s.minute, y: s.rssMB })));
  const lastSlope = slope(
    steady.filter((s) => s.minute >= MINUTES - WINDOW_MINUTES).map((s) => ({ x: s.minute, y: s.rssMB })),
  );
  const change = mean(last) / mean(first) - 1;
  const flat = Math.abs(change) <= 0.1;
  // The heap's floor (its lowest sample each minute, after a major collection): what a leak raises.
  const floors: { x: number; y: number }[] = [];
  for (let m = Math.floor(WARMUP_MINUTES); m < MINUTES; m++) {
    const inMinute = steady.filter((s) => s.minute >= m && s.minute < m + 1 && Number.isFinite(s.heapMB));
    if (inMinute.length) floors.push({ x: m, y: Math.min(...inMinute.map((s) => s.heapMB)) });
  }
  const floorSlope = slope(floors);
  const rate = counts.sent / (MINUTES * 60);
  const lines = [
    `# Memory soak, ${new Date(started).toISOString()}`,
    '',
    environmentLine(ROOT),
    '',
    `${MINUTES} min at ${rate.toFixed(0)} req/s (${counts.sent} requests, ${counts.failed} failed), ${CLIENTS} refreshing clients; RSS every ${SAMPLE_SECONDS} s, warm-up ${WARMUP_MINUTES} min.`,
    '',
    `| | RSS |`,
    `|---|---:|`,
    `| mean of minutes ${WARMUP_MINUTES.toFixed(1)}–${(WARMUP_MINUTES + WINDOW_MINUTES).toFixed(1)} | ${mean(first).toFixed(1)} MB |`,
    `| mean of the last ${WINDOW_MINUTES.toFixed(1)} min | ${mean(last).toFixed(1)} MB |`,
    `| change | ${(change * 100).toFixed(1)} % |`,
    `| slope after the warm-up | ${perMinute >= 0 ? '+' : ''}${perMinute.toFixed(2)} MB/min |`,
    `| slope of the last ${WINDOW_MINUTES.toFixed(1)} min | ${lastSlope >= 0 ? '+' : ''}${lastSlope.toFixed(2)} MB/min |`,
    `| **flat** (last within 10 % of first) | **${flat ? 'yes' : change < 0 ? 'no: it fell' : 'no: it grew'}** |`,
    `| heap floor (lowest sample each minute) | ${floors.length ? `${Math.min(...floors.map((f) => f.y)).toFixed(1)}–${Math.max(...floors.map((f) => f.y)).toFixed(1)} MB` : 'n/a'} |`,
    `| slope of the heap floor | ${floorSlope >= 0 ? '+' : ''}${floorSlope.toFixed(2)} MB/min |`,
    '',
    failures.size ? `Failures: ${[...failures].map(([k, n]) => `${k} ×${n}`).join('; ')}` : 'No request failed.',
    '',
    '## RSS series',
    '',
    'Heap: V8 heap in use; external: memory outside the heap that V8 tracks (buffers); token cache: what the access-token cache counts.',
    '',
    '| minute | RSS MB | heap MB | external MB | token cache MB |',
    '|---:|---:|---:|---:|---:|',
    ...samples.map(
      (s) =>
        `| ${s.minute.toFixed(2)} | ${s.rssMB.toFixed(1)} | ${s.heapMB.toFixed(1)} | ${s.externalMB.toFixed(1)} | ${s.tokenCacheMB.toFixed(2)} |`,
    ),
    '',
  ];
  const out = path.join(ROOT, 'bench', 'results', 'soak-latest.md');
  fs.writeFileSync(out, lines.join('\n'));
  log(lines.slice(4, 17).join('\n'));
  log(`written to ${path.relative(ROOT, out)} (load average at the end ${os.loadavg()[0].toFixed(2)})`);
  if (counts.failed > counts.sent * 0.01) process.exitCode = 1;
}

main().catch(async (err) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
