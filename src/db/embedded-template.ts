import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * A migrated, empty embedded database packed at build time (`dist/pglite-template.tgz`): a fresh
 * DATA_DIR starts from it instead of running initdb and every migration (about 4 s and 1.5 s of a
 * first start). Only the compiled app uses it: knex records migrations under their file names, and
 * the TypeScript sources (tests, `tsx`) are named `.ts` where the template says `.js`.
 */
export function embeddedTemplateFile(): string | undefined {
  if (__filename.endsWith('.ts')) return undefined;
  const file = path.resolve(__dirname, '..', 'pglite-template.tgz');
  return fs.existsSync(file) ? file : undefined;
}

/** Opens `dir`: from the template when the directory holds no database yet, else as it is. */
export async function openPglite(dir: string, useTemplate: boolean): Promise<PGlite> {
  const template = useTemplate && !fs.existsSync(path.join(dir, 'PG_VERSION')) ? embeddedTemplateFile() : undefined;
  if (!template) return PGlite.create(dir);
  return PGlite.create({ dataDir: dir, loadDataDir: new Blob([fs.readFileSync(template)]) });
}

/** Packs a freshly migrated embedded database into `outFile` (run by the build). */
export async function writeEmbeddedTemplate(outFile: string, migrate: (dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-template-'));
  try {
    await migrate(dataDir);
    const db = await PGlite.create(path.join(dataDir, 'pglite'));
    try {
      const dump = await db.dumpDataDir('gzip');
      fs.writeFileSync(outFile, Buffer.from(await dump.arrayBuffer()));
    } finally {
      await db.close();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
