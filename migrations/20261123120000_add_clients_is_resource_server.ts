// Introspection answers only for the caller's own tokens unless the caller is registered as a resource server of the platform (issue 10).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.boolean('is_resource_server').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('is_resource_server');
  });
}
