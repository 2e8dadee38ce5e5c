import type { Response } from 'supertest';
import { loadConfig, type Config } from '../src/config';
import { openDatabase, type Database } from '../src/db';
import { createApp } from '../src/app';
import { createLogger } from '../src/logger';
import { startMailOutboxJob } from '../src/jobs/mail-outbox.job';
import { startBackchannelLogoutJob } from '../src/jobs/backchannel-logout.job';
import os from 'node:os';
import path from 'node:path';

export const TEST_MASTER_KEY = 'dGVzdC1tYXN0ZXIta2V5LTMyLWJ5dGVzLWxvbmchISE';
export const TEST_ENV = {
  NODE_ENV: 'test',
  BASE_URL: 'http://issuer.test',
  MASTER_KEY: TEST_MASTER_KEY,
  SESSION_SECRET: 'test-session-secret-that-is-long-enough',
  RATE_LIMIT_SCALE: '0',
  LOG_LEVEL: 'silent',
  // The run's own directory (global-setup): the mail outbox of the tests lands there, not in ./data.
  DATA_DIR: process.env.TEST_DATA_DIR ?? path.join(os.tmpdir(), 'latchkey-test-data'),
};

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ ...TEST_ENV, DATABASE_URL: process.env.TEST_DATABASE_URL, ...overrides });
}

/**
 * A real app on the run's database; call close() in afterAll. Like the provider, it runs a mail
 * outbox worker (mails land in DATA_DIR/outbox, see support/outbox.ts) — except for apps given
 * their own SMTP_URL or DATABASE_URL (a worker of theirs must not take the run's mails), unless
 * `options.mailWorker` says otherwise. `options.backchannelWorker` runs the back-channel logout
 * worker too (off by default: tests of it drive deliveries themselves, on a database of their own).
 */
export async function buildTestApp(
  overrides: Record<string, string> = {},
  now?: () => Date,
  options: { mailWorker?: boolean; backchannelWorker?: boolean } = {},
) {
  const config = testConfig(overrides);
  const database: Database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: 5,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    acquireTimeoutMs: config.dbAcquireTimeoutMs,
  });
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const {
    app,
    services,
    close: closeApp,
  } = createApp({
    config,
    db: database.db,
    sessionPool: database.sessionPool, // the embedded database is reached by URL in tests, but cannot forward NOTIFY either
    notifications: process.env.TEST_DATABASE_KIND === 'embedded' ? undefined : database.notifications,
    logger,
    now,
  });
  const mailWorker =
    (options.mailWorker ?? !(overrides.SMTP_URL || overrides.DATABASE_URL))
      ? startMailOutboxJob(services, logger)
      : undefined;
  const backchannelWorker = options.backchannelWorker ? startBackchannelLogoutJob(services, logger) : undefined;
  return {
    app,
    services,
    config,
    database,
    mailWorker,
    close: async () => {
      await mailWorker?.stop();
      await backchannelWorker?.stop();
      closeApp();
      await database.close();
    },
  };
}

/** The spec's error body, no caching, and the WWW-Authenticate a status calls for. */
export function expectOAuthError(res: Response, status: number, code: string) {
  expect({ status: res.status, error: res.body.error }).toEqual({ status, error: code });
  expect(typeof res.body.error_description).toBe('string');
  expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
  expect(res.headers['cache-control']).toMatch(/no-store/);
  if (code === 'invalid_token') expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
}
