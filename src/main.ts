import './threadpool-size'; // first: sets libuv's pool size before anything starts the pool
import type { Server } from 'node:http';
import { createAppServer } from './http/server';
import { trackServer, type TrackedServer } from './http/drain';
import { loadConfig, ConfigError } from './config';
import { withDevSecrets } from './dev-secrets';
import { createLogger, wantsPrettyLogs } from './logger';
import { riskySettings } from './config-warnings';
import { openDatabase, migrateLatest } from './db';
import { createApp } from './app';
import { VERSION } from './version';
import { createMetricsServer } from './http/ops/metrics-server';
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
  const logger = createLogger(config.logLevel, {
    pretty: wantsPrettyLogs(config.logFormat, config.isProduction, Boolean(process.stdout.isTTY)),
  });
  for (const warning of riskySettings(config)) logger.warn(warning);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    listenUrl: config.databaseListenUrl,
    dataDir: config.dataDir,
    poolMax: config.dbPoolMax,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    acquireTimeoutMs: config.dbAcquireTimeoutMs,
  });
  const applied = await migrateLatest(database.db);
  if (applied.length) logger.info({ migrations: applied }, 'database migrated');

  let tracked: TrackedServer | undefined;
  const {
    app,
    services,
    metrics,
    close: closeApp,
  } = createApp({
    config,
    db: database.db,
    sessionPool: database.sessionPool,
    notifications: database.notifications,
    logger,
    isDraining: () => tracked?.isDraining() ?? false,
  });
  const { resealed } = await services.masterKey.verifyAtStart();
  if (resealed)
    logger.info(
      { resealed },
      'every sealed secret was resealed under the new MASTER_KEY; MASTER_KEY_PREVIOUS may now be removed',
    );
  if (config.demoSeed) await seedDemo(services, config, logger);

  const server: Server = createAppServer(app);
  server.keepAliveTimeout = 65_000;
  tracked = trackServer(server);
  await listen(server, config.port);
  const metricsServer = config.metricsPort ? createMetricsServer(metrics.registry, logger) : undefined; // /metrics alone, no token
  if (metricsServer) await listen(metricsServer, config.metricsPort!);
  const purge = startPurgeJob(services, logger, config.purgeIntervalSeconds);
  const mailOutbox = startMailOutboxJob(services, logger); // durable mail: sends what the outbox holds, on every instance
  const backchannelLogout = startBackchannelLogoutJob(services, logger); // logout tokens to the apps of ended sign-ins, the same way
  logger.info(
    {
      version: VERSION,
      port: config.port,
      metricsPort: config.metricsPort,
      issuer: config.baseUrl,
      database: database.isEmbedded ? 'embedded' : 'postgres',
    },
    'Latchkey is ready',
  );

  // Graceful shutdown (docs/decisions.md, "Graceful shutdown"): /readyz turns 503 and the jobs
  // stop taking work at once; in-flight requests finish within SHUTDOWN_GRACE_SECONDS; then the
  // jobs' current work and the pools close.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const draining = tracked!.drain(config.shutdownGraceSeconds * 1000);
    logger.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'shutting down: finishing in-flight requests');
    purge.stop();
    const jobs = Promise.all([mailOutbox.stop(), backchannelLogout.stop()]); // mails being sent are recorded before the pool closes
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    const result = await draining;
    if (result.drained) logger.info({ waitedFor: result.waitedFor, ms: result.ms }, 'every in-flight request answered');
    else
      logger.warn(
        { waitedFor: result.waitedFor, cut: result.cut, ms: result.ms },
        'grace ran out: closed the connections still open',
      );
    try {
      await jobs;
      await services.rateLimitCounters.flush(); // the last moment's rate-limit counts reach the other instances
      closeApp(); // the rate limits' Redis connection, when they count there
      await database.close();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'closing the database failed');
    }
    logger.info('stopped');
    process.exit(result.drained ? 0 : 1);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** Resolves once listening; a taken port (or any listen error) rejects, naming the port. */
function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        new Error(
          err.code === 'EADDRINUSE'
            ? `port ${port} is already in use (EADDRINUSE)`
            : `cannot listen on port ${port}: ${err.message}`,
        ),
      );
    });
    server.listen(port, () => resolve());
  });
}

main().catch((err) => {
  process.stderr.write(`Latchkey failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
