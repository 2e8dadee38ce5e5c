import { loadConfig } from '../config';
import { withDevSecrets } from '../dev-secrets';
import { createLogger } from '../logger';
import { openDatabase, migrateLatest } from '../db';
import { createSealer } from '../crypto/seal';
import { createServices } from '../services';
import { createMetrics } from '../services/metrics';
import { OAuthError } from '../errors';
import { runCommand } from './commands';

/** `npm run --silent admin -- …`: one JSON object on stdout; errors on stderr, exit 1. */
async function main() {
  let database;
  try {
    const config = withDevSecrets(loadConfig(process.env));
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
    await migrateLatest(database.db);
    const services = createServices({
      config,
      db: database.db,
      logger: createLogger('silent'),
      sealer: createSealer(config.masterKey!, config.masterKeyPrevious),
      now: () => new Date(),
      metrics: createMetrics(), // counted, never scraped: the CLI serves no /metrics
    });
    // A wrong MASTER_KEY would seal new secrets under a key the provider cannot open.
    await services.masterKey.verifyAtStart();
    const output = await runCommand(services, process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(output)}\n`);
    process.exitCode = 0;
  } catch (err) {
    const message = err instanceof OAuthError ? err.description : err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    process.exitCode = 1;
  } finally {
    await database?.close();
  }
}

void main();
