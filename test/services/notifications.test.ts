import { createHook } from 'node:async_hooks';
import { createNotifications } from '../../src/db/notifications';

// The LISTEN connection's own timers end with it: an unref'd heartbeat left ticking would keep the
// connection's client, and everything its callbacks reach, alive for the life of the process.
// The embedded database has no LISTEN connection.
const onPostgres = process.env.TEST_DATABASE_KIND === 'embedded' ? it.skip : it;

onPostgres('close() stops the heartbeat of the connection it closes', async () => {
  const live = new Set<number>();
  const hook = createHook({
    init: (id, type) => void (type === 'Timeout' && live.add(id)),
    destroy: (id) => void live.delete(id),
  }).enable();
  const notifications = createNotifications(
    { connectionString: process.env.DATABASE_URL },
    { everyMs: 50, timeoutMs: 1000 },
  );
  try {
    const listening = new Promise<void>((resolve) =>
      notifications.subscribe('notifications_test', { onMessage: () => {}, onListening: (on) => on && resolve() }),
    );
    await listening;
    await new Promise((resolve) => setTimeout(resolve, 120)); // a beat or two
    expect(live.size).toBeGreaterThan(0); // the heartbeat
    await notifications.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(live.size).toBe(0);
  } finally {
    hook.disable();
    await notifications.close();
  }
});
