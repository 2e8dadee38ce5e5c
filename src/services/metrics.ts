import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Pool } from 'pg';
import type { Db } from '../db';
import { countByStatus } from '../repositories/mail-outbox.repository';
import { MAIL_STATUSES } from '../domain/mail';

/** What the gauges read when Prometheus scrapes; absent ones are not reported. */
export interface MetricSources {
  db?: Db;
  /** The browser-session pg pool (connect-pg-simple). */
  sessionPool?: Pool;
  /** Node's process metrics (CPU, memory, event-loop lag, GC): only where someone scrapes them. */
  processMetrics?: boolean;
}

/**
 * The provider's series, in a registry of their own: every app (and the tests build several in
 * one process) counts apart from the others, and nothing lands in prom-client's global registry.
 * Counters are cheap whether or not anyone scrapes; gauges are read only at scrape time.
 */
export function createMetrics(sources: MetricSources = {}) {
  const registry = new Registry();
  const registers = [registry];

  const metrics = {
    registry,
    /** Per request: `route` is the Express route pattern (never the URL), or `unmatched`. */
    httpRequestSeconds: new Histogram({
      name: 'latchkey_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status: latency histogram; _count is the request count',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    signIns: new Counter({
      name: 'latchkey_sign_ins_total',
      help: 'Password sign-ins: success, failure (wrong email or password) or locked (refused unchecked while throttled)',
      labelNames: ['result'] as const,
      registers,
    }),
    lockouts: new Counter({
      name: 'latchkey_lockouts_total',
      help: 'Throttle locks started: sign_in (account+source or source) or sign_up (source)',
      labelNames: ['throttle'] as const,
      registers,
    }),
    tokensIssued: new Counter({
      name: 'latchkey_tokens_issued_total',
      help: 'Token responses issued, by grant type',
      labelNames: ['grant'] as const,
      registers,
    }),
    refreshReuse: new Counter({
      name: 'latchkey_refresh_token_reuse_detected_total',
      help: 'Rotated refresh tokens presented after the grace window: each revoked its whole family',
      registers,
    }),
    rateLimitHits: new Counter({
      name: 'latchkey_rate_limit_hits_total',
      help: 'Requests refused with 429 by a rate limit (the spec endpoint name, or pages for the hosted pages)',
      labelNames: ['limit'] as const,
      registers,
    }),
    rateLimitCounts: new Counter({
      name: 'latchkey_rate_limit_counts_total',
      help: 'Rate-limited requests counted with the database counters: answered from memory (far from the limit), or counted exactly in the database (near it, or counts not read lately)',
      labelNames: ['answer'] as const,
      registers,
    }),
    rateLimitFlushSeconds: new Histogram({
      name: 'latchkey_rate_limit_flush_duration_seconds',
      help: "Writes of this instance's rate-limit counts to the database, each reading every instance's sums back",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
  };

  if (sources.db) mailOutboxGauge(registry, sources.db);
  if (sources.db || sources.sessionPool) poolGauges(registry, sources);
  if (sources.processMetrics) collectDefaultMetrics({ register: registry });
  // Zeros from the start, so a rate (and an alert on it) has a series before the first event.
  for (const result of ['success', 'failure', 'locked']) metrics.signIns.inc({ result }, 0);
  for (const grant of ['authorization_code', 'refresh_token', 'client_credentials', 'token_exchange'])
    metrics.tokensIssued.inc({ grant }, 0);
  for (const answer of ['memory', 'database']) metrics.rateLimitCounts.inc({ answer }, 0);
  return metrics;
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * The outbox is one table shared by every instance: each reports the same numbers (aggregate with
 * max, not sum). A database that does not answer leaves the gauge out of that scrape rather than
 * failing it: the pool gauges then tell why.
 */
function mailOutboxGauge(registry: Registry, db: Db) {
  new Gauge({
    name: 'latchkey_mail_outbox_mails',
    help: 'Mails in the durable outbox by status: queued and sending are the queue depth, dead gave up',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      let counts;
      try {
        counts = await countByStatus(db);
      } catch {
        return;
      }
      for (const status of MAIL_STATUSES) this.set({ status }, counts[status]);
    },
  });
}

/** knex's pool (tarn) exposes counts as methods; the pg pool as properties. */
interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

interface PoolState {
  used: number;
  idle: number;
  waiting: number;
  max: number;
}

function poolStates(sources: MetricSources): Array<[string, PoolState]> {
  const states: Array<[string, PoolState]> = [];
  const tarn = (sources.db?.client as { pool?: TarnPool } | undefined)?.pool;
  if (tarn)
    states.push([
      'main',
      { used: tarn.numUsed(), idle: tarn.numFree(), waiting: tarn.numPendingAcquires(), max: tarn.max },
    ]);
  const pg = sources.sessionPool;
  if (pg)
    states.push([
      'sessions',
      { used: pg.totalCount - pg.idleCount, idle: pg.idleCount, waiting: pg.waitingCount, max: pg.options.max ?? 10 },
    ]);
  return states;
}

/** Pool usage: `main` is the knex pool of every query, `sessions` the browser-session pool. */
function poolGauges(registry: Registry, sources: MetricSources) {
  new Gauge({
    name: 'latchkey_db_pool_connections',
    help: 'Database pool connections by pool (main, sessions) and state (used, idle)',
    labelNames: ['pool', 'state'] as const,
    registers: [registry],
    collect() {
      for (const [pool, s] of poolStates(sources)) {
        this.set({ pool, state: 'used' }, s.used);
        this.set({ pool, state: 'idle' }, s.idle);
      }
    },
  });
  new Gauge({
    name: 'latchkey_db_pool_waiting_requests',
    help: 'Queries waiting for a free connection, by pool: above 0 for long, the pool is too small',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      for (const [pool, s] of poolStates(sources)) this.set({ pool }, s.waiting);
    },
  });
  new Gauge({
    name: 'latchkey_db_pool_max_connections',
    help: 'Configured maximum connections, by pool',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      for (const [pool, s] of poolStates(sources)) this.set({ pool }, s.max);
    },
  });
}

/** What the access-token cache holds (docs/decisions.md, "Memory stays flat"): bounded in bytes. */
export function accessTokenCacheGauges(registry: Registry, stats: () => { entries: number; bytes: number }) {
  // Services built again on the same metrics (a job's own services) report their cache instead.
  registry.removeSingleMetric('latchkey_access_token_cache_entries');
  registry.removeSingleMetric('latchkey_access_token_cache_bytes');
  new Gauge({
    name: 'latchkey_access_token_cache_entries',
    help: "Access tokens kept in this process's cache for userinfo and introspection",
    registers: [registry],
    collect() {
      this.set(stats().entries);
    },
  });
  new Gauge({
    name: 'latchkey_access_token_cache_bytes',
    help: 'Approximate heap bytes the access-token cache holds (bounded; least recently used evicted first)',
    registers: [registry],
    collect() {
      this.set(stats().bytes);
    },
  });
}
