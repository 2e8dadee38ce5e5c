import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { invalidRequest } from '../errors';
import { withoutStatementTimeout, type Db } from '../db';
import { parseBackupHeader, writeBackup } from '../db/backup';
import { restoreBackup, type BackupContents } from '../db/restore';
import { keysOpenBackup } from '../services/master-key.service';
import type { DevSecrets } from '../dev-secrets';
import type { Config } from '../config';
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
 * `developmentSecrets`: the generated secrets of a development deployment, which the file carries.
 */
export async function backupCommand(
  db: Db,
  argv: string[],
  developmentSecrets: DevSecrets,
): Promise<Record<string, unknown>> {
  const out = path.resolve(fileFlag(argv, 'out'));
  if (fs.existsSync(out)) throw invalidRequest(`${out} exists: name a new file`);
  const partial = `${out}.partial`;
  const fd = fs.openSync(partial, 'w', 0o600);
  try {
    const summary = await withoutStatementTimeout(db, (unlimited) =>
      writeBackup(
        unlimited,
        async (chunk) => {
          fs.writeSync(fd, chunk);
        },
        new Date(),
        developmentSecrets,
      ),
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
 * stopped, or an empty Postgres database), migrated to this version. Refused before anything is
 * written when `config`'s MASTER_KEY cannot open what the backup holds sealed.
 */
export async function restoreCommand(
  db: Db,
  argv: string[],
  config: Pick<Config, 'masterKey' | 'masterKeyPrevious'>,
): Promise<Record<string, unknown>> {
  const file = path.resolve(fileFlag(argv, 'in'));
  if (!fs.existsSync(file)) throw invalidRequest(`${file} does not exist`);
  const read = () => readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  const checkKey = (backup: BackupContents) => {
    if (keysOpenBackup(config, backup.sealed)) return;
    const why = backup.developmentSecrets.masterKey
      ? 'it was taken in development and carries the key generated for it, which a restore takes only outside production, without MASTER_KEY set, into a DATA_DIR without a secrets.json of its own'
      : 'set the MASTER_KEY of the deployment it was taken from, or MASTER_KEY_PREVIOUS while rotating';
    throw new Error(
      `MASTER_KEY does not match this backup: it cannot open the values sealed in it (${why}); nothing was restored`,
    );
  };
  const summary = await withoutStatementTimeout(db, (unlimited) => restoreBackup(unlimited, read, checkKey));
  return { restored: file, migrations: summary.migrations, rows: summary.rows, migrated: summary.migrated };
}

/**
 * The generated development secrets FILE carries (`restore --in FILE`), for the new DATA_DIR to
 * take before anything generates others. None when FILE is no backup: restore then says why.
 */
export function carriedSecrets(argv: string[]): DevSecrets {
  try {
    return parseBackupHeader(firstLine(path.resolve(fileFlag(argv, 'in'))))?.developmentSecrets ?? {};
  } catch {
    return {};
  }
}

function firstLine(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const chunks: Buffer[] = [];
    const chunk = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      const end = chunk.subarray(0, n).indexOf(0x0a);
      chunks.push(Buffer.from(chunk.subarray(0, end === -1 ? n : end)));
      if (end !== -1 || n === 0) return Buffer.concat(chunks).toString('utf8');
    }
  } finally {
    fs.closeSync(fd);
  }
}
