// Child-process helpers: spawn with a registry so everything started is stopped on exit,
// Ctrl-C or error; wait for a "LISTENING"/"READY" line or an HTTP 200; read RSS from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { request } from './http';

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  output: string[]; // last lines of stdout+stderr, for error reports
  exited: Promise<number | null>;
}

const children = new Set<Child>();
const cleanups: (() => Promise<void> | void)[] = [];

export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

export function startChild(
  name: string,
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; ipc?: boolean; quiet?: boolean } = {},
): Child {
  const proc = spawn(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    // An IPC channel lets our own child scripts exit when the harness dies ('disconnect').
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  if (!proc.pid) throw new Error(`could not spawn ${name}`);
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      output.push(line);
      if (output.length > 200) output.shift();
      if (process.env.BENCH_VERBOSE) console.error(`[${name}] ${line}`);
    }
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const child: Child = { name, proc, pid: proc.pid, output, exited };
  children.add(child);
  void exited.then(() => children.delete(child));
  return child;
}

export async function stopChild(child: Child, graceMs = 3000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const t = setTimeout(() => child.proc.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(t);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => stopChild(c)));
  while (cleanups.length) {
    const fn = cleanups.pop()!;
    try {
      await fn();
    } catch (err) {
      console.error('cleanup failed:', (err as Error).message);
    }
  }
}

let exiting = false;
export function installSignalHandlers(): void {
  const bail = (sig: string) => {
    if (exiting) return;
    exiting = true;
    console.error(`\n${sig}: stopping everything the benchmark started…`);
    void stopAll().finally(() => process.exit(130));
  };
  process.on('SIGINT', () => bail('SIGINT'));
  process.on('SIGTERM', () => bail('SIGTERM'));
  process.on('SIGHUP', () => bail('SIGHUP'));
}

/** Resolves with the first stdout line starting with `prefix` (rest of the line). */
export function waitForLine(child: Child, prefix: string, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith(prefix)) {
          done();
          resolve(line.slice(prefix.length).trim());
          return;
        }
      }
    };
    const onExit = () => {
      done();
      reject(new Error(`${child.name} exited before "${prefix}":\n${child.output.slice(-20).join('\n')}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${child.name}: no "${prefix}" within ${timeoutMs} ms:\n${child.output.slice(-20).join('\n')}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      child.proc.stdout!.off('data', onData);
      child.proc.off('exit', onExit);
    };
    child.proc.stdout!.on('data', onData);
    child.proc.on('exit', onExit);
  });
}

/** Polls `url` every `intervalMs` until it answers 200; returns ms since `t0` (performance.now()). */
export async function waitForHttp200(
  child: Child,
  url: string,
  t0: number,
  timeoutMs = 30_000,
  intervalMs = 10,
): Promise<number> {
  const deadline = t0 + timeoutMs;
  let last = '';
  while (performance.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(
        `${child.name} exited (code ${child.proc.exitCode}, signal ${child.proc.signalCode}) before ${url} was ready:\n${child.output.slice(-30).join('\n')}`,
      );
    }
    try {
      const r = await request(url, { timeoutMs: 2000 });
      if (r.status === 200) return performance.now() - t0;
      last = `HTTP ${r.status} ${r.body.slice(0, 200)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(
    `${child.name}: ${url} not 200 within ${timeoutMs} ms (last: ${last}):\n${child.output.slice(-30).join('\n')}`,
  );
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const TICK = 100; // USER_HZ on Linux
/** CPU seconds (user + system) the process has used, from /proc/<pid>/stat, or null if unavailable. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK; // utime, stime
  } catch {
    return null;
  }
}

/** Resident set size in MB from /proc/<pid>/status (VmRSS), or null if unavailable. */
export function rssMB(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}
