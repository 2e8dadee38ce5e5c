import type { Server } from 'node:http';
import { loadConfig, ConfigError } from './config';
import { withDevSecrets } from './dev-secrets';
import { createLogger } from './logger';
import { openDatabase, migrateLatest } from './db';
import { createApp } from './app';
import { seedDemo } from './cli/demo-seed';
import { startPurgeJob } from './jobs/purge.job';

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
  const logger = createLogger(config.logLevel);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: config.dbPoolMax });
  const applied = await migrateLatest(database.db);
  if (applied.length) logger.info({ migrations: applied }, 'database migrated');

  const { app, services } = createApp({ config, db: database.db, sessionPool: database.sessionPool, notifications: database.notifications, logger });
  if (config.demoSeed) await seedDemo(services, logger);
  const purge = startPurgeJob(services, config.purgeIntervalSeconds);

  const server: Server = app.listen(config.port, () => {
    logger.info({ port: config.port, issuer: config.baseUrl, database: database.isEmbedded ? 'embedded' : 'postgres' }, 'Latchkey is ready');
  });
  server.keepAliveTimeout = 65_000;

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    purge.stop();
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    server.close(async () => {
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

main().catch((err) => {
  process.stderr.write(`Latchkey failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
