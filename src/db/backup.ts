import type { Knex } from 'knex';
import type { DevSecrets } from '../dev-secrets';
import type { Db } from './index';

/**
 * `admin backup` / `admin restore`: a logical dump of every table of the app's
 * schema, one consistent snapshot, in a format that does not depend on the database version
 * (an embedded backup loads into Postgres and the other way round).
 *
 * The file is JSON lines. Control lines are arrays, rows are objects, so one never reads as the
 * other: ["latchkey-backup", {version, createdAt, server, migrations, developmentSecrets?}] first; then for each
 * table, in foreign-key order, ["table", name] followed by its rows as `row_to_json` objects;
 * then ["sequence", name, last_value, is_called]; last ["end", {rows}] — a file without it is
 * truncated and is refused. Secrets stay as they are stored: hashes, and values sealed under
 * MASTER_KEY, which must be kept with the backup (and apart from it). The one exception is a
 * development deployment's generated key (DATA_DIR/secrets.json), which the header carries as
 * `developmentSecrets`, so that a restore into a new DATA_DIR works as the README says; an
 * operator's own MASTER_KEY is never written (docs/decisions.md). Restore: src/db/restore.ts.
 */
const FORMAT = 'latchkey-backup';
const VERSION = 1;
export const FETCH_ROWS = 500;
const MIGRATION_TABLES = ['knex_migrations', 'knex_migrations_lock'];

export interface BackupSummary {
  migrations: number;
  rows: Record<string, number>;
}

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** knex records the file name, .ts under tsx/jest and .js compiled: compare without it. */
export const bare = (name: string) => name.replace(/\.(ts|js)$/, '');

/**
 * Writes the backup of `db` through `write` (called with whole lines, newline included).
 * `developmentSecrets`: only secrets generated outside production (dev-secrets.ts), never the environment's.
 */
export async function writeBackup(
  db: Db,
  write: (chunk: string) => Promise<void>,
  now: Date,
  developmentSecrets: DevSecrets = {},
): Promise<BackupSummary> {
  return db.transaction(async (trx) => {
    // One snapshot for every table; on PGlite the transaction also keeps the one session.
    await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await trx.raw("SET LOCAL bytea_output = 'hex'");
    const migrations = (await trx('knex_migrations').orderBy('id').select('name')).map((r: { name: string }) =>
      bare(r.name),
    );
    const server = (await trx.raw('select version() as v')).rows[0].v as string;
    const carried = Object.keys(developmentSecrets).length ? { developmentSecrets } : {};
    await write(
      `${JSON.stringify([FORMAT, { version: VERSION, createdAt: now.toISOString(), server, migrations, ...carried }])}\n`,
    );
    const rows: Record<string, number> = {};
    for (const table of await tablesInLoadOrder(trx)) {
      await write(`${JSON.stringify(['table', table])}\n`);
      rows[table] = 0;
      await trx.raw(`DECLARE backup_rows NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS r FROM ${ident(table)} t`);
      for (;;) {
        const batch = (await trx.raw(`FETCH ${FETCH_ROWS} FROM backup_rows`)).rows as Array<{ r: string }>;
        if (batch.length) await write(`${batch.map((b) => b.r).join('\n')}\n`);
        rows[table] += batch.length;
        if (batch.length < FETCH_ROWS) break;
      }
      await trx.raw('CLOSE backup_rows');
    }
    for (const sequence of await sequencesOf(trx)) {
      const { last_value, is_called } = (await trx.raw(`SELECT last_value::text, is_called FROM ${ident(sequence)}`))
        .rows[0];
      await write(`${JSON.stringify(['sequence', sequence, last_value, is_called])}\n`);
    }
    await write(`${JSON.stringify(['end', { rows }])}\n`);
    return { migrations: migrations.length, rows };
  });
}

/** The header of a backup (its first line), or undefined when the line is not one. */
export function parseBackupHeader(line: string): { migrations: string[]; developmentSecrets: DevSecrets } | undefined {
  const header = parseControl(line);
  if (header?.[0] !== FORMAT || header[1]?.version !== VERSION || !Array.isArray(header[1].migrations))
    return undefined;
  const carried = header[1].developmentSecrets ?? {};
  const developmentSecrets: DevSecrets = {
    ...(typeof carried.masterKey === 'string' ? { masterKey: carried.masterKey } : {}),
    ...(typeof carried.sessionSecret === 'string' ? { sessionSecret: carried.sessionSecret } : {}),
  };
  return { migrations: header[1].migrations.map(String), developmentSecrets };
}

/** A control line (an array), or undefined for anything else. */
export function parseControl(line: string): any[] | undefined {
  try {
    const value = JSON.parse(line);
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The app's tables (current schema), parents before the tables whose foreign keys point at them. */
async function tablesInLoadOrder(trx: Knex.Transaction): Promise<string[]> {
  const tables: string[] = (
    await trx.raw(
      `SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition ORDER BY relname`,
    )
  ).rows
    .map((r: { relname: string }) => r.relname)
    .filter((t: string) => !MIGRATION_TABLES.includes(t));
  const edges: Array<{ child: string; parent: string }> = (
    await trx.raw(
      `SELECT DISTINCT c.relname AS child, p.relname AS parent FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND c.relnamespace = current_schema()::regnamespace AND c.oid <> p.oid`,
    )
  ).rows;
  const ordered: string[] = [];
  const remaining = new Set(tables);
  while (remaining.size) {
    const ready = [...remaining].filter((t) => !edges.some((e) => e.child === t && remaining.has(e.parent)));
    for (const t of ready.length ? ready : [...remaining]) {
      // a cycle: load the rest as they come
      ordered.push(t);
      remaining.delete(t);
    }
  }
  return ordered;
}

async function sequencesOf(trx: Knex.Transaction): Promise<string[]> {
  return (
    await trx.raw(
      `SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'S' ORDER BY relname`,
    )
  ).rows.map((r: { relname: string }) => r.relname);
}
