import type * as Redis from 'redis';
import type { CounterBackend } from './rate-limit-store';

/** Redis answers within this, or the request goes through unlimited (fail open). */
const COMMAND_TIMEOUT_MS = 1000;
const RECONNECT_EVERY_MS = 2000;

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
 * refused rather than queued while disconnected, so an outage fails open at once; reconnection
 * is attempted on demand, at most every few seconds, so no timer keeps the process alive.
 */
export function createRedisCounters(
  url: string,
  onError: (err: unknown) => void,
  prefix = 'latchkey:rl:',
): CounterBackend {
  // Loaded here, only where REDIS_URL is set: the client library is the largest module of a start without it.
  const { createClient } = require('redis') as typeof Redis;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: COMMAND_TIMEOUT_MS, reconnectStrategy: false },
  });
  client.on('error', onError);
  // No close hook exists for the app: the connection must not keep the process alive.
  client.unref();

  let connecting: Promise<void> | undefined;
  let lastAttempt = 0;
  let closed = false;
  const connect = () => {
    lastAttempt = Date.now();
    connecting = client
      .connect()
      .then(() => undefined, onError)
      .finally(() => {
        connecting = undefined;
      });
  };
  connect(); // at start, so the first requests find it ready
  const ready = async () => {
    if (client.isReady) return;
    if (!closed && !connecting && !client.isOpen && Date.now() - lastAttempt >= RECONNECT_EVERY_MS) connect();
    if (connecting) await within(connecting, COMMAND_TIMEOUT_MS).catch(() => undefined);
  };
  const keyOf = (key: string, windowStart: number) => `${prefix}${key}:${windowStart}`;

  return {
    async hit(key, windowStart, windowMs) {
      await ready();
      const current = keyOf(key, windowStart);
      const replies = await within(
        client
          .multi()
          .incr(current)
          .pExpire(current, 2 * windowMs)
          .get(keyOf(key, windowStart - windowMs))
          .exec(),
        COMMAND_TIMEOUT_MS,
      );
      return { current: Number(replies[0]), previous: Number(replies[2] ?? 0) };
    },
    close() {
      closed = true;
      // Unref'd, the socket never ends by itself: open, it keeps its client, and whatever created it, alive.
      client.destroy();
    },
  };
}
