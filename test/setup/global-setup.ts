import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { startEmbeddedServer } from '../../src/db/embedded';
import { migrateLatest } from '../../src/db';

/**
 * One fresh database per run: `latchkey_test_<random>` on the server of DATABASE_URL, or —
 * when DATABASE_URL is unset — a new embedded PGlite served on a socket in a temp dir.
 * Workers reach it through TEST_DATABASE_URL; tests isolate by building their own platforms.
 */
export default async function globalSetup() {
  let url: string;
  if (process.env.DATABASE_URL) {
    const name = `latchkey_test_${randomBytes(6).toString('hex')}`;
    const admin = knex({ client: 'pg', connection: process.env.DATABASE_URL });
    await admin.raw(`CREATE DATABASE ${name}`);
    await admin.destroy();
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = `/${name}`;
    url = u.toString();
    (globalThis as any).__latchkeyDrop = async () => {
      const a = knex({ client: 'pg', connection: process.env.DATABASE_URL });
      await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.destroy();
    };
    process.env.TEST_DATABASE_KIND = 'postgres';
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-test-'));
    const server = await startEmbeddedServer(dir, 64);
    url = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(server.socketDir)}`;
    (globalThis as any).__latchkeyDrop = async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    };
    process.env.TEST_DATABASE_KIND = 'embedded';
  }
  const db = knex({ client: 'pg', connection: url });
  await migrateLatest(db);
  await db.destroy();
  process.env.TEST_DATABASE_URL = url;
  // DATA_DIR of the test apps (the mail outbox), removed by global-teardown.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-test-data-'));
  process.env.TEST_DATA_DIR = dataDir;
  const drop = (globalThis as any).__latchkeyDrop;
  (globalThis as any).__latchkeyDrop = async () => {
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
