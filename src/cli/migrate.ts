import { loadConfig } from '../config';
import { openDatabase, migrateLatest } from '../db';

/** `npm run migrate`: applies pending migrations and prints them as JSON. */
async function main() {
  const config = loadConfig(process.env);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    listenUrl: config.databaseListenUrl,
    dataDir: config.dataDir,
    poolMax: 2,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    connectTimeoutMs: config.dbConnectTimeoutMs,
  });
  try {
    const applied = await migrateLatest(database.db);
    process.stdout.write(`${JSON.stringify({ applied })}\n`);
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
