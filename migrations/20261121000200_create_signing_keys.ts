// HS512 platform keys, sealed at rest; retired keys still verify (DESIGN §5).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('signing_keys', (t) => {
    t.text('kid').primary();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.text('sealed_secret').notNullable();
    t.text('status').notNullable().checkIn(['active', 'retired']);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('retired_at', { useTz: true });
    t.index(['platform_id', 'status']);
  });
  // One active key per platform, enforced by the database.
  await knex.raw(`CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (platform_id) WHERE status = 'active'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('signing_keys');
}
