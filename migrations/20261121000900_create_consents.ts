// Remembered consent per user and client; asked again only for scopes not yet granted.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('consents', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('client_id').notNullable().references('clients.id').onDelete('CASCADE');
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'client_id']);
    t.index(['client_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('consents');
}
