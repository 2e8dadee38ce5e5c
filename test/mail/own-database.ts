import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { spawn, type ChildProcess } from 'node:child_process';
import { migrateLatest } from '../../src/db';

/**
 * A migrated database of its own, as the run's (global-setup): a new database on the run's
 * Postgres server, or a new embedded PGlite served on a socket by a process of its own. The outbox tests need one: every
 * worker on a database takes any due mail, so theirs must not share a queue with other suites.
 */
export async function ownDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  let url: string;
  let drop: () => Promise<void>;
  if (process.env.TEST_DATABASE_KIND === 'postgres') {
    const server = process.env.TEST_DATABASE_URL!;
    const name = `latchkey_mail_${randomBytes(5).toString('hex')}`;
    const admin = knex({ client: 'pg', connection: server });
    await admin.raw(`CREATE DATABASE ${name}`);
    await admin.destroy();
    const u = new URL(server);
    u.pathname = `/${name}`;
    url = u.toString();
    drop = async () => {
      const a = knex({ client: 'pg', connection: server });
      await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.destroy();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-mail-'));
    const child = await serveEmbedded(dir);
    url = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(dir)}`;
    drop = async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    };
  }
  const db = knex({ client: 'pg', connection: url });
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
  return { url, drop };
}

function serveEmbedded(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'serve-embedded.ts'), dir], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('ready')) resolve(child);
    });
    child.stderr!.on('data', (d) => (out += d));
    child.once('exit', (code) => reject(new Error(`embedded database exited with ${code}: ${out}`)));
  });
}
