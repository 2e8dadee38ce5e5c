import knex from 'knex';
import { migrateLatest } from '../../src/db';
import { TEST_ENV } from '../helpers';
import { freshDatabase } from '../support/fresh-database';
import { startProvider, type ProviderProcess } from '../support/provider-process';

// Instances of a new version starting together on
// one database each run the migrations at start; knex's lock row, taken inside the migration
// transaction, makes them wait for each other, so the migrations run once and every instance
// comes up. The embedded database serves one process: nothing to show there.
const embedded = process.env.TEST_DATABASE_KIND === 'embedded';
if (embedded) console.warn('rolling-upgrade: skipped on the embedded database (run with DATABASE_URL for this test)');

(embedded ? it.skip : it)(
  'starts three instances at once on an empty database: each comes up, each migration runs once',
  async () => {
    const database = await freshDatabase();
    const providers: ProviderProcess[] = [];
    try {
      const env = { ...TEST_ENV, LOG_LEVEL: 'warn', DEMO_SEED: 'false', ...database.env };
      providers.push(...(await Promise.all([startProvider(env), startProvider(env), startProvider(env)])));
      for (const p of providers) expect((await fetch(`${p.url}/readyz`)).status).toBe(200);
      const db = knex({ client: 'pg', connection: database.env.DATABASE_URL });
      try {
        const rows = await db('knex_migrations').select('name');
        expect(rows.length).toBeGreaterThan(10);
        expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
        expect(await db('knex_migrations_lock').select('is_locked')).toEqual([{ is_locked: 0 }]);
      } finally {
        await db.destroy();
      }
    } finally {
      await Promise.all(providers.map((p) => p.stop()));
      await database.drop();
    }
  },
  90_000,
);

(embedded ? it.skip : it)(
  'eight migrators at once on an empty database: knex’s own tables are made once, with one lock row',
  async () => {
    const database = await freshDatabase();
    const pools = Array.from({ length: 8 }, () => knex({ client: 'pg', connection: database.env.DATABASE_URL }));
    try {
      const applied = await Promise.all(pools.map((db) => migrateLatest(db)));
      // Exactly one of them ran the migrations; the others found nothing left to do.
      expect(applied.filter((names) => names.length > 0)).toHaveLength(1);
      expect(await pools[0]('knex_migrations_lock').select('is_locked')).toEqual([{ is_locked: 0 }]);
    } finally {
      await Promise.all(pools.map((db) => db.destroy()));
      await database.drop();
    }
  },
  90_000,
);
