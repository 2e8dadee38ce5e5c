import type { Knex } from 'knex';
import { SEALED_COLUMNS } from '../repositories/sealed-values.repository';
import type { DevSecrets } from '../dev-secrets';
import { migrationSource, type Db } from './index';
import { FETCH_ROWS, bare, ident, parseBackupHeader, parseControl, type BackupSummary } from './backup';

// `admin restore`: the file format is described in src/db/backup.ts.
const BATCH_BYTES = 8 * 1024 * 1024;

/** What a backup holds sealed: its sentinel, or for a backup from before the sentinel, any one sealed value. */
export interface SealedSample {
  sentinel?: string;
  anySealed?: string;
}

/** What a restore learns from the file before it writes anything. */
export interface BackupContents {
  sealed: SealedSample;
  developmentSecrets: DevSecrets;
}

/**
 * Loads a backup into an EMPTY database: reads it through once to check it is whole (nothing is
 * changed for a truncated or damaged file) and lets `beforeWriting` refuse it (a MASTER_KEY that
 * cannot open it). Then, in one transaction, applies the backup's migrations, loads every row,
 * sets the sequences and migrates to this version, so a backup of an older Latchkey restores into
 * a newer one; a failure anywhere rolls all of it back, and the database stays empty for a retry.
 */
export async function restoreBackup(
  db: Db,
  read: () => AsyncIterable<string>,
  beforeWriting: (contents: BackupContents) => void = () => {},
): Promise<BackupSummary & { migrated: string[] }> {
  const summary = await checkBackup(read());
  await assertEmpty(db);
  beforeWriting({ sealed: summary.sealed, developmentSecrets: summary.developmentSecrets });
  const migrated = await db.transaction(async (trx) => {
    try {
      await applyMigrations(trx, summary.migrationNames);
      await loadRows(trx, read());
      const [, applied] = await trx.migrate.latest(migrationSource());
      return applied as string[];
    } catch (err) {
      throw new Error(`nothing was restored: ${databaseReason(err)}`, { cause: err });
    }
  });
  return { migrations: summary.migrationNames.length, rows: summary.rows, migrated };
}

/** The rows and sequences of a checked backup, inserted in batches. */
async function loadRows(trx: Knex.Transaction, lines: AsyncIterable<string>): Promise<void> {
  let table = '';
  let columns = '';
  let batch: string[] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    await trx.raw(
      `INSERT INTO ${ident(table)} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM json_populate_recordset(NULL::${ident(table)}, ?::json)`,
      [`[${batch.join(',')}]`],
    );
    batch = [];
    batchBytes = 0;
  };
  let isHeader = true;
  for await (const line of lines) {
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
}

/** The database's own words, without the statement knex puts in front of them. */
function databaseReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const isDatabaseError = typeof (err as { code?: unknown })?.code === 'string';
  return isDatabaseError && message.includes(' - ') ? message.slice(message.lastIndexOf(' - ') + 3) : message;
}

/**
 * The header's migrations and carried secrets, the row counts and a sample of what is sealed,
 * once the whole file is known to be a complete backup.
 */
async function checkBackup(
  lines: AsyncIterable<string>,
): Promise<{ migrationNames: string[]; rows: Record<string, number> } & BackupContents> {
  let header: ReturnType<typeof parseBackupHeader>;
  let table: string | undefined;
  let ended: Record<string, number> | undefined;
  const rows: Record<string, number> = {};
  const sealed: SealedSample = {};
  for await (const line of lines) {
    if (ended) throw new Error('the backup is damaged: lines after its end marker');
    if (!header) {
      header = parseBackupHeader(line);
      if (!header) throw new Error('not a Latchkey backup (or one of an unknown format version)');
      continue;
    }
    if (line.startsWith('{')) {
      if (!table) throw new Error('the backup is damaged: a row before any table');
      rows[table]++;
      if (table === 'master_key_sentinel' || (sealed.anySealed === undefined && SEALED_TABLES.has(table)))
        sampleSealed(sealed, table, line);
      continue;
    }
    const control = parseControl(line);
    if (control?.[0] === 'table' && typeof control[1] === 'string') rows[(table = control[1])] = 0;
    else if (control?.[0] === 'sequence' && typeof control[1] === 'string') continue;
    else if (control?.[0] === 'end') ended = control[1]?.rows ?? {};
    else throw new Error('the backup is damaged: an unreadable line');
  }
  if (!header) throw new Error('not a Latchkey backup (the file is empty)');
  if (!ended) throw new Error('the backup is truncated (no end marker): nothing was restored');
  const counted = ended;
  const tables = new Set([...Object.keys(counted), ...Object.keys(rows)]);
  if ([...tables].some((t) => counted[t] !== rows[t]))
    throw new Error('the backup is damaged: its row counts do not match its rows');
  return { migrationNames: header.migrations, rows, sealed, developmentSecrets: header.developmentSecrets };
}

const SEALED_TABLES = new Set(SEALED_COLUMNS.map((c) => c.table));

/** Keeps the sentinel, or the first sealed value, of one row line (checkBackup has counted it). */
function sampleSealed(sample: SealedSample, table: string, line: string): void {
  let row: Record<string, unknown>;
  try {
    row = JSON.parse(line);
  } catch {
    throw new Error(`the backup is damaged: an unreadable row of ${table}`);
  }
  if (table === 'master_key_sentinel') {
    if (typeof row.sealed === 'string') sample.sentinel = row.sealed;
    return;
  }
  const value = SEALED_COLUMNS.filter((c) => c.table === table)
    .map((c) => row[c.column])
    .find((v) => typeof v === 'string');
  if (typeof value === 'string') sample.anySealed = value;
}

async function assertEmpty(db: Db | Knex.Transaction): Promise<void> {
  const exists = (await db.raw("SELECT to_regclass('knex_migrations') IS NOT NULL AS e")).rows[0].e;
  if (exists && Number((await db.raw('SELECT count(*) AS n FROM knex_migrations')).rows[0].n) > 0) {
    throw new Error(
      'restore needs an empty database: a fresh DATA_DIR (with the provider stopped) or an empty Postgres database',
    );
  }
}

/** Applies exactly the backup's migrations, in the backup's order: its tables then match its rows. */
async function applyMigrations(db: Knex.Transaction, wanted: string[]): Promise<void> {
  const source = migrationSource();
  const [, pending] = (await db.migrate.list(source)) as [unknown, Array<{ file: string }>];
  const known = new Map(pending.map((m) => [bare(m.file), m.file]));
  const unknown = wanted.filter((name) => !known.has(name));
  if (unknown.length)
    throw new Error(
      `the backup comes from a newer Latchkey (unknown migrations: ${unknown.join(', ')}): restore it with that version`,
    );
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
