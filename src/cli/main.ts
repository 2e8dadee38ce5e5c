import { loadConfig } from '../config';
import { generatedSecrets, withDevSecrets } from '../dev-secrets';
import { createLogger } from '../logger';
import { openDatabase, migrateLatest } from '../db';
import { createSealer } from '../crypto/seal';
import { createServices } from '../services';
import { createMetrics } from '../services/metrics';
import { OAuthError } from '../errors';
import { helpRequest, helpText, runCommand } from './commands';
import { backupCommand, carriedSecrets, restoreCommand } from './database-commands';

/** `npm run --silent admin -- …`: one JSON object on stdout; errors on stderr, exit 1; `--help` at every level, exit 0. */
async function main() {
  let database;
  try {
    // Help never needs the database: it answers at once, even with the provider down or unconfigured.
    const help = helpRequest(process.argv.slice(2));
    if (help) {
      process.stdout.write(`${helpText(help.words)}\n`);
      process.exitCode = 0;
      return;
    }
    const argv = process.argv.slice(2);
    const fromEnvironment = loadConfig(process.env);
    // Development: a backup carries the generated secrets, and a new DATA_DIR takes them rather than new ones (docs/decisions.md).
    const config = withDevSecrets(fromEnvironment, argv[0] === 'restore' ? carriedSecrets(argv) : {});
    database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolMax: 2,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      fromTemplate: argv[0] !== 'restore',
    });
    if (argv[0] === 'backup') {
      // The database as it is, not migrated first: a backup taken before an upgrade is of the old version.
      process.stdout.write(
        `${JSON.stringify(await backupCommand(database.db, argv, generatedSecrets(fromEnvironment, config)))}\n`,
      );
      return;
    }
    // restore migrates to this version itself, in its one transaction.
    const restored = argv[0] === 'restore' ? await restoreCommand(database.db, argv, config) : undefined;
    if (!restored) await migrateLatest(database.db);
    const services = createServices({
      config,
      db: database.db,
      logger: createLogger('silent'),
      sealer: createSealer(config.masterKey!, config.masterKeyPrevious),
      now: () => new Date(),
      metrics: createMetrics(), // counted, never scraped: the CLI serves no /metrics
    });
    // A wrong MASTER_KEY would seal new secrets under a key the provider cannot open.
    await services.masterKey.verifyAtStart().catch((err: Error) => {
      throw restored ? new Error(`the backup is restored, but ${err.message}`) : err;
    });
    const output = restored ?? (await runCommand(services, argv));
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
