import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { freePort } from './provider-process';

const BINARY = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => fs.existsSync(p));

export interface PgBouncer {
  /** `serverUrl` with host and port of PgBouncer instead: the same database, through the pooler. */
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Debian's PgBouncer (`apt-get install pgbouncer`, 1.18: no prepared-statement tracking) in
 * transaction pooling mode in front of the Postgres of `serverUrl`, on a free loopback port.
 * Throws when PgBouncer is not installed: a test on Postgres must not pass by skipping.
 */
export async function startPgBouncer(serverUrl: string): Promise<PgBouncer> {
  if (!BINARY) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-pgbouncer-'));
  fs.chmodSync(dir, 0o755); // PgBouncer refuses to run as root: it reads this as `nobody`
  const password = server.password ? ` password=${decodeURIComponent(server.password)}` : '';
  const ini = `[databases]
* = host=${server.hostname} port=${server.port || 5432} user=${user}${password}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${path.join(dir, 'userlist.txt')}
pool_mode = transaction
default_pool_size = 8
max_client_conn = 200
logfile =
`;
  fs.writeFileSync(path.join(dir, 'pgbouncer.ini'), ini, { mode: 0o644 });
  fs.writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  const child = spawn(BINARY, [...(asRoot ? ['-u', runAsUser()] : []), path.join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d).slice(-50_000)));
  child.stderr!.on('data', (d) => (out = (out + d).slice(-50_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort(
    port,
    () => child.exitCode,
    () => out,
  );
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function runAsUser(): string {
  for (const name of ['nobody', 'postgres']) {
    try {
      execFileSync('id', ['-u', name], { stdio: 'ignore' });
      return name;
    } catch {
      // try the next
    }
  }
  throw new Error('no unprivileged user to run pgbouncer as');
}

async function waitForPort(port: number, exitCode: () => number | null, output: () => string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (exitCode() !== null) throw new Error(`pgbouncer exited with ${exitCode()}:\n${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`pgbouncer did not listen on ${port}:\n${output()}`);
}
