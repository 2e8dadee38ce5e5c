import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';

/** One of the upstream's people: the claims its ID token carries (sub is the account id). */
export interface UpstreamAccountClaims {
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
  picture?: string;
}

export interface UpstreamClient {
  client_id: string;
  /** Absent: a public client (token_endpoint_auth_method none). */
  client_secret?: string;
  redirect_uris: string[];
  /** Default client_secret_basic (RFC 6749 §2.3.1), none without a secret. */
  token_endpoint_auth_method?: 'client_secret_post' | 'client_secret_basic' | 'none';
}

export interface OidcProviderProcess {
  /** The issuer (and base URL): http://127.0.0.1:PORT; discovery at /.well-known/openid-configuration. */
  issuer: string;
  child: ChildProcess;
  /** Adds (or replaces) an account while the process runs. */
  addAccount(id: string, claims: UpstreamAccountClaims): Promise<void>;
  /** What the process printed, for failure messages. */
  output(): string;
  /** Ends the process (SIGTERM, then SIGKILL); resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

const SCRIPT = path.join(__dirname, 'oidc-provider-server.mjs');

/** What a stalled child was doing, from /proc: its state (R running, S sleeping, D waiting on disk, …) and CPU time used. */
function processSnapshot(pid: number | undefined): string {
  try {
    // Fields after the command's closing parenthesis: state is the 1st, utime the 12th, stime the 13th (proc(5)).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return `state ${fields[0]}, CPU ${((Number(fields[11]) + Number(fields[12])) / 100).toFixed(2)} s`;
  } catch {
    return 'no /proc entry';
  }
}

/**
 * The `oidc-provider` package as an upstream identity provider, in a child process of its own
 * (it ships ESM only; jest runs CommonJS), listening on 127.0.0.1 on a port the system picks.
 * Resolves once it listens. Sign-in: its development interactions (see the script).
 */
export async function startOidcProvider(
  options: { clients: UpstreamClient[]; accounts?: Record<string, UpstreamAccountClaims> },
  timeoutMs = 30_000,
): Promise<OidcProviderProcess> {
  const child = spawn(process.execPath, [SCRIPT], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'development',
      OIDC_UPSTREAM_CONFIG: JSON.stringify({ clients: options.clients, accounts: options.accounts ?? {} }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const spawnedAt = Date.now();
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      const snapshot = processSnapshot(child.pid);
      child.kill('SIGKILL');
      reject(
        new Error(
          `oidc-provider did not listen within ${timeoutMs} ms (${Date.now() - spawnedAt} ms since spawn; ${snapshot}; load average ${loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')}):\n${out}`,
        ),
      );
    }, timeoutMs);
    child.stdout!.on('data', (d) => {
      out = (out + d).slice(-20_000);
      const m = /^listening (\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.stderr!.on('data', (d) => (out = (out + d).slice(-20_000)));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`oidc-provider exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    issuer,
    child,
    async addAccount(id, claims) {
      const res = await fetch(`${issuer}/__test/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id, claims }),
      });
      if (res.status !== 204) throw new Error(`adding upstream account ${id}: ${res.status} ${await res.text()}`);
    },
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
