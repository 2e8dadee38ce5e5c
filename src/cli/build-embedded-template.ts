import { openDatabase, migrateLatest } from '../db';
import { startEmbeddedServer } from '../db/embedded';
import { writeEmbeddedTemplate } from '../db/embedded-template';

/** `node dist/cli/build-embedded-template.js OUT`: run by scripts/build.js after compiling. */
async function main() {
  const out = process.argv[2];
  if (!out) throw new Error('usage: build-embedded-template OUT_FILE');
  await writeEmbeddedTemplate(out, async (dataDir) => {
    const server = await startEmbeddedServer(dataDir, 4, { fromTemplate: false });
    try {
      const database = await openDatabase({ dataDir, poolMax: 1 });
      try {
        await migrateLatest(database.db);
      } finally {
        await database.close();
      }
    } finally {
      await server.stop();
    }
  });
}

main().catch((err) => {
  process.stderr.write(`embedded template: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
