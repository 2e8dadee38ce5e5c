// A value sealed under MASTER_KEY at first start: a key that cannot open it is refused at start (DESIGN §13).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('master_key_sentinel', (t) => {
    t.smallint('id').primary();
    t.text('sealed').notNullable();
    t.timestamp('sealed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('ALTER TABLE master_key_sentinel ADD CONSTRAINT master_key_sentinel_one_row CHECK (id = 1)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('master_key_sentinel');
}
