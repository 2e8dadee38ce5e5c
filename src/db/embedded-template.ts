import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { PGlite, type Extension } from '@electric-sql/pglite';

// A subpath export, which TypeScript's node10 module resolution (this project's) cannot see.
const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as { pg_trgm: Extension };

/**
 * A migrated, empty embedded database packed at build time (`dist/pglite-template.tgz`): a fresh
 * DATA_DIR starts from it instead of running initdb and every migration (about 4 s and 1.5 s of a
 * first start). Only the compiled app uses it: knex records migrations under their file names, and
 * the TypeScript sources (tests, `tsx`) are named `.ts` where the template says `.js`.
 */
function embeddedTemplateFile(): string | undefined {
  if (__filename.endsWith('.ts')) return undefined;
  const file = path.resolve(__dirname, '..', 'pglite-template.tgz');
  return fs.existsSync(file) ? file : undefined;
}

/**
 * Postgres's default 128 MB of shared buffers is a server's: PGlite allocates and clears them in
 * its WASM memory at every start (about 0.5 s of CPU and 100 MB of RSS measured). The
 * embedded database serves one instance of modest size; the OS page cache still holds its files.
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'];

/**
 * Opens `dir`: from the template when the directory holds no database yet, else as it is. With
 * pg_trgm, which the admin's email search index needs (migration 20261204090000).
 */
export async function openPglite(dir: string, useTemplate: boolean): Promise<PGlite> {
  const template = useTemplate && !fs.existsSync(path.join(dir, 'PG_VERSION')) ? embeddedTemplateFile() : undefined;
  if (template) unpackTemplate(template, dir);
  return PGlite.create({ dataDir: dir, startParams: START_PARAMS, extensions: { pg_trgm } });
}

/**
 * Writes the template's files into `dir` with plain file writes, then PGlite opens it as an existing
 * database. PGlite's own `loadDataDir` unpacks into its WASM file system and copies every file out
 * again, and the build's former `dumpDataDir` was taken from a running database, so each first start
 * also ran crash recovery: 3.2 s against 1.1 s for an existing directory. The files are
 * written beside `dir` and renamed into place, so a start cut short never leaves half a database.
 */
function unpackTemplate(file: string, dir: string): void {
  const staging = `${dir}.template-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  try {
    for (const entry of readTar(zlib.gunzipSync(fs.readFileSync(file)))) {
      const target = path.join(staging, entry.name);
      if (entry.data) fs.writeFileSync(target, entry.data, { mode: 0o600 });
      else fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    }
    if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0)
      fs.cpSync(staging, dir, { recursive: true }); // stray files without a database: written over, as loadDataDir did
    else {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(staging, dir);
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

interface TarEntry {
  name: string;
  data?: Buffer;
}
const BLOCK = 512;

/** The ustar subset the build writes: directories and regular files, names under 100 bytes. */
function* readTar(tar: Buffer): Generator<TarEntry> {
  for (let at = 0; at + BLOCK <= tar.length;) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) return;
    const name = header.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const size = parseInt(header.toString('ascii', 124, 136).replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156]);
    const clean = path.posix.normalize(name.replace(/^\/+/, ''));
    if (!clean || clean === '.' || clean.startsWith('..') || path.isAbsolute(clean))
      throw new Error(`embedded template: bad entry name ${JSON.stringify(name)}`);
    at += BLOCK;
    if (type === '5') yield { name: clean };
    else if (type === '0' || type === '\0') yield { name: clean, data: tar.subarray(at, at + size) };
    else throw new Error(`embedded template: unsupported entry type ${JSON.stringify(type)} for ${name}`);
    at += Math.ceil(size / BLOCK) * BLOCK;
  }
}

/** Directories before their files, in a stable order. */
function listTree(root: string, dir = ''): { name: string; isDir: boolean }[] {
  const out: { name: string; isDir: boolean }[] = [];
  for (const entry of fs
    .readdirSync(path.join(root, dir), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))) {
    const name = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push({ name, isDir: true }, ...listTree(root, name));
    else if (entry.isFile()) out.push({ name, isDir: false });
  }
  return out;
}

function tarHeader(name: string, size: number, isDir: boolean): Buffer {
  if (Buffer.byteLength(name) >= 100)
    throw new Error(`embedded template: name too long for the template's tar: ${name}`);
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 'utf8');
  h.write(isDir ? '0000700\0' : '0000600\0', 100, 'ascii');
  h.write('0000000\0', 108, 'ascii');
  h.write('0000000\0', 116, 'ascii');
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  h.write('00000000000\0', 136, 'ascii'); // mtime 0: the same template builds to the same bytes
  h.write(isDir ? '5' : '0', 156, 'ascii');
  h.write('ustar\0' + '00', 257, 'ascii');
  h.fill(' ', 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** Packs `dir` (a cleanly closed PGlite data directory) as the gzip'ed ustar readTar expects. */
function packDirectory(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const entry of listTree(dir)) {
    const data = entry.isDir ? undefined : fs.readFileSync(path.join(dir, entry.name));
    parts.push(tarHeader(entry.name, data?.length ?? 0, entry.isDir));
    if (data) parts.push(data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return zlib.gzipSync(Buffer.concat(parts), { level: 9 });
}

/**
 * Packs a freshly migrated embedded database into `outFile` (run by the build). `migrate` leaves the
 * database closed, so the template is a clean shutdown: a start from it has nothing to recover.
 */
export async function writeEmbeddedTemplate(
  outFile: string,
  migrate: (dataDir: string) => Promise<void>,
): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-template-'));
  try {
    await migrate(dataDir);
    const pgdata = path.join(dataDir, 'pglite');
    fs.rmSync(path.join(pgdata, 'postmaster.pid'), { force: true });
    fs.writeFileSync(outFile, packDirectory(pgdata));
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
