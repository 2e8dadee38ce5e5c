import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { TEST_ENV } from '../helpers';

const ROOT = path.resolve(__dirname, '..', '..');

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * The environment of a provider process that shares one database with others, as behind a load
 * balancer: one issuer (BASE_URL), the same keys and session secret, quiet logs; `extra` adds or overrides.
 */
export function instanceEnv(databaseUrl: string, dataDir: string, extra: Record<string, string> = {}) {
  return {
    NODE_ENV: 'test',
    DEMO_SEED: 'false',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    BASE_URL: 'http://lb.test',
    MASTER_KEY: TEST_ENV.MASTER_KEY,
    SESSION_SECRET: TEST_ENV.SESSION_SECRET,
    ...extra,
  };
}

export interface ProviderProcess {
  url: string;
  child: ChildProcess;
  /** What the process printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `src/main.ts` as its own process (`node --import tsx`, so no build is needed), the same
 * entry point `npm start` runs compiled, and waits until /readyz answers.
 */
export async function startProvider(env: Record<string, string>, timeoutMs = 60_000): Promise<ProviderProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d).slice(-20_000)));
  child.stderr!.on('data', (d) => (out = (out + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`provider exited with ${child.exitCode}:\n${out}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`provider not ready after ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
