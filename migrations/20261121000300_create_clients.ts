// Relying parties of a platform; confidential ones hold a sealed secret (DESIGN §3, §10).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('clients', (t) => {
    t.uuid('id').primary();
    t.uuid('platform_id').notNullable().references('platforms.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('type').notNullable().checkIn(['confidential', 'public']);
    t.specificType('redirect_uris', 'text[]').notNullable();
    t.specificType('post_logout_redirect_uris', 'text[]').notNullable().defaultTo('{}');
    t.specificType('allowed_scopes', 'text[]').notNullable();
    t.text('sealed_secret');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['platform_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('clients');
}
