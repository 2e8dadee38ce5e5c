import net from 'node:net';

/** Where the real database listens: TCP host and port, or a unix socket path (embedded). */
export type ProxyTarget = { host: string; port: number } | { path: string };

/**
 * A TCP proxy in front of the database, so a test can take "Postgres" away and bring it back
 * without touching the server every other test uses. `cut()` refuses new connections and kills
 * the open ones mid-query, as a stopped server does; `restore()` listens again on the same port.
 */
export async function startTcpProxy(target: ProxyTarget) {
  const open = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = net.createServer((client) => {
        if (server !== s) {
          client.destroy(); // accepted just before the cut: the database is gone
          return;
        }
        const upstream = net.connect(target as net.NetConnectOpts);
        open.add(client);
        open.add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          open.delete(client);
          open.delete(upstream);
        };
        for (const socket of [client, upstream]) {
          socket.on('error', drop);
          socket.on('close', drop);
        }
        client.pipe(upstream);
        upstream.pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as net.AddressInfo).port;
        server = s;
        resolve();
      });
    });

  await listen();
  return {
    get port() {
      return port;
    },
    /** The database goes away: new connections are refused, open ones die. */
    async cut() {
      const s = server;
      server = undefined;
      const closed = new Promise<void>((resolve) => (s ? s.close(() => resolve()) : resolve()));
      for (const socket of open) socket.destroy();
      open.clear();
      await closed;
    },
    /** The database is back, on the same address. */
    restore: listen,
    close() {
      return this.cut();
    },
  };
}

/** The proxy target and a URL that reaches the database through a proxy on `port`. */
export function proxyPlan(databaseUrl: string): { target: ProxyTarget; urlVia: (port: number) => string } {
  const url = new URL(databaseUrl);
  const socketDir = url.searchParams.get('host');
  if (socketDir) {
    // Embedded: served on a unix socket; the proxy listens on TCP in front of it.
    return {
      target: { path: `${socketDir}/.s.PGSQL.5432` },
      urlVia: (port) => `postgres://${url.username || 'postgres'}@127.0.0.1:${port}${url.pathname}`,
    };
  }
  return {
    target: { host: url.hostname, port: Number(url.port || 5432) },
    urlVia: (port) => {
      const via = new URL(databaseUrl);
      via.hostname = '127.0.0.1';
      via.port = String(port);
      return via.toString();
    },
  };
}
