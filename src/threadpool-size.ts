import { availableParallelism } from 'node:os';

/**
 * libuv's pool (argon2id, WebCrypto, DNS, fs) defaults to 4 threads, and glibc keeps each hashing
 * thread's 19 MiB argon2id block in a malloc arena of its own. On 2 cores, 2 threads hash as fast
 * as 4 (measured: +8–13 % full sign-ins, −13 to −32 MB RSS): so one thread per core, 2 to 4,
 * unless the operator set UV_THREADPOOL_SIZE. Imported first by main.ts: libuv reads the variable
 * when the pool first starts, and nothing may use the pool before.
 */
export function defaultThreadpoolSize(env: NodeJS.ProcessEnv, cores = availableParallelism()): string {
  return env.UV_THREADPOOL_SIZE || String(Math.min(4, Math.max(2, cores)));
}

process.env.UV_THREADPOOL_SIZE = defaultThreadpoolSize(process.env);
