import pg from 'pg';

export interface NotificationHandlers {
  onMessage(payload: string): void;
  /** Called with false whenever notifications may have been missed (connection lost), true once listening again. */
  onListening(isListening: boolean): void;
}

export interface Notifications {
  subscribe(channel: string, handlers: NotificationHandlers): void;
  close(): Promise<void>;
}

/** How often the LISTEN connection proves its server answers, and how long an answer may take. */
const HEARTBEAT = { everyMs: 10_000, timeoutMs: 5_000 };

/**
 * One dedicated LISTEN connection per process, reconnecting with backoff. An idle LISTEN
 * connection to a hung server looks healthy (its kernel still ACKs TCP keepalive), so a
 * heartbeat query proves the server answers; one that does not in time counts as a lost
 * connection: the listeners hear they may have missed notifications, and it reconnects.
 */
export function createNotifications(connection: pg.ClientConfig, heartbeat = HEARTBEAT): Notifications {
  let client: pg.Client | undefined;
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;
  /** The heartbeat of the current connection: lost() clears it, and so must close(). */
  let beat: NodeJS.Timeout | undefined;
  const subscriptions = new Map<string, NotificationHandlers[]>();
  let listening = false;
  /** LISTENs added while listening run one after another: a pg client takes one query at a time. */
  let lastListen: Promise<void> = Promise.resolve();

  const setListening = (value: boolean) => {
    listening = value;
    for (const handlers of subscriptions.values()) handlers.forEach((h) => h.onListening(value));
  };

  async function connect(delayMs = 0): Promise<void> {
    if (closed) return;
    const c = new pg.Client(connection);
    client = c;
    c.on('notification', (msg) => {
      subscriptions.get(msg.channel)?.forEach((h) => h.onMessage(msg.payload ?? ''));
    });
    const lost = () => {
      if (client !== c) return;
      client = undefined;
      clearInterval(beat);
      setListening(false);
      c.end().catch(() => {});
      // A hung server never answers end's goodbye: close the socket rather than keep it.
      (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      if (!closed)
        retryTimer = setTimeout(
          () => void connect(Math.min(Math.max(delayMs * 2, 500), 10_000)),
          Math.max(delayMs, 500),
        ).unref();
    };
    c.on('error', lost);
    c.on('end', lost);
    try {
      await c.connect();
      for (const channel of subscriptions.keys()) await c.query(`LISTEN ${channel}`);
      if (client !== c) return;
      setListening(true);
      beat = setInterval(() => {
        lastListen = lastListen
          .then(() => c.query({ text: 'SELECT 1', query_timeout: heartbeat.timeoutMs } as pg.QueryConfig))
          .then(() => {}, lost);
      }, heartbeat.everyMs);
      beat.unref();
    } catch {
      lost();
    }
  }

  return {
    subscribe(channel, handlers) {
      if (!/^[a-z_]+$/.test(channel)) throw new Error('bad channel name');
      const first = subscriptions.size === 0;
      const known = subscriptions.has(channel);
      subscriptions.set(channel, [...(subscriptions.get(channel) ?? []), handlers]);
      if (first) void connect();
      // A channel already LISTENed on needs no second LISTEN (pg must not get overlapping queries on
      // one client). While connecting, connect() LISTENs every channel and then tells every handler.
      else if (known) {
        if (listening) handlers.onListening(true);
      } else if (client && listening) {
        const c = client;
        lastListen = lastListen
          .then(() => c.query(`LISTEN ${channel}`))
          .then(
            () => handlers.onListening(true),
            () => {},
          );
      }
    },
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      // close() takes the client first, so the 'end' it causes finds `client !== c` in lost(),
      // which then leaves the heartbeat alone: without this it would tick (unref'd) forever.
      clearInterval(beat);
      beat = undefined;
      const c = client;
      client = undefined;
      setListening(false);
      await c?.end().catch(() => {});
    },
  };
}
