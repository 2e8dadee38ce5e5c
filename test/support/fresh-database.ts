import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knex from 'knex';

export interface FreshDatabase {
  /** Environment for a provider process: its own database and DATA_DIR. */
  env: Record<string, string>;
  dataDir: string;
  drop(): Promise<void>;
}

/**
 * A database of its own for tests that start provider processes on an empty database: a new
 * database on the run's Postgres server, or (embedded runs) a new data directory the process
 * opens itself.
 */
export async function freshDatabase(): Promise<FreshDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-fresh-'));
  if (process.env.TEST_DATABASE_KIND !== 'postgres') {
    return {
      env: { DATA_DIR: dataDir },
      dataDir,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `latchkey_fresh_${randomBytes(5).toString('hex')}`;
  const server = process.env.TEST_DATABASE_URL!;
  const admin = knex({ client: 'pg', connection: server });
  await admin.raw(`CREATE DATABASE ${name}`);
  await admin.destroy();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString(), DATA_DIR: dataDir },
    dataDir,
    async drop() {
      const a = knex({ client: 'pg', connection: server });
      await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
