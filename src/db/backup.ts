import type { Knex } from 'knex';
import { migrationSource, type Db } from './index';

/**
 * `admin backup` / `admin restore` (DESIGN §13): a logical dump of every table of the app's
 * schema, one consistent snapshot, in a format that does not depend on the database version
 * (an embedded backup loads into Postgres and the other way round).
 *
 * The file is JSON lines. Control lines are arrays, rows are objects, so one never reads as the
 * other: ["latchkey-backup", {version, createdAt, server, migrations}] first; then for each
 * table, in foreign-key order, ["table", name] followed by its rows as `row_to_json` objects;
 * then ["sequence", name, last_value, is_called]; last ["end", {rows}] — a file without it is
 * truncated and is refused. Secrets stay as they are stored: hashes, and values sealed under
 * MASTER_KEY, which must be kept with the backup (and apart from it).
 */
const FORMAT = 'latchkey-backup';
const VERSION = 1;
const FETCH_ROWS = 500;
const BATCH_BYTES = 8 * 1024 * 1024;
const MIGRATION_TABLES = ['knex_migrations', 'knex_migrations_lock'];

export interface BackupSummary {
  migrations: number;
  rows: Record<string, number>;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** knex records the file name, .ts under tsx/jest and .js compiled: compare without it. */
const bare = (name: string) => name.replace(/\.(ts|js)$/, '');

/** Writes the backup of `db` through `write` (called with whole lines, newline included). */
export async function writeBackup(db: Db, write: (chunk: string) => Promise<void>, now: Date): Promise<BackupSummary> {
  return db.transaction(async (trx) => {
    // One snapshot for every table; on PGlite the transaction also keeps the one session.
    await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await trx.raw("SET LOCAL bytea_output = 'hex'");
    const migrations = (await trx('knex_migrations').orderBy('id').select('name')).map((r: { name: string }) => bare(r.name));
    const server = (await trx.raw('select version() as v')).rows[0].v as string;
    await write(`${JSON.stringify([FORMAT, { version: VERSION, createdAt: now.toISOString(), server, migrations }])}\n`);
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
      const { last_value, is_called } = (await trx.raw(`SELECT last_value::text, is_called FROM ${ident(sequence)}`)).rows[0];
      await write(`${JSON.stringify(['sequence', sequence, last_value, is_called])}\n`);
    }
    await write(`${JSON.stringify(['end', { rows }])}\n`);
    return { migrations: migrations.length, rows };
  });
}

/**
 * Loads a backup into an EMPTY database: reads it through once to check it is whole (nothing is
 * changed for a truncated or damaged file), applies the backup's migrations, loads every row in
 * one transaction, then sets the sequences. The caller migrates to the latest version
 * afterwards, so a backup of an older Latchkey restores into a newer one.
 */
export async function restoreBackup(db: Db, read: () => AsyncIterable<string>): Promise<BackupSummary> {
  const summary = await checkBackup(read());
  await assertEmpty(db);
  await applyMigrations(db, summary.migrationNames);
  await db.transaction(async (trx) => {
    let table = '';
    let columns = '';
    let batch: string[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (!batch.length) return;
      await trx.raw(`INSERT INTO ${ident(table)} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM json_populate_recordset(NULL::${ident(table)}, ?::json)`, [`[${batch.join(',')}]`]);
      batch = [];
      batchBytes = 0;
    };
    let isHeader = true;
    for await (const line of read()) {
      if (isHeader) {
        isHeader = false;
        continue;
      }
      if (line.startsWith('{')) {
        batch.push(line);
        batchBytes += line.length;
        if (batch.length >= FETCH_ROWS || batchBytes >= BATCH_BYTES) await flush();
        continue;
      }
      await flush();
      const control = parseControl(line)!;
      if (control[0] === 'table') {
        table = String(control[1]);
        columns = (await insertableColumns(trx, table)).map(ident).join(', ');
      } else if (control[0] === 'sequence') {
        await trx.raw('SELECT setval(?::regclass, ?::bigint, ?)', [ident(String(control[1])), control[2], control[3]]);
      }
    }
  });
  return { migrations: summary.migrationNames.length, rows: summary.rows };
}

/** The header's migrations and the row counts, once the whole file is known to be a complete backup. */
async function checkBackup(lines: AsyncIterable<string>): Promise<{ migrationNames: string[]; rows: Record<string, number> }> {
  let migrationNames: string[] | undefined;
  let table: string | undefined;
  let ended: Record<string, number> | undefined;
  const rows: Record<string, number> = {};
  for await (const line of lines) {
    if (ended) throw new Error('the backup is damaged: lines after its end marker');
    if (!migrationNames) {
      const header = parseControl(line);
      if (header?.[0] !== FORMAT || header[1]?.version !== VERSION || !Array.isArray(header[1].migrations)) {
        throw new Error('not a Latchkey backup (or one of an unknown format version)');
      }
      migrationNames = header[1].migrations.map(String);
      continue;
    }
    if (line.startsWith('{')) {
      if (!table) throw new Error('the backup is damaged: a row before any table');
      rows[table]++;
      continue;
    }
    const control = parseControl(line);
    if (control?.[0] === 'table' && typeof control[1] === 'string') rows[(table = control[1])] = 0;
    else if (control?.[0] === 'sequence' && typeof control[1] === 'string') continue;
    else if (control?.[0] === 'end') ended = control[1]?.rows ?? {};
    else throw new Error('the backup is damaged: an unreadable line');
  }
  if (!migrationNames) throw new Error('not a Latchkey backup (the file is empty)');
  if (!ended) throw new Error('the backup is truncated (no end marker): nothing was restored');
  const counted = ended;
  const tables = new Set([...Object.keys(counted), ...Object.keys(rows)]);
  if ([...tables].some((t) => counted[t] !== rows[t])) throw new Error('the backup is damaged: its row counts do not match its rows');
  return { migrationNames, rows };
}

function parseControl(line: string): any[] | undefined {
  try {
    const value = JSON.parse(line);
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

async function assertEmpty(db: Db): Promise<void> {
  const exists = (await db.raw("SELECT to_regclass('knex_migrations') IS NOT NULL AS e")).rows[0].e;
  if (exists && Number((await db.raw('SELECT count(*) AS n FROM knex_migrations')).rows[0].n) > 0) {
    throw new Error('restore needs an empty database: a fresh DATA_DIR (with the provider stopped) or an empty Postgres database');
  }
}

/** Applies exactly the backup's migrations, in the backup's order: its tables then match its rows. */
async function applyMigrations(db: Db, wanted: string[]): Promise<void> {
  const source = migrationSource();
  const [, pending] = (await db.migrate.list(source)) as [unknown, Array<{ file: string }>];
  const known = new Map(pending.map((m) => [bare(m.file), m.file]));
  const unknown = wanted.filter((name) => !known.has(name));
  if (unknown.length) throw new Error(`the backup comes from a newer Latchkey (unknown migrations: ${unknown.join(', ')}): restore it with that version`);
  for (const name of wanted) await db.migrate.up({ ...source, name: known.get(name) });
}

async function insertableColumns(trx: Knex.Transaction, table: string): Promise<string[]> {
  const { rows } = await trx.raw(
    `SELECT a.attname AS name FROM pg_attribute a
      WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY a.attnum`,
    [ident(table)],
  );
  if (!rows.length) throw new Error(`the backup has a table this database does not: ${table}`);
  return rows.map((r: { name: string }) => r.name);
}

/** The app's tables (current schema), parents before the tables whose foreign keys point at them. */
async function tablesInLoadOrder(trx: Knex.Transaction): Promise<string[]> {
  const tables: string[] = (await trx.raw(
    `SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition ORDER BY relname`,
  )).rows.map((r: { relname: string }) => r.relname).filter((t: string) => !MIGRATION_TABLES.includes(t));
  const edges: Array<{ child: string; parent: string }> = (await trx.raw(
    `SELECT DISTINCT c.relname AS child, p.relname AS parent FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND c.relnamespace = current_schema()::regnamespace AND c.oid <> p.oid`,
  )).rows;
  const ordered: string[] = [];
  const remaining = new Set(tables);
  while (remaining.size) {
    const ready = [...remaining].filter((t) => !edges.some((e) => e.child === t && remaining.has(e.parent)));
    for (const t of ready.length ? ready : [...remaining]) { // a cycle: load the rest as they come
      ordered.push(t);
      remaining.delete(t);
    }
  }
  return ordered;
}

async function sequencesOf(trx: Knex.Transaction): Promise<string[]> {
  return (await trx.raw(`SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'S' ORDER BY relname`)).rows.map(
    (r: { relname: string }) => r.relname,
  );
}
