// Tenants: every other table hangs off a platform (DESIGN §4).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('platforms', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.jsonb('rate_limit_overrides').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('platforms');
}
