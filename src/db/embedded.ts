import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { openPglite } from './embedded-template';
import { serveEmbedded } from './embedded-socket-server';

/** Where the embedded database listens: pg connects to `${socketDir}/.s.PGSQL.5432`. */
function embeddedSocketDir(dataDir: string): string {
  return path.resolve(dataDir);
}

const socketFile = (dataDir: string) => path.join(embeddedSocketDir(dataDir), '.s.PGSQL.5432');
const lockFile = (dataDir: string) => path.join(path.resolve(dataDir), 'pglite.lock');

export interface EmbeddedServer {
  socketDir: string;
  stop(): Promise<void>;
}

/** True when another process already serves this data directory over its socket. */
export function isEmbeddedServerRunning(dataDir: string): Promise<boolean> {
  const file = socketFile(dataDir);
  if (!fs.existsSync(file)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = net.connect(file);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Opens the PGlite data directory and serves it over the Postgres wire protocol on a
 * local socket, so this process, the admin CLI and psql all use the same `pg` code path.
 * PGlite is single-process: a lock file keeps two processes from opening it at once. The
 * socket server keeps the clients' session state apart (see embedded-socket-server.ts).
 */
export async function startEmbeddedServer(
  dataDir: string,
  maxConnections: number,
  options: { fromTemplate?: boolean } = {},
): Promise<EmbeddedServer> {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(path.join(dir, 'pglite'), { recursive: true });
  takeLock(dataDir);
  try {
    fs.rmSync(socketFile(dataDir), { force: true }); // stale socket of a crashed process
    const db = await openPglite(path.join(dir, 'pglite'), options.fromTemplate ?? true);
    const server = await serveEmbedded(db, socketFile(dataDir), { maxConnections }).catch(async (err) => {
      await db.close();
      throw err;
    });
    return {
      socketDir: embeddedSocketDir(dataDir),
      async stop() {
        await server.stop();
        await db.close();
        fs.rmSync(lockFile(dataDir), { force: true });
      },
    };
  } catch (err) {
    fs.rmSync(lockFile(dataDir), { force: true });
    throw err;
  }
}

function takeLock(dataDir: string): void {
  const file = lockFile(dataDir);
  try {
    fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    return;
  } catch {
    const holder = Number(fs.readFileSync(file, 'utf8'));
    if (holder && holder !== process.pid && isAlive(holder)) {
      throw new Error(`The embedded database in ${path.resolve(dataDir)} is in use by process ${holder}`);
    }
    fs.writeFileSync(file, String(process.pid));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
