// Rate-limit counts are ephemeral (docs/decisions.md, "Ephemeral counters"): UNLOGGED, so a commit
// needs no WAL flush (a crash of Postgres empties the table), and one row per instance, so instances
// never wait on each other's row. The counts of the old table are a minute's worth: dropped.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE rate_limit_counters');
  await knex.raw(`
    CREATE UNLOGGED TABLE rate_limit_counters (
      key text NOT NULL,
      window_start bigint NOT NULL,
      instance_id uuid NOT NULL,
      hits integer NOT NULL DEFAULT 0,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (key, window_start, instance_id)
    )`);
  await knex.raw('CREATE INDEX rate_limit_counters_expires_at_index ON rate_limit_counters (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE rate_limit_counters');
  await knex.schema.createTable('rate_limit_counters', (t) => {
    t.text('key').notNullable();
    t.bigInteger('window_start').notNullable();
    t.integer('hits').notNullable().defaultTo(0);
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['key', 'window_start']);
    t.index(['expires_at']);
  });
}
