import path from 'node:path';
import knex, { Knex } from 'knex';
import pg from 'pg';
import type { EmbeddedServer } from './embedded';
import { APP_NAME } from './embedded-socket-server';
import { createNotifications, type Notifications } from './notifications';

export type Db = Knex;
/** A repository accepts either the pool or a transaction. */
export type Queryable = Knex | Knex.Transaction;

// bigint counts as numbers, and DATE stays the 'YYYY-MM-DD' string the spec's birthdate is.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1082, (v) => v);

export interface DatabaseOptions {
  databaseUrl?: string;
  /**
   * A direct server address for the LISTEN connection, when `databaseUrl` goes through a
   * transaction pooler (PgBouncer): LISTEN needs one server session, and the pool then keeps
   * no session state (no named prepared statements).
   */
  listenUrl?: string;
  dataDir: string;
  /** A fresh embedded DATA_DIR starts from the build's migrated template (default); `restore` needs it truly empty. */
  fromTemplate?: boolean;
  poolMax: number;
  /** Longest a statement may run, in ms; 0 for no limit. */
  statementTimeoutMs?: number;
  /** Longest a new connection may take to open, in ms (default 5 s). */
  connectTimeoutMs?: number;
  /** Longest a query waits for a free connection of the pool, in ms (default 10 s). */
  acquireTimeoutMs?: number;
}

export interface Database {
  db: Db;
  /** A small pg pool of its own for connect-pg-simple (browser sessions). */
  sessionPool: pg.Pool;
  /**
   * LISTEN/NOTIFY on a dedicated connection, opened on first subscription. Absent for the
   * embedded database: its socket server does not forward notifications between connections.
   */
  notifications?: Notifications;
  isEmbedded: boolean;
  close(): Promise<void>;
}

/**
 * DATABASE_URL → real Postgres. Otherwise the embedded PGlite under DATA_DIR: served by this
 * process when nobody else serves it, or reached through the socket of the process that does.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  let embedded: EmbeddedServer | undefined;
  let server: pg.ClientConfig;
  if (options.databaseUrl) {
    server = { connectionString: options.databaseUrl };
  } else {
    // PGlite (its module, and its WASM when started) is loaded only here: a Postgres deployment never pays for it.
    const { isEmbeddedServerRunning, startEmbeddedServer } = await import('./embedded');
    const socketDir = path.resolve(options.dataDir);
    if (!(await isEmbeddedServerRunning(options.dataDir))) {
      embedded = await startEmbeddedServer(options.dataDir, options.poolMax * 2 + 8, {
        fromTemplate: options.fromTemplate,
      });
    }
    server = { host: socketDir, port: 5432, user: 'postgres', database: 'postgres' };
  }
  const pooled = Boolean(options.databaseUrl && options.listenUrl);
  const bounds = {
    statementTimeoutMs: options.statementTimeoutMs ?? 15_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
  };
  const connection = connectionSettings(server, { ...bounds, serverSide: Boolean(options.databaseUrl) && !pooled });
  const db = knex({
    client: 'pg',
    connection: connection as Knex.PgConnectionConfig,
    pool: { min: 0, max: options.poolMax, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: options.acquireTimeoutMs ?? 10_000,
    // Connection failures surface as rejected queries (→ 503); knex's own console lines add nothing.
    log: { warn() {}, error() {}, deprecate() {}, debug() {} },
    migrations: { directory: migrationsDirectory(), loadExtensions: ['.js', '.ts'], extension: 'ts' },
  });
  if (pooled || !options.databaseUrl) namedStatements.set(db, Promise.resolve(false));
  const sessionPool = new pg.Pool({ ...connection, max: Math.max(2, Math.ceil(options.poolMax / 2)) });
  sessionPool.on('error', () => {}); // an idle client lost with the server; the pool replaces it
  const listenConnection = options.listenUrl
    ? connectionSettings({ connectionString: options.listenUrl }, { ...bounds, serverSide: true })
    : connection;
  const notifications = options.databaseUrl ? createNotifications(listenConnection) : undefined;
  return {
    db,
    sessionPool,
    notifications,
    isEmbedded: !options.databaseUrl,
    async close() {
      await notifications?.close();
      await sessionPool.end();
      await db.destroy();
      await embedded?.stop();
    },
  };
}

/** How long past the server's own statement timeout the client waits before it gives up on a hung server. */
const HUNG_SERVER_MARGIN_MS = 1_000;

/**
 * What every connection gets (docs/decisions.md, "Every database wait is bounded"), the pool's,
 * the session pool's and LISTEN's alike:
 * - a connect timeout (DB_CONNECT_TIMEOUT_MS): a host gone without refusing (no RST) would
 *   otherwise hang each connect for the OS's TCP timeout, minutes (→ 503);
 * - TCP keepalive, so a connection whose server vanished is found dead instead of waited on;
 * - a statement timeout: Postgres's own `statement_timeout` when the connection is a server
 *   session; through PgBouncer (which refuses that startup parameter) and on PGlite (which has
 *   no timer to cancel with) only the client-side one;
 * - a client-side query timeout everywhere: a hung server (stopped, swapped out, a frozen VM)
 *   never fires its own timer, and its kernel still ACKs, so TCP keepalive sees nothing. On a
 *   server session it is the statement timeout plus HUNG_SERVER_MARGIN_MS, so the server's
 *   cleaner cancel comes first whenever the server is alive. The query fails (→ 503); the
 *   connection stays busy with it until the server answers or the connection is lost;
 * - application_name 'latchkey': it shows in pg_stat_activity, and the embedded socket server
 *   knows Latchkey's own connections by it (they share the baseline session settings).
 */
function connectionSettings(
  server: pg.ClientConfig,
  o: { statementTimeoutMs: number; connectTimeoutMs: number; serverSide: boolean },
): pg.ClientConfig {
  const timeout = o.statementTimeoutMs > 0 ? o.statementTimeoutMs : undefined;
  return {
    ...server,
    application_name: APP_NAME,
    connectionTimeoutMillis: o.connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(timeout && o.serverSide ? { statement_timeout: timeout, query_timeout: timeout + HUNG_SERVER_MARGIN_MS } : {}),
    ...(timeout && !o.serverSide ? { query_timeout: timeout } : {}),
  };
}

/** Compiled migrations live in dist/migrations; under ts-node/jest the TypeScript sources are used. */
function migrationsDirectory(): string {
  const compiled = path.resolve(__dirname, '..', 'migrations');
  return __filename.endsWith('.ts') ? path.resolve(__dirname, '..', '..', 'migrations') : compiled;
}

/** Where knex finds the migrations of this build (compiled .js, or the .ts sources under ts-node/jest). */
export const migrationSource = () => ({
  directory: migrationsDirectory(),
  loadExtensions: __filename.endsWith('.ts') ? ['.ts'] : ['.js'],
});

/** Applies pending migrations, without the statement timeout: an index build may take longer. */
export async function migrateLatest(db: Db): Promise<string[]> {
  return withoutStatementTimeout(db, async (unlimited) => {
    await ensureMigrationTables(unlimited);
    const [, applied] = await unlimited.migrate.latest(migrationSource());
    return applied as string[];
  });
}

/** Any fixed key: the advisory lock below is taken only by ensureMigrationTables. */
const MIGRATION_TABLES_LOCK = 0x4c4b4d54; // "LKMT"

/**
 * knex creates its bookkeeping tables (and the lock table's one row) by check-then-create before
 * its own migration lock exists, so instances starting together on an empty database collide
 * ("type knex_migrations already exists", or two lock rows that lock nobody out forever). The
 * same tables, created here one instance at a time under a transaction-scoped advisory lock —
 * released at commit, so it is safe through a transaction pooler, unlike a session lock
 * (docs/decisions.md, "Starting several instances at once").
 */
async function ensureMigrationTables(db: Db): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [MIGRATION_TABLES_LOCK]);
    if (!(await trx.schema.hasTable('knex_migrations'))) {
      await trx.schema.createTable('knex_migrations', (t) => {
        t.increments();
        t.string('name');
        t.integer('batch');
        t.timestamp('migration_time');
      });
    }
    if (!(await trx.schema.hasTable('knex_migrations_lock'))) {
      await trx.schema.createTable('knex_migrations_lock', (t) => {
        t.increments('index').primary();
        t.integer('is_locked');
      });
    }
    const [row] = await trx('knex_migrations_lock').select('index').limit(1);
    if (!row) await trx('knex_migrations_lock').insert({ is_locked: 0 });
  });
}

/**
 * Runs `work` on a one-connection sibling of `db` without statement timeout, for the long jobs
 * of operators (migrations, backup, restore) that the per-request limit must not cut short.
 */
export async function withoutStatementTimeout<T>(db: Db, work: (unlimited: Db) => Promise<T>): Promise<T> {
  const config = db.client.config as Knex.Config;
  const given = config.connection as string | pg.ClientConfig;
  const connection = typeof given === 'string' ? { connectionString: given } : given;
  const unlimited = knex({
    ...config,
    connection: { ...connection, statement_timeout: 0, query_timeout: 0 } as Knex.PgConnectionConfig,
    pool: { min: 0, max: 1 },
  });
  try {
    return await work(unlimited);
  } finally {
    await unlimited.destroy();
  }
}

// Not on PGlite: all connections share its one session, where names prepared by different
// connections collide; not through a transaction pooler (PgBouncer before 1.21 does not track
// them): both are set by openDatabase. Otherwise known once per pool from the server's version.
const namedStatements = new WeakMap<Db, Promise<boolean>>();

/**
 * A named prepared statement on a pooled connection, bypassing knex's query formatting: for
 * the hot grant statements, Postgres parses and plans them once per connection.
 */
export async function preparedQuery<T = any>(db: Db, name: string, text: string, values: unknown[]): Promise<T[]> {
  let named = namedStatements.get(db);
  if (!named) {
    named = db.raw('select version() as v').then((r) => !String(r.rows[0]?.v).includes('PGlite'));
    named.catch(() => namedStatements.delete(db));
    namedStatements.set(db, named);
  }
  const useName = await named;
  const connection = (await db.client.acquireConnection()) as pg.PoolClient;
  try {
    const result = await connection.query(useName ? { name, text, values } : { text, values });
    return result.rows as T[];
  } finally {
    await db.client.releaseConnection(connection);
  }
}
