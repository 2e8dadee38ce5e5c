import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './provider-process';

const exec = promisify(execFile);

/** Debian's server binaries (postgresql-NN); the newest installed. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    : [];
  if (!versions.length) throw new Error(`no PostgreSQL server binaries under ${root} (Debian's postgresql package)`);
  return path.join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

/**
 * A Postgres cluster of the test's own, in a temp directory on a free port, so a test can freeze
 * it (SIGSTOP every process of the cluster: a hung server, whose kernel still accepts and ACKs,
 * unlike a stopped one) or restart it without touching the server every other test uses.
 * Postgres refuses to run as root: as root, its commands run as the `postgres` user.
 */
export async function startPrivatePostgres(options: { settings?: Record<string, string> } = {}) {
  const settings = Object.entries(options.settings ?? {})
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join('');
  const bin = binDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (command: string, args: string[]) =>
    asRoot
      ? exec('runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args])
      : exec(path.join(bin, command), args);
  if (asRoot) await exec('chown', ['postgres', dir]);
  await run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const start = async () => {
    await run('pg_ctl', [
      '-D',
      data,
      '-w',
      '-l',
      path.join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${settings}`,
      'start',
    ]);
    return Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  };
  let postmasterPid = await start();
  /** The postmaster and every process it forked (backends, checkpointer, walwriter…). */
  const clusterPids = async () => {
    const { stdout } = await exec('pgrep', ['-P', String(postmasterPid)]).catch(() => ({ stdout: '' }));
    return [postmasterPid, ...stdout.split('\n').filter(Boolean).map(Number)];
  };
  const signal = async (sig: NodeJS.Signals) => {
    for (const pid of await clusterPids()) {
      try {
        process.kill(pid, sig);
      } catch {
        // a process that ended meanwhile
      }
    }
  };
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  /** The cluster's WAL writer: the process that writes asynchronous commits out. */
  const walWriterPid = async () => {
    for (const pid of await clusterPids()) {
      const cmdline = fs.existsSync(`/proc/${pid}/cmdline`) ? fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
      if (cmdline.includes('walwriter')) return pid;
    }
    throw new Error('no walwriter process in the cluster');
  };
  const acceptsConnections = async (timeoutMs: number) => {
    const started = Date.now();
    for (;;) {
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (err) {
        if (Date.now() - started > timeoutMs) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        await client.end().catch(() => {});
      }
    }
  };
  return {
    url,
    /**
     * Stops the WAL writer (SIGSTOP), so an asynchronous commit stays in shared memory until a
     * durable commit flushes the WAL up to its own record, or until crash() loses it.
     */
    pauseWalWriter: async () => process.kill(await walWriterPid(), 'SIGSTOP'),
    /**
     * A server crash: the WAL writer is killed (SIGKILL), the postmaster ends every session and
     * resets shared memory (WAL not yet written is lost), replays the WAL from disk and accepts
     * connections again; resolves once it does.
     */
    async crash() {
      process.kill(await walWriterPid(), 'SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await acceptsConnections(30_000);
    },
    /** Every process of the cluster stops where it is: connections stay open and answer nothing. */
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    /**
     * Stops the server (`fast`: every session is ended with 57P01, its transaction rolled back, and
     * a clean checkpoint written; `immediate`: a crash, no goodbye to clients, WAL replay at the
     * start), keeps it down `downMs`, and starts it again on the same port and data: the URL stays valid.
     */
    async restart({ mode = 'fast', downMs = 0 }: { mode?: 'fast' | 'immediate'; downMs?: number } = {}) {
      await run('pg_ctl', ['-D', data, '-w', '-m', mode, 'stop']);
      if (downMs) await new Promise((resolve) => setTimeout(resolve, downMs));
      postmasterPid = await start();
    },
    async stop() {
      await signal('SIGCONT');
      await run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type PrivatePostgres = Awaited<ReturnType<typeof startPrivatePostgres>>;
