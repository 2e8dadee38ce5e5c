import './threadpool-size'; // first: sets libuv's pool size before anything starts the pool
import type { Server } from 'node:http';
import { createAppServer } from './http/server';
import { loadConfig, ConfigError } from './config';
import { withDevSecrets } from './dev-secrets';
import { createLogger, wantsPrettyLogs } from './logger';
import { riskySettings } from './config-warnings';
import { openDatabase, migrateLatest } from './db';
import { createApp } from './app';
import { VERSION } from './version';
import { createMetricsServer } from './http/metrics-server';
import { seedDemo } from './cli/demo-seed';
import { startPurgeJob } from './jobs/purge.job';
import { startMailOutboxJob } from './jobs/mail-outbox.job';
import { startBackchannelLogoutJob } from './jobs/backchannel-logout.job';

async function main() {
  let config;
  try {
    config = withDevSecrets(loadConfig(process.env));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, { pretty: wantsPrettyLogs(config.logFormat, config.isProduction, Boolean(process.stdout.isTTY)) });
  for (const warning of riskySettings(config)) logger.warn(warning);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, listenUrl: config.databaseListenUrl, dataDir: config.dataDir, poolMax: config.dbPoolMax, statementTimeoutMs: config.dbStatementTimeoutMs });
  const applied = await migrateLatest(database.db);
  if (applied.length) logger.info({ migrations: applied }, 'database migrated');

  const { app, services } = createApp({ config, db: database.db, sessionPool: database.sessionPool, notifications: database.notifications, logger });
  const { resealed } = await services.masterKey.verifyAtStart();
  if (resealed) logger.info({ resealed }, 'every sealed secret was resealed under the new MASTER_KEY; MASTER_KEY_PREVIOUS may now be removed');
  if (config.demoSeed) await seedDemo(services, logger);

  const server: Server = createAppServer(app);
  server.keepAliveTimeout = 65_000;
  await listen(server, config.port);
  const metricsServer = config.metricsPort ? createMetricsServer(services.deps.metrics.registry, logger) : undefined; // /metrics alone, no token
  if (metricsServer) await listen(metricsServer, config.metricsPort!);
  const purge = startPurgeJob(services, config.purgeIntervalSeconds);
  const mailOutbox = startMailOutboxJob(services); // durable mail: sends what the outbox holds, on every instance
  const backchannelLogout = startBackchannelLogoutJob(services); // logout tokens to the apps of ended sign-ins, the same way
  logger.info({ version: VERSION, port: config.port, metricsPort: config.metricsPort, issuer: config.baseUrl, database: database.isEmbedded ? 'embedded' : 'postgres' }, 'Latchkey is ready');

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    purge.stop();
    metricsServer?.close();
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    server.close(async () => {
      await mailOutbox.stop(); // mails being sent are recorded before the pool closes
      await backchannelLogout.stop();
      await database.close();
      clearTimeout(force);
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** Resolves once listening; a taken port (or any listen error) rejects, naming the port. */
function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(err.code === 'EADDRINUSE' ? `port ${port} is already in use (EADDRINUSE)` : `cannot listen on port ${port}: ${err.message}`));
    });
    server.listen(port, () => resolve());
  });
}

main().catch((err) => {
  process.stderr.write(`Latchkey failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
