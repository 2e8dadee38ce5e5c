import { createClient } from 'redis';
import type { CounterBackend } from './rate-limit-store';

/** Redis answers within this, or the request goes through unlimited (fail open). */
const COMMAND_TIMEOUT_MS = 1000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Counters as Redis keys `<prefix><key>:<windowStart>`, each living two windows. INCR, PEXPIRE
 * and the GET of the previous window run as one MULTI, so instances count jointly. Commands are
 * refused rather than queued while disconnected, so an outage fails open at once.
 */
export function createRedisCounters(url: string, onError: (err: unknown) => void, prefix = 'latchkey:rl:'): CounterBackend {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5000) },
  });
  client.on('error', onError);
  // No close hook exists for the app: the connection must not keep the process alive.
  client.unref();
  // The first requests wait (briefly) for the first connection instead of failing open.
  let starting: Promise<unknown> | undefined = client.connect().catch(onError);

  const keyOf = (key: string, windowStart: number) => `${prefix}${key}:${windowStart}`;
  const connected = async () => {
    if (starting) {
      await within(starting, COMMAND_TIMEOUT_MS).catch(() => undefined);
      starting = undefined;
    }
  };

  return {
    async hit(key, windowStart, windowMs) {
      await connected();
      const current = keyOf(key, windowStart);
      const replies = await within(
        client.multi().incr(current).pExpire(current, 2 * windowMs).get(keyOf(key, windowStart - windowMs)).exec(),
        COMMAND_TIMEOUT_MS,
      );
      return { current: Number(replies[0]), previous: Number(replies[2] ?? 0) };
    },
    async unhit(key, windowStart) {
      await connected();
      await within(client.decr(keyOf(key, windowStart)), COMMAND_TIMEOUT_MS);
    },
    async forget(key, windowStart, windowMs) {
      await connected();
      await within(client.del([keyOf(key, windowStart), keyOf(key, windowStart - windowMs)]), COMMAND_TIMEOUT_MS);
    },
  };
}
