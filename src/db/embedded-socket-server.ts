import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { createSessionSwitcher, type SessionGroup } from './embedded-sessions';
import { errorResponse, nextFrontendMessage, queryMessage, ReadyForQueryScanner, SYNC } from './pg-wire';

/** Latchkey's own connections send this application_name (see openDatabase). */
export const APP_NAME = 'latchkey';

interface Connection {
  socket: net.Socket;
  buffer: Buffer;
  started: boolean;
  group?: SessionGroup;
  inbox: Buffer[];
  scanner: ReadyForQueryScanner;
  isClosed: boolean;
  idleTimer?: NodeJS.Timeout;
}

export interface EmbeddedSocketServer {
  stop(): Promise<void>;
}

export interface EmbeddedSocketOptions {
  maxConnections: number;
  /** An outside client idle this long while holding the session (open transaction) is disconnected. */
  holdIdleMs?: number;
}

/**
 * Serves one PGlite — that is, ONE Postgres session — to the clients of a local socket, so that
 * none of them sees another's state (pglite-socket, which this replaces, let
 * `SET search_path = ''` from psql or pg_dump break every query of the provider):
 * - A client holds the session from its first message to the next ReadyForQuery "idle": an
 *   explicit transaction or an extended-protocol batch (Parse … Sync) is never interleaved
 *   with another client's messages, and a client gone mid-way is rolled back.
 * - Settings follow their client: when the session passes to another group, the settings of
 *   the group leaving are saved and reset, those of the group arriving restored. Latchkey's own
 *   connections change no setting and share one group, so they pass the session among
 *   themselves at no cost; every outside client is a group of its own.
 * - An outside client idle while holding the session is disconnected after `holdIdleMs`, so a
 *   forgotten `BEGIN` in psql cannot stall the provider.
 */
export async function serveEmbedded(
  db: PGlite,
  socketPath: string,
  options: EmbeddedSocketOptions,
): Promise<EmbeddedSocketServer> {
  const holdIdleMs = options.holdIdleMs ?? 5_000;
  const appGroup: SessionGroup = { name: APP_NAME, isBaseline: true };
  const sessions = await createSessionSwitcher(db, appGroup);
  const connections = new Set<Connection>();
  const ready: Connection[] = []; // clients with messages, waiting for the session in arrival order
  let holder: Connection | undefined; // mid-transaction or mid-batch: only it may run
  let pumping: Promise<void> | undefined;
  let clientCount = 0;

  const enqueue = (conn: Connection, bytes: Buffer) => {
    conn.inbox.push(bytes);
    clearTimeout(conn.idleTimer);
    if (conn !== holder && !ready.includes(conn)) ready.push(conn);
  };

  function close(conn: Connection) {
    if (conn.isClosed) return;
    conn.isClosed = true;
    conn.inbox = [];
    clearTimeout(conn.idleTimer);
    connections.delete(conn);
    if (conn.group && !conn.group.isBaseline) conn.group.isClosed = true;
    conn.socket.destroy();
    void pump(); // a holder gone away is rolled back there
  }

  function receive(conn: Connection, data: Buffer) {
    conn.buffer = conn.buffer.length ? Buffer.concat([conn.buffer, data]) : data;
    for (
      let next = nextFrontendMessage(conn.buffer, conn.started);
      next;
      next = nextFrontendMessage(conn.buffer, conn.started)
    ) {
      conn.buffer = next.rest;
      const m = next.message;
      if (m.kind === 'encryption-request') conn.socket.write('N');
      else if (m.kind === 'cancel' || m.kind === 'unsupported-startup')
        return close(conn); // PGlite cannot cancel
      else if (m.kind === 'startup') {
        conn.started = true;
        conn.group =
          m.params.get('application_name') === APP_NAME
            ? appGroup
            : { name: `client ${++clientCount}`, isBaseline: false };
        enqueue(conn, m.bytes);
      } else if (m.type === 'X')
        return close(conn); // Terminate
      else enqueue(conn, m.bytes);
    }
    void pump();
  }

  /** Runs one message for `conn` with the session in its group's state; returns nothing, sets `holder`. */
  async function run(conn: Connection, message: Buffer): Promise<void> {
    let status: string | undefined;
    try {
      await sessions.enter(conn.group!);
      await db.runExclusive(() =>
        db.execProtocolRawStream(message, {
          onRawData: (data) => {
            status = conn.scanner.feed(data) ?? status;
            if (!conn.isClosed) conn.socket.write(Buffer.from(data));
          },
        }),
      );
    } catch {
      holder = conn;
      return close(conn);
    }
    holder = status === 'I' ? undefined : conn;
  }

  /** A client gone while holding the session: end its batch and transaction. */
  async function abandon(): Promise<void> {
    holder = undefined;
    try {
      await db.runExclusive(() => db.execProtocolRawStream(SYNC, { onRawData: () => {} }));
      if (db.isInTransaction())
        await db.runExclusive(() => db.execProtocolRawStream(queryMessage('ROLLBACK'), { onRawData: () => {} }));
    } catch {
      // nothing more to do for it
    }
  }

  function guardIdleHolder(conn: Connection) {
    if (conn.group?.isBaseline) return;
    clearTimeout(conn.idleTimer);
    conn.idleTimer = setTimeout(() => {
      if (holder !== conn || conn.inbox.length) return;
      const notice = `terminating connection: idle for ${holdIdleMs} ms while holding the embedded database`;
      conn.socket.write(errorResponse('FATAL', '25P03', notice), () => close(conn));
    }, holdIdleMs);
    conn.idleTimer.unref();
  }

  async function drain(): Promise<void> {
    for (;;) {
      const conn = holder ?? ready.shift();
      if (!conn) return;
      if (conn.isClosed) {
        if (conn === holder) await abandon();
        continue;
      }
      const message = conn.inbox.shift();
      if (!message) {
        if (conn !== holder) continue;
        return guardIdleHolder(conn); // the others wait for this client's next message
      }
      await run(conn, message);
      if (holder !== conn && conn.inbox.length && !ready.includes(conn)) ready.push(conn);
    }
  }

  function pump(): Promise<void> {
    pumping ??= drain().finally(() => {
      pumping = undefined;
      if (holder ? holder.inbox.length || holder.isClosed : ready.length) void pump();
    });
    return pumping;
  }

  const server = net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    if (connections.size >= options.maxConnections) {
      socket.end(errorResponse('FATAL', '53300', 'too many connections to the embedded database'));
      return;
    }
    const conn: Connection = {
      socket,
      buffer: Buffer.alloc(0),
      started: false,
      inbox: [],
      scanner: new ReadyForQueryScanner(),
      isClosed: false,
    };
    connections.add(conn);
    socket.on('data', (data) => receive(conn, data));
    socket.on('close', () => close(conn));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });

  return {
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const conn of [...connections]) close(conn);
      await pumping;
      await closed;
    },
  };
}
