import path from 'node:path';
import knex, { Knex } from 'knex';
import pg from 'pg';
import { isEmbeddedServerRunning, startEmbeddedServer, EmbeddedServer } from './embedded';
import { createNotifications, type Notifications } from './notifications';

export type Db = Knex;
export type Trx = Knex.Transaction;
/** A repository accepts either the pool or a transaction. */
export type Queryable = Knex | Knex.Transaction;

// bigint counts as numbers, and DATE stays the 'YYYY-MM-DD' string the spec's birthdate is.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1082, (v) => v);

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  poolMax: number;
}

export interface Database {
  db: Db;
  /** A small pg pool of its own for connect-pg-simple (browser sessions). */
  sessionPool: pg.Pool;
  /**
   * LISTEN/NOTIFY on a dedicated connection, opened on first subscription. Absent for the
   * embedded database: pglite-socket does not forward notifications between connections.
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
  let connection: pg.PoolConfig;
  if (options.databaseUrl) {
    connection = { connectionString: options.databaseUrl };
  } else {
    const socketDir = path.resolve(options.dataDir);
    if (!(await isEmbeddedServerRunning(options.dataDir))) {
      embedded = await startEmbeddedServer(options.dataDir, options.poolMax * 2 + 8);
    }
    connection = { host: socketDir, port: 5432, user: 'postgres', database: 'postgres' };
  }
  // A database host that is gone without refusing (no RST) would hang each connect for the OS's
  // TCP timeout, minutes; fail it well within the knex acquire timeout instead (→ 503).
  connection = { ...connection, connectionTimeoutMillis: 5_000 };
  const db = knex({
    client: 'pg',
    connection: connection as Knex.PgConnectionConfig,
    pool: { min: 0, max: options.poolMax, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: 10_000,
    // Connection failures surface as rejected queries (→ 503); knex's own console lines add nothing.
    log: { warn() {}, error() {}, deprecate() {}, debug() {} },
    migrations: { directory: migrationsDirectory(), loadExtensions: ['.js', '.ts'], extension: 'ts' },
  });
  const sessionPool = new pg.Pool({ ...connection, max: Math.max(2, Math.ceil(options.poolMax / 2)) });
  sessionPool.on('error', () => {}); // an idle client lost with the server; the pool replaces it
  const notifications = options.databaseUrl ? createNotifications(connection) : undefined;
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

/** Compiled migrations live in dist/migrations; under ts-node/jest the TypeScript sources are used. */
export function migrationsDirectory(): string {
  const compiled = path.resolve(__dirname, '..', 'migrations');
  return __filename.endsWith('.ts') ? path.resolve(__dirname, '..', '..', 'migrations') : compiled;
}

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = await db.migrate.latest({ directory: migrationsDirectory(), loadExtensions: __filename.endsWith('.ts') ? ['.ts'] : ['.js'] });
  return applied as string[];
}

// Not on PGlite: behind pglite-socket every connection shares one session, where names prepared
// by different connections collide. Known once per pool from the server's version string.
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

