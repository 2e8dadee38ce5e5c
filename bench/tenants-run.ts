// BENCH_DATA=tenants: is the provider as fast with 10,000 platforms as with one? Two provider
// processes of the same build: one on a database of 10,000 platforms, each with its own signing keys,
// resource and client (bench/tenants-data.ts), one on a database holding one such platform. On the
// large side the requests cycle through every platform (BENCH_TENANTS_SPREAD of them), so the
// per-platform caches (platform, keys, client, resource, serialised documents) hold and reload what
// real traffic makes them hold; on the small side the same row sends every request to its one
// platform. Each row warms both up, then their measured runs alternate (bench/lib/load.ts).
// Writes bench/results/<timestamp>-tenants.md (and .json) and bench/results/tenants-latest.md.
import os from 'node:os';
import { basicAuth, mapPool, request } from './lib/http';
import { CONNECTIONS, failedCell, measureAlternating, type Cell, type RequestVariant, type RowSpec } from './lib/load';
import { ROW_TITLES, type RowName } from './lib/oidc';
import { rssMB, stopAll, stopChild } from './lib/proc';
import { environmentLine } from './lib/env';
import { waitForQuiet, type QuietReport } from './lib/quiet';
import { comparisonTable, comparisonTargets, f0, f1, writeModeReport } from './lib/compare';
import { clientCredentialsBody, createMachinePlatform } from './machines';
import { adminCli, ROOT, spawnOurs, startBareOurs } from './ours';
import { copyPlatform, tenantClients, type TenantsLoad } from './tenants-data';

/** The rows this mode measures: the two documents every relying party fetches, and a token grant. */
export const TENANT_ROWS = ['discovery', 'jwks', 'client_credentials'] as const satisfies readonly RowName[];
export type TenantRow = (typeof TENANT_ROWS)[number];

/** Platforms on the large side at scale 1. */
const PLATFORMS = 10_000;
const REDIRECT_URI = 'http://127.0.0.1:9/cb';
/** No demo platform on either side: the databases hold the tenants and nothing else. */
const EXTRA_ENV = { DEMO_SEED: 'false' };

export interface TenantsOptions {
  scale: number;
  rows: TenantRow[];
  /** How many of the platforms the large side's requests cycle through (all when undefined). */
  spread?: number;
  warmup: number;
  duration: number;
  runs: number;
  poolMax: number;
  quietMaxSeconds: number;
  log: (msg: string) => void;
}

interface Tenant {
  platformGuid: string;
  clientId: string;
}

/** One request per tenant for each row, in the tenants' order. */
function variants(row: TenantRow, tenants: Tenant[], secret: string): RequestVariant[] {
  return tenants.map((t) => {
    const q = `platform_guid=${encodeURIComponent(t.platformGuid)}`;
    if (row === 'discovery') return { path: `/.well-known/openid-configuration?${q}` };
    if (row === 'jwks') return { path: `/oauth/jwks?${q}` };
    return {
      path: '/oauth/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: basicAuth(t.clientId, secret),
      },
      body: clientCredentialsBody({ platform_guid: t.platformGuid }),
    };
  });
}

/**
 * The row spread over `tenants`, once a sample of its requests (the first, the last and some between)
 * answered 200; else n/a with the answer.
 */
async function spreadRow(base: string, row: TenantRow, tenants: Tenant[], secret: string): Promise<RowSpec> {
  const spread = variants(row, tenants, secret);
  const method = row === 'client_credentials' ? 'POST' : 'GET';
  const step = Math.max(1, Math.floor(spread.length / 7));
  for (let i = 0; i < spread.length; i += step) {
    for (const v of [spread[i], spread[spread.length - 1]]) {
      const r = await request(base + v.path, { method, headers: v.headers, body: v.body }).catch((e: Error) => ({
        status: 0,
        body: e.message,
      }));
      if (r.status !== 200)
        return { kind: 'na', reason: `sanity check failed (${v.path}): HTTP ${r.status} ${r.body.slice(0, 200)}` };
    }
  }
  return { kind: 'static', method, ...spread[0], spread };
}

/**
 * Every request of a spread row once (32 at a time) before its warm-up: the first request to each
 * platform loads and caches its rows, a cost of a cold process that a timed warm-up over 10,000
 * platforms would not cover; what is measured then is the steady state (caches expiring and reloading).
 */
async function prime(base: string, spec: RowSpec): Promise<number> {
  if (spec.kind !== 'static' || !spec.spread) return 0;
  const t = performance.now();
  const spread = spec.spread;
  await mapPool(spread.length, CONNECTIONS, (i) =>
    request(base + spread[i].path, { method: spec.method, headers: spread[i].headers, body: spread[i].body }),
  );
  return (performance.now() - t) / 1000;
}

export async function runTenantsMode(o: TenantsOptions): Promise<void> {
  const started = new Date();
  const loadBefore = os.loadavg()[0];
  const { log } = o;
  const total = Math.max(1, Math.round(PLATFORMS * o.scale));
  log(`Latchkey bench, tenants mode: ${total} platforms against 1, rows: ${o.rows.join(', ')}`);

  log('phase 1: the large database — one platform through the admin CLI, the rest copied with SQL…');
  const many = await startBareOurs({ tag: 'tenants', extraEnv: EXTRA_ENV });
  const template = await createMachinePlatform({ env: many.env, cli: adminCli, redirectUri: REDIRECT_URI }, 'Tenant 0');
  const load: TenantsLoad = await copyPlatform(many.databaseUrl, template.platformGuid, total - 1, log);
  log(
    `  ${total} platforms in ${load.seconds.toFixed(1)} s${load.notCopied.length ? `; not copied: ${load.notCopied.join(', ')}` : ''}`,
  );
  const all = await tenantClients(many.databaseUrl);
  const spread = all.slice(0, Math.min(all.length, o.spread ?? all.length));

  log('phase 2: the one-platform database');
  const one = await startBareOurs({ tag: 'tenants-one', extraEnv: EXTRA_ENV });
  const single = await createMachinePlatform({ env: one.env, cli: adminCli, redirectUri: REDIRECT_URI }, 'Tenant 0');
  // Both measured processes start now, on loaded databases: neither idled through the load.
  await stopChild(many.child, 10_000);
  const manyNow = await spawnOurs({
    databaseUrl: many.databaseUrl,
    dataDir: many.dataDir,
    name: 'ours-tenants',
    extraEnv: EXTRA_ENV,
  });

  const problems: string[] = [];
  const small: Partial<Record<RowName, Cell>> = {};
  const large: Partial<Record<RowName, Cell>> = {};
  const primed: Partial<Record<RowName, number>> = {};
  let quiet: QuietReport | undefined;
  const rss: { one: number | null; many: number | null } = { one: null, many: null };
  try {
    quiet = await waitForQuiet(many.databaseUrl, { maxSeconds: o.quietMaxSeconds, log });
    log(`  ${quiet.quiet ? 'quiet' : 'still busy'} after ${quiet.seconds.toFixed(0)} s`);
    const opts = { warmup: o.warmup, duration: o.duration, runs: o.runs, poolMax: o.poolMax, log };
    for (const row of o.rows) {
      log(`row: ${ROW_TITLES[row]}`);
      const sides = [
        {
          label: 'one platform',
          base: one.base,
          pid: one.child.pid,
          spec: await spreadRow(one.base, row, [single], single.clientSecret),
        },
        {
          label: `${total} platforms`,
          base: manyNow.base,
          pid: manyNow.child.pid,
          spec: await spreadRow(manyNow.base, row, spread, template.clientSecret),
        },
      ];
      for (const side of sides) {
        const seconds = await prime(side.base, side.spec);
        log(`  ${side.label}: every platform asked once in ${seconds.toFixed(1)} s`);
        primed[row] = Math.max(primed[row] ?? 0, seconds);
      }
      [small[row], large[row]] = await measureAlternating(ROW_TITLES[row], sides, opts, (side, err) => {
        problems.push(`**${side.label} / ${ROW_TITLES[row]}**: ${(err as Error).message.slice(0, 600)}`);
        return failedCell(err);
      });
    }
    rss.one = rssMB(one.child.pid);
    rss.many = rssMB(manyNow.child.pid);
  } finally {
    await stopAll();
  }

  const md = report({
    started,
    o,
    total,
    spread: spread.length,
    load,
    primed,
    small,
    large,
    problems,
    quiet,
    rss,
    loadAvg: { before: loadBefore, after: os.loadavg()[0] },
  });
  const stamp = writeModeReport('tenants', started, md, {
    started,
    settings: { ...o, log: undefined, connections: CONNECTIONS },
    total,
    load,
    small,
    large,
    problems,
    quiet,
    rss,
  });
  log(`\nwritten: bench/results/${stamp}-tenants.md and bench/results/tenants-latest.md`);
}

function report(r: {
  started: Date;
  o: TenantsOptions;
  total: number;
  spread: number;
  load: TenantsLoad;
  primed: Partial<Record<RowName, number>>;
  small: Partial<Record<RowName, Cell>>;
  large: Partial<Record<RowName, Cell>>;
  problems: string[];
  quiet: QuietReport | undefined;
  rss: { one: number | null; many: number | null };
  loadAvg: { before: number; after: number };
}): string {
  const { o } = r;
  const sides = { rows: o.rows, a: { name: 'one', cells: r.small }, b: { name: 'many', cells: r.large } };
  const L: string[] = [];
  L.push(`# Latchkey benchmark, tenants mode — ${r.started.toISOString()}`, '');
  L.push(
    `\`BENCH_DATA=tenants\`, \`BENCH_DATA_SCALE=${o.scale}\`: **${f0(r.total)} platforms ("many") against one ("one")**, each a standard platform with its own HS512, RS256, ES256 and EdDSA signing keys, one resource and one confidential client allowed client credentials. ${CONNECTIONS} connections, ${o.warmup} s warm-up, median of ${o.runs} × ${o.duration} s per row; two provider processes of the same build, started one after the other once both databases were ready, their measured runs alternating within each row (one, many, many, one, …). Rate limiting off (\`RATE_LIMIT_SCALE=0\`).`,
    '',
  );
  L.push(
    `Requests: on the "many" side every request goes to the next of **${f0(r.spread)} platforms** in turn (one counter across the connections, so each platform is asked about every ${f0(r.spread)}th request and the per-platform caches keep, expire and reload entries as real traffic spread over that many tenants makes them); on the "one" side every request goes to its one platform. The same request shapes on both: discovery \`GET /.well-known/openid-configuration?platform_guid=G\`, JWKS \`GET /oauth/jwks?platform_guid=G\`, client credentials \`POST /oauth/token\` with the platform's client in a Basic header, \`grant_type=client_credentials&resource=…&scope=orders:read&platform_guid=G\` (a signed RS256 JWT access token, its row and its audit event written per request).`,
    '',
  );
  L.push(
    `Environment: ${environmentLine(ROOT)}; 1-min load average ${r.loadAvg.before.toFixed(2)} at start, ${r.loadAvg.after.toFixed(2)} at the end.`,
    '',
  );
  if (r.quiet)
    L.push(
      `Before the rows: ${r.quiet.quiet ? 'quiet' : '**still busy**'} after ${f0(r.quiet.seconds)} s (CPUs ${f0(r.quiet.idle * 100)} % idle over 5 s, ${r.quiet.autovacuumWorkers} autovacuum workers, ${f0(r.quiet.dirtyMiB)} MiB dirty; \`BENCH_QUIET_MAX\`=${o.quietMaxSeconds} s).`,
      '',
    );
  L.push('## Rows: one platform vs many', '');
  comparisonTable(L, sides);
  L.push('## Load', '');
  L.push(
    `The template platform ("Tenant 0") through the admin CLI (\`platform create --profile standard\`, \`resource create\`, \`client create\`: keys generated and sealed under the provider's MASTER_KEY, the client secret sealed), then ${f0(r.load.copies)} copies of its rows with SQL in ${f1(r.load.seconds)} s: ${Object.entries(
      r.load.rows,
    )
      .map(([t, n]) => `${t} ${f0(n)}`)
      .join(
        ', ',
      )} rows (new ids and kids; the copies share the template's sealed key material and client secret, which the provider still unseals, imports and caches per platform). ${r.load.notCopied.length ? `Rows of the template not copied: ${r.load.notCopied.join(', ')}.` : 'Every row of the template with a platform_id was copied.'}`,
    '',
  );
  L.push(
    `Before each row's warm-up every platform of the spread was asked once, 32 requests at a time (the first request to a platform loads and caches its rows; a timed warm-up would not reach all of them): ${o.rows
      .map((row) => `${ROW_TITLES[row]} ${f1(r.primed[row] ?? NaN)} s`)
      .join(', ')} for the ${f0(r.spread)} platforms of the "many" side.`,
    '',
  );
  L.push('## Targets', '', '| target | goal | measured | ok |', '|---|---|---|---|');
  comparisonTargets(L, sides, `${f0(r.total)} platforms vs one`);
  const mb = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(1)} MB`);
  L.push(`| RSS after the rows, one → many | (informative) | ${mb(r.rss.one)} → ${mb(r.rss.many)} | — |`, '');
  if (r.problems.length) {
    L.push('## Problems', '');
    for (const x of r.problems) L.push(`- ${x.replace(/\n/g, '\n  ')}`);
    L.push('');
  }
  return L.join('\n');
}
