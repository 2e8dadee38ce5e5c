import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { invalidRequest } from '../errors';
import { withoutStatementTimeout, type Db } from '../db';
import { restoreBackup, writeBackup } from '../db/backup';
import { parseFlags } from './args';

/** The one file flag of `backup --out FILE` / `restore --in FILE`. */
function fileFlag(argv: string[], name: string): string {
  const { positionals, flags } = parseFlags(argv);
  if (positionals.length > 1) throw invalidRequest(`unexpected argument "${positionals[1]}"`);
  for (const key of flags.keys()) if (key !== name) throw invalidRequest(`unknown option --${key}`);
  const values = flags.get(name);
  if (!values || values.length !== 1 || values[0] === true) throw invalidRequest(`--${name} FILE is required`);
  return values[0];
}

/**
 * `admin backup --out FILE`: one consistent snapshot (src/db/backup.ts), written to FILE.partial
 * (owner-only: it holds password hashes and sealed secrets) and renamed when complete. Works while
 * the provider runs: on the embedded database through its socket, on Postgres alongside it.
 */
export async function backupCommand(db: Db, argv: string[]): Promise<Record<string, unknown>> {
  const out = path.resolve(fileFlag(argv, 'out'));
  if (fs.existsSync(out)) throw invalidRequest(`${out} exists: name a new file`);
  const partial = `${out}.partial`;
  const fd = fs.openSync(partial, 'w', 0o600);
  try {
    const summary = await withoutStatementTimeout(db, (unlimited) =>
      writeBackup(unlimited, async (chunk) => {
        fs.writeSync(fd, chunk);
      }, new Date()),
    );
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(partial, out);
    return { backup: out, bytes: fs.statSync(out).size, migrations: summary.migrations, rows: summary.rows };
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(partial, { force: true });
    throw err;
  }
}

/**
 * `admin restore --in FILE`: into an empty database only (a fresh DATA_DIR with the provider
 * stopped, or an empty Postgres database); the caller then migrates to this version.
 */
export async function restoreCommand(db: Db, argv: string[]): Promise<Record<string, unknown>> {
  const file = path.resolve(fileFlag(argv, 'in'));
  if (!fs.existsSync(file)) throw invalidRequest(`${file} does not exist`);
  const read = () => readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  const summary = await withoutStatementTimeout(db, (unlimited) => restoreBackup(unlimited, read));
  return { restored: file, migrations: summary.migrations, rows: summary.rows };
}
